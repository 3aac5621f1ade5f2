package focus

import (
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/urlnorm"
)

// NumLinkFeatures is the input size of seed 001's link MLP.
const NumLinkFeatures = 7

// LinkFeatures are seed 001's seven link inputs, each a cosine with the topic in [0, 1]:
//
//	[0]    the link's anchor text
//	[1..5] the text blocks at link distance 1..5 (see ContextMode)
//	[6]    the whole source page (its post-score)
type LinkFeatures [NumLinkFeatures]float64

// ContextMode says which text the distance-d features read; the thesis leaves it open.
type ContextMode int

const (
	// ContextDisjoint (the default) reads, for distance d, the text between the d-th and the
	// (d−1)-th neighbouring link on each side, both sides together: parse.Page.LinkContext.
	// Blocks never overlap, so each input carries new evidence.
	ContextDisjoint ContextMode = iota
	// ContextCumulative reads all text out to the d-th neighbouring link on each side,
	// neighbouring anchors included: parse.Page.LinkContextSpan.
	ContextCumulative
)

// featureSource computes link features for a set of topics.
type featureSource struct {
	rel    *Relevance
	topics []*Topic
	mode   ContextMode
	gaps   *memo[gapKey, *gapTerms] // the pages whose links are being scored
}

func newFeatureSource(rel *Relevance, topics []*Topic, mode ContextMode) featureSource {
	return featureSource{rel: rel, topics: topics, mode: mode, gaps: newMemo[gapKey, *gapTerms](64)}
}

// pageInfo is what scorers need to know about the page a link was found on.
type pageInfo struct {
	lang     string
	score    float64 // relevance
	cosine   float64 // topic cosine (post-score)
	relevant bool
	judged   bool // false: nothing was judged (a redirect, a non-HTML body)
}

// sourceInfo returns the judgment of a link's source page: from the relevance analyzer's
// recent judgments, else from the record it wrote.
func sourceInfo(rel *Relevance, d *crawl.Document) pageInfo {
	if rel != nil {
		if j, ok := rel.JudgmentOf(d); ok {
			return pageInfo{lang: j.Lang, score: j.Score, cosine: j.Cosine, relevant: j.Relevant, judged: true}
		}
	}
	var info pageInfo
	rec := d.Record
	if rec == nil {
		return info
	}
	info.lang = rec.Lang
	if rec.Relevance != nil {
		info.score, info.cosine, info.judged = *rec.Relevance, *rec.Relevance, true
	}
	if rec.Relevant != nil {
		info.relevant = *rec.Relevant
	}
	return info
}

// similarity is the best cosine of s with any topic.
func (f *featureSource) similarity(s, lang string) float64 {
	var best float64
	for _, t := range f.topics {
		best = max(best, t.TextCosine(s, lang))
	}
	return best
}

// features computes the seven inputs of a link found on a judged page.
func (f *featureSource) features(l crawl.Link, info pageInfo) LinkFeatures {
	var x LinkFeatures
	x[6] = info.cosine
	p := linkPage(l)
	if p == nil {
		return x
	}
	x[0] = f.similarity(p.Links[l.Index].Anchor, info.lang)
	if f.mode == ContextDisjoint {
		// Every block between two links is the context of several links: analyze each
		// once per page (gapTerms) and combine the two sides per link.
		for _, t := range f.topics {
			g := f.gapsOf(p, t, info.lang)
			for d := 1; d <= 5; d++ {
				x[d] = max(x[d], g.cosine(l.Index, d))
			}
		}
		return x
	}
	for d := 1; d <= 5; d++ {
		before, after := p.LinkContextSpan(l.Index, d)
		x[d] = f.similarity(joinContext(before, after), info.lang)
	}
	return x
}

// termCount is a term and how often it occurs in a text block.
type termCount struct {
	term string
	n    float64
}

// gapTerms are the analyzed blocks of text between consecutive links of one page, for one
// topic: gaps[j+1] holds the block after link j (j = -1: before the first link), sorted by
// term, so that the context of link i at distance d, blocks i−d and i+d−1, is a merge.
type gapTerms struct {
	topic *Topic
	lang  string
	gaps  [][]termCount
}

type gapKey struct {
	page  *parse.Page
	topic *Topic
}

// gapsOf returns the gap terms of p for topic t, analyzing the page on first use.
func (f *featureSource) gapsOf(p *parse.Page, t *Topic, lang string) *gapTerms {
	k := gapKey{p, t}
	if g, ok := f.gaps.get(k); ok {
		return g
	}
	g := newGapTerms(p, t, lang)
	f.gaps.put(k, g)
	return g
}

// newGapTerms analyzes the text between consecutive links of p, as parse.Page.LinkContext
// delimits it: from the end of link j to the start of link j+1, the page's start and end
// acting as links -1 and len(Links).
func newGapTerms(p *parse.Page, t *Topic, lang string) *gapTerms {
	_, l := t.Vector(lang)
	a := analyzerFor(l, t.Stemmer)
	text := p.Text()
	n := len(p.Links)
	g := &gapTerms{topic: t, lang: l, gaps: make([][]termCount, n+1)}
	var buf []string
	for j := -1; j < n; j++ {
		from, to := 0, len(text)
		if j >= 0 {
			from = p.Links[j].TextEnd
		}
		if j+1 < n {
			to = p.Links[j+1].TextStart
		}
		if from >= to {
			continue
		}
		buf = a.AppendTerms(buf[:0], text[from:to])
		sort.Strings(buf)
		var counts []termCount
		for i := 0; i < len(buf); {
			k := i + 1
			for k < len(buf) && buf[k] == buf[i] {
				k++
			}
			counts = append(counts, termCount{buf[i], float64(k - i)})
			i = k
		}
		g.gaps[j+1] = counts
	}
	return g
}

// cosine is the topic's cosine with the context of link i at distance d: the blocks i−d and
// i+d−1 taken together (parse.Page.LinkContext).
func (g *gapTerms) cosine(i, d int) float64 {
	n := len(g.gaps) - 1
	var before, after []termCount
	if j := i - d; j >= -1 {
		before = g.gaps[j+1]
	}
	if j := i + d; j <= n {
		after = g.gaps[j]
	}
	v, _ := g.topic.Vector(g.lang)
	var dot, sq float64
	add := func(term string, c float64) {
		sq += c * c
		dot += c * v[term]
	}
	a, b := 0, 0
	for a < len(before) || b < len(after) {
		switch {
		case b == len(after) || a < len(before) && before[a].term < after[b].term:
			add(before[a].term, before[a].n)
			a++
		case a == len(before) || after[b].term < before[a].term:
			add(after[b].term, after[b].n)
			b++
		default:
			add(before[a].term, before[a].n+after[b].n)
			a++
			b++
		}
	}
	if sq == 0 {
		return 0
	}
	return min(dot/(g.topic.norm(g.lang)*math.Sqrt(sq)), 1)
}

// linkPage returns the parsed page a link is on, or nil when the link is not one of the
// page's links (seeds, redirect targets, meta refresh).
func linkPage(l crawl.Link) *parse.Page {
	if l.Source == nil || l.Source.Page == nil || l.Index < 0 || l.Index >= len(l.Source.Page.Links) {
		return nil
	}
	return l.Source.Page
}

func joinContext(before, after string) string {
	switch {
	case before == "":
		return after
	case after == "":
		return before
	}
	return before + "\n" + after
}

// isRedirect reports whether a link is the target of its source's redirect, which is the
// same link under another address: scorers give it the redirecting URL's priority and state.
func isRedirect(l crawl.Link) bool {
	return l.Source != nil && l.Index < 0 && l.Source.Page == nil && l.Source.Record != nil && l.Source.Record.Status >= 300 && l.Source.Record.Status < 400
}

// keyOf is the frontier identity of a document's URL.
func keyOf(d *crawl.Document) urlnorm.Key {
	if !d.URL.IsZero() {
		return d.URL.Key()
	}
	return d.Item.Key
}

// memo is a bounded map from keys (mostly URL keys) to per-link state (features, inherited
// scores, Fish/Shark depths), to recent judgments and to analyzed pages. When full it
// forgets the oldest entries: a link discovered that long ago and still not fetched is
// unlikely to be fetched soon, and memory must not grow with the frontier, which lives on
// disk.
type memo[K comparable, V any] struct {
	mu   sync.Mutex
	m    map[K]V
	ring []K
	next int
	full bool
}

func newMemo[K comparable, V any](size int) *memo[K, V] {
	if size <= 0 {
		size = 1 << 20
	}
	return &memo[K, V]{m: make(map[K]V), ring: make([]K, size)}
}

// put stores v for k unless k is present (a URL's state is set at its first discovery).
func (m *memo[K, V]) put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[k]; ok {
		return
	}
	if m.full {
		delete(m.m, m.ring[m.next])
	}
	m.ring[m.next] = k
	m.next++
	if m.next == len(m.ring) {
		m.next, m.full = 0, true
	}
	m.m[k] = v
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

func (m *memo[K, V]) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

// words lowercases and splits a URL into its alphanumeric tokens.
func urlTokens(u string) []string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	return strings.FieldsFunc(strings.ToLower(u), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80)
	})
}
