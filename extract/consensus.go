package extract

import (
	"hash/maphash"
	"net/url"
	"strings"

	"github.com/go-shiori/dom"
	"github.com/go-shiori/go-readability"
	distiller "github.com/markusmobius/go-domdistiller"
	trafilatura "github.com/markusmobius/go-trafilatura"
	nethtml "golang.org/x/net/html"
)

// The body comes from a vote of three independent extractors rather than from
// go-trafilatura alone (issue 13). go-trafilatura, go-readability and DOM Distiller
// fail differently: each one sometimes takes a sidebar, a comment thread or a list of
// teasers for the article, but rarely the same wrong block as another. So when
// go-trafilatura and Readability disagree about the text, the extractor whose text the
// other two share most is the one that found the article. Measured on the Dragnet
// pages (the set tuned on) go-trafilatura's body was the odd one out on 128 pages where
// it and Readability agreed on less than 0.7 of their shingles: mean F1 0.52 there,
// Readability 0.77, DOM Distiller 0.76.
//
// agreeThreshold is the shingle F1 between go-trafilatura's and Readability's texts
// above which go-trafilatura's body is kept without asking DOM Distiller: the two agree,
// so a third opinion changes little. Chosen on Dragnet, where the gain of the vote was
// flat from 0.9 upwards (F1 0.9050 at 0.9, 0.9058 when every page is voted on) while
// the share of pages that pay for DOM Distiller grew from 25 % to 100 %.
const agreeThreshold = 0.9

// bodyCandidate is one extractor's body.
type bodyCandidate struct {
	from   string
	blocks []Block
	sh     shingleSet
}

// consensusBody runs go-trafilatura with Readability's result as its fallback candidate
// (so that Readability runs once), and, when the two disagree, DOM Distiller, and
// returns the body the extractors agree on most. doc must be free of hidden elements.
// It returns nil blocks when no extractor found text.
func (e *Extractor) consensusBody(doc *nethtml.Node, base *url.URL) ([]Block, string) {
	opts := e.trafilaturaOptions(base)
	var rd bodyCandidate
	if !e.opts.NoFallback {
		// ParseDocument clones the document; go-trafilatura may later rewrite the node
		// it returns, so its blocks are taken now.
		if art, err := readability.FromDocument(doc, base); err == nil && art.Node != nil {
			rd = bodyCandidate{from: "readability", blocks: blocks(art.Node, nil)}
			opts.FallbackCandidates = &trafilatura.FallbackCandidates{Readability: art.Node}
		}
	}
	tr := bodyCandidate{from: "trafilatura"}
	if res, err := trafilatura.ExtractDocument(doc, opts); err == nil && res != nil && res.ContentNode != nil {
		tr.blocks = blocks(res.ContentNode, nil)
	}
	if e.opts.NoFallback {
		return tr.blocks, tr.from
	}
	tr.sh, rd.sh = newShingleSet(tr.blocks), newShingleSet(rd.blocks)
	// go-trafilatura keeps the body it found with the comments in the page (its output is
	// what the vote keeps when the others agree, so it is left as it is). Readability and
	// DOM Distiller know nothing of comments: when the page has a thread, DOM Distiller
	// reads the page without it, and so does Readability, again, if its first body holds
	// text of the thread (if it does not, a second reading would find the same body).
	// Under a short post with a long thread, go-trafilatura and Readability took the
	// thread for text they agreed on, and the post lost to the thread. Readability's first
	// result stays go-trafilatura's fallback.
	if sections, thread := readersThread(doc); sections != nil {
		restore := detach(doc, func(n *nethtml.Node) bool { return sections[n] })
		defer restore()
		if sharedShingles(rd.sh, thread) >= minThreadShared {
			rd = bodyCandidate{from: "readability"}
			if art, err := readability.FromDocument(doc, base); err == nil && art.Node != nil {
				rd.blocks = blocks(art.Node, nil)
			}
			rd.sh = newShingleSet(rd.blocks)
		}
	}
	if agreement(tr.sh, rd.sh) >= agreeThreshold {
		return withDroppedProse(tr, rd), tr.from
	}
	if once, ok := lessRepeated(tr, rd); ok {
		return once.blocks, once.from
	}
	di := bodyCandidate{from: "distiller"}
	if res, err := distiller.Apply(dom.Clone(doc, true), &distiller.Options{OriginalURL: base, SkipPagination: true}); err == nil && res != nil && res.Node != nil {
		di.blocks = blocks(res.Node, nil)
	}
	di.sh = newShingleSet(di.blocks)
	best := medoid([]bodyCandidate{tr, rd, di})
	return best.blocks, best.from
}

// droppedProseWords is the length from which a paragraph that go-trafilatura left out of
// a body Readability agrees with is put back (see withDroppedProse), and
// droppedProseKnown the share of its shingles go-trafilatura's body may already hold (a
// paragraph it kept cut differently is not dropped).
const (
	droppedProseWords = 30
	droppedProseKnown = 0.5
)

// withDroppedProse is go-trafilatura's body kept by the vote with the long paragraphs it
// dropped from the middle of the article put back: the paragraphs of droppedProseWords
// words or more that Readability's body holds between two blocks both bodies hold, and
// that go-trafilatura's does not (it holds at most droppedProseKnown of their shingles).
// go-trafilatura sometimes leaves out a paragraph of the article's prose (one with inline
// markup or links it judges as boilerplate), which Readability keeps in place. Shorter
// blocks there are mostly photo captions, video and tweet embeds, which Dragnet's gold
// leaves out. On Dragnet (the set tuned on) it changes 18 pages, 14 for the better (R182
// +0.09, R197 +0.09), 3 for the worse (long photo captions); Readability (held out)
// 8 pages, 6 better, none worse.
func withDroppedProse(tr, rd bodyCandidate) []Block {
	at := make(map[string]int, len(tr.blocks))
	for i, b := range tr.blocks {
		if _, ok := at[b.Text]; !ok {
			at[b.Text] = i
		}
	}
	last := -1
	for i, b := range rd.blocks {
		if _, ok := at[b.Text]; ok {
			last = i
		}
	}
	insert := map[int][]Block{}
	prev := -1 // the go-trafilatura block the last shared block of Readability's is
	for i, b := range rd.blocks {
		if j, ok := at[b.Text]; ok {
			prev = j
			continue
		}
		if prev < 0 || i > last || countWords(b.Text) < droppedProseWords {
			continue
		}
		sh := newShingleSet([]Block{b})
		if float64(sharedShingles(sh, tr.sh)) > droppedProseKnown*float64(sh.total) {
			continue
		}
		insert[prev] = append(insert[prev], b)
	}
	if len(insert) == 0 {
		return tr.blocks
	}
	out := make([]Block, 0, len(tr.blocks)+len(insert))
	for i, b := range tr.blocks {
		out = append(out, b)
		out = append(out, insert[i]...)
	}
	return out
}

// minCommentWords is how many words a page's comment sections must hold to count as a
// thread (a comment count or an empty form is not one), and minThreadShared how many of
// the thread's shingles Readability's body must hold (a sentence or two) before
// Readability reads the page again without it. The second only saves work: on Dragnet
// (the set tuned on) Readability ran again on 481 pages when any thread of 50 words
// was enough, on 88 when its body must hold some of it, with the same F1 (0.9144 both;
// Readability's pages: one rerun, no change).
const (
	minCommentWords = 50
	minThreadShared = 25
)

// readersThread returns the page's comment sections (commentSection, outermost ones) and
// the shingles of their text, when they hold minCommentWords words or more; otherwise
// nothing.
func readersThread(doc *nethtml.Node) (map[*nethtml.Node]bool, shingleSet) {
	var sections []*nethtml.Node
	words := 0
	eachElement(doc, func(n *nethtml.Node) bool {
		if commentSection(n) {
			sections = append(sections, n)
			words += countWords(nodeText(n))
			return false
		}
		return true
	})
	if words < minCommentWords {
		return nil, shingleSet{}
	}
	set := make(map[*nethtml.Node]bool, len(sections))
	var bs []Block
	for _, n := range sections {
		set[n] = true
		bs = append(bs, blocks(n, nil)...)
	}
	return set, newShingleSet(bs)
}

// repeatRatio is how many more times one extractor must hold the text two extractors
// share than the other before the vote calls it repeated (1.3: a third of it again).
const repeatRatio = 1.3

// lessRepeated settles the vote between two extractors that found the same text (the
// distinct shingles agree at agreeThreshold or more) when one of them holds it clearly
// more often than the other (repeatRatio): that one took the article twice (a teaser or
// summary beside the full text, a print copy, a list its markup repeats), and the other
// is the body. The vote by counted shingles cannot see this: a second extractor that
// doubles the text the same way outvotes the one that did not (on Dragnet, seven pages
// where go-readability and DOM Distiller both held an article twice, F1 0.64 each, 0.94
// with go-trafilatura's single copy). ok is false when the texts differ or neither
// repeats more.
func lessRepeated(a, b bodyCandidate) (once bodyCandidate, ok bool) {
	if a.sh.total == 0 || b.sh.total == 0 || distinctAgreement(a.sh, b.sh) < agreeThreshold {
		return bodyCandidate{}, false
	}
	switch {
	case float64(a.sh.total) >= repeatRatio*float64(b.sh.total):
		return b, true
	case float64(b.sh.total) >= repeatRatio*float64(a.sh.total):
		return a, true
	}
	return bodyCandidate{}, false
}

// minVoteShingles is the least text (in shingles) an extractor's body must hold to take
// part in the vote: an empty body, or one of a single shingle (four words or fewer: a
// dateline, "Permalink"), holds no text to agree about. Counted as a voter, two empty
// bodies agreed fully (agreement 1), and a one-shingle body that happened to lie in one
// of two long ones tipped a tie between them: on Dragnet's R44 DOM Distiller returned
// "October 17, 2012 | Permalink", which Readability's body held and go-trafilatura's
// did not, and Readability's body (F1 0.74, with the blog's trackback block) won over
// go-trafilatura's (0.96). Any minimum from 2 to 4 shingles changes that page only on
// Dragnet (the set tuned on); 10 changes one more for the worse.
const minVoteShingles = 2

// medoid is the candidate whose text agrees most with the others' (the first on a tie,
// so go-trafilatura, the better extractor alone, wins ties). Candidates with less than
// minVoteShingles abstain: they neither vote nor win, unless every candidate is that
// small (then the first).
func medoid(cs []bodyCandidate) bodyCandidate {
	best, bestScore := 0, -1.0
	for i := range cs {
		if cs[i].sh.total < minVoteShingles {
			continue
		}
		score := 0.0
		for j := range cs {
			if i != j && cs[j].sh.total >= minVoteShingles {
				score += agreement(cs[i].sh, cs[j].sh)
			}
		}
		if score > bestScore+1e-9 {
			best, bestScore = i, score
		}
	}
	return cs[best]
}

// trafilaturaOptions are the options the cascade runs go-trafilatura with: comments
// excluded, date search off (the cascade reads dates itself).
func (e *Extractor) trafilaturaOptions(base *url.URL) trafilatura.Options {
	return trafilatura.Options{
		OriginalURL:     base,
		EnableFallback:  !e.opts.NoFallback,
		ExcludeComments: true,
		HtmlDateMode:    trafilatura.Disabled,
	}
}

// shingleSet is the multiset of a text's 4-word shingles (hashed), the unit the
// evaluation scores bodies in (extract/exteval): two extractors agree as much as their
// outputs would score against each other.
type shingleSet struct {
	counts map[uint64]int
	total  int
}

const shingleWords = 4

var shingleSeed = maphash.MakeSeed()

func newShingleSet(bs []Block) shingleSet {
	var words []string
	for _, b := range bs {
		words = appendWords(words, b.Text)
	}
	s := shingleSet{counts: make(map[uint64]int, len(words))}
	add := func(ws []string) {
		var h maphash.Hash
		h.SetSeed(shingleSeed)
		for _, w := range ws {
			h.WriteString(w)
			h.WriteByte(0)
		}
		s.counts[h.Sum64()]++
		s.total++
	}
	switch {
	case len(words) == 0:
	case len(words) < shingleWords:
		add(words)
	default:
		for i := 0; i+shingleWords <= len(words); i++ {
			add(words[i : i+shingleWords])
		}
	}
	return s
}

// Words splits text into its lowercased \w+ tokens (Unicode letters, numbers and
// underscore), the tokens the evaluation scores bodies in (extract/exteval).
func Words(text string) []string { return appendWords(nil, text) }

// appendWords appends the lowercased \w+ tokens of text.
func appendWords(out []string, text string) []string {
	start := -1
	for i, r := range text {
		w := isWordRune(r)
		switch {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			out = append(out, strings.ToLower(text[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(text[start:]))
	}
	return out
}

// distinctAgreement is agreement over the distinct shingles of two texts: how far they
// hold the same text, however many times each holds it.
func distinctAgreement(a, b shingleSet) float64 {
	if len(a.counts) == 0 || len(b.counts) == 0 {
		if len(a.counts) == len(b.counts) {
			return 1
		}
		return 0
	}
	small, large := a.counts, b.counts
	if len(small) > len(large) {
		small, large = large, small
	}
	shared := 0
	for k := range small {
		if large[k] > 0 {
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a.counts)+len(b.counts))
}

// sharedShingles counts the shingles two texts share (with their multiplicity).
func sharedShingles(a, b shingleSet) int {
	small, large := a, b
	if len(small.counts) > len(large.counts) {
		small, large = large, small
	}
	shared := 0
	for k, n := range small.counts {
		shared += min(n, large.counts[k])
	}
	return shared
}

// agreement is the shingle F1 of two texts: 1 when both are empty, 0 when one is.
func agreement(a, b shingleSet) float64 {
	if a.total == 0 || b.total == 0 {
		if a.total == b.total {
			return 1
		}
		return 0
	}
	return 2 * float64(sharedShingles(a, b)) / float64(a.total+b.total)
}
