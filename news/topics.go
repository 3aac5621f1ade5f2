package news

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/text"
)

// Topic is a subject a reader follows: the thesis's "tópico" (terms such as "Copa do
// mundo"), with optional seed sites.
type Topic struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`            // as the reader typed it
	Terms   []string  `json:"terms"`           // the words articles must contain (default: Name's words)
	Sites   []string  `json:"sites,omitempty"` // seed sites given with the topic
	Created time.Time `json:"created"`
	// MinMatch is the fraction of the topic's terms an article must contain (default 1:
	// all of them). The thesis accepted a link whose anchor had "some" of the words.
	MinMatch float64 `json:"min_match"`
	// Sources are the addresses the search providers proposed; they are revisited on the
	// monitor's schedule.
	Sources []string `json:"sources,omitempty"`
}

// TopicID is the identifier of a topic named name: the same words (whatever their case,
// accents and spacing) give the same topic.
func TopicID(name string) string {
	return fmt.Sprintf("%012x", xxhash.Sum64String(strings.Join(strings.Fields(text.Fold(name)), " ")))[:12]
}

// Field weights of a topic term's occurrence: a term in the title says more about what an
// article is about than one in its body.
const (
	weightTitle       = 3.0
	weightDescription = 2.0
	weightBody        = 1.0
	bodySaturation    = 3 // body occurrences beyond this add nothing
)

// Matcher decides whether articles belong to topics. Matching is done on analyzed terms in
// the article's language (Unicode words, case and accent folding, stop words removed,
// Snowball stemming for English, Portuguese, Spanish and French), over the title, the
// description and the body, so "eleição" matches "Eleições" and "elections" matches
// "election". The thesis compared the topic with link anchor text only, which missed
// articles whose links said little and took links whose anchors used the words otherwise.
type Matcher struct {
	mu        sync.Mutex
	analyzers map[string]*text.Analyzer
}

// NewMatcher returns a Matcher; it is safe for concurrent use.
func NewMatcher() *Matcher { return &Matcher{analyzers: map[string]*text.Analyzer{}} }

func (m *Matcher) analyzer(lang string, keepStop bool) *text.Analyzer {
	key := text.NormalizeLang(lang)
	if keepStop {
		key += "+stop"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.analyzers[key]
	if !ok {
		a = text.NewAnalyzerOptions(text.Options{Lang: lang, KeepStopWords: keepStop})
		m.analyzers[key] = a
	}
	return a
}

// topicTerms analyzes the topic's terms in lang, without duplicates. A topic made only of
// stop words ("The Who") keeps them; keepStop says so, and the article must then be
// analyzed the same way.
func (m *Matcher) topicTerms(t *Topic, lang string) (terms []string, keepStop bool) {
	words := strings.Join(t.Terms, " ")
	if strings.TrimSpace(words) == "" {
		words = t.Name
	}
	if terms = dedupe(m.analyzer(lang, false).Terms(words)); len(terms) > 0 {
		return terms, false
	}
	return dedupe(m.analyzer(lang, true).Terms(words)), true
}

func dedupe(terms []string) []string {
	seen := map[string]bool{}
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Match scores a against t. ok says a belongs to the topic: it contains at least MinMatch
// of the topic's terms. score (0..1) weighs where they occur: title, description, body.
// To match one article against many topics, Prepare it once.
func (m *Matcher) Match(t *Topic, a *extract.Article) (score float64, ok bool) {
	return m.Prepare(a).Match(t)
}

// Prepared is an article ready to be matched against many topics: its title, description
// and body are analyzed once per analysis (with or without stop words), not once per topic.
// It is not safe for concurrent use.
type Prepared struct {
	m     *Matcher
	a     *extract.Article
	views [2]*articleTerms // indexed by keepStop
}

// articleTerms are an article's analyzed terms by where they occur.
type articleTerms struct {
	title, desc map[string]bool
	body        map[string]int
}

// Prepare readies a for matching; the analysis happens at the first Match that needs it.
func (m *Matcher) Prepare(a *extract.Article) *Prepared { return &Prepared{m: m, a: a} }

func (p *Prepared) terms(keepStop bool) *articleTerms {
	i := 0
	if keepStop {
		i = 1
	}
	if v := p.views[i]; v != nil {
		return v
	}
	an := p.m.analyzer(p.a.Language, keepStop)
	v := &articleTerms{title: set(an.Terms(p.a.Title)), desc: set(an.Terms(p.a.Description)), body: map[string]int{}}
	for _, b := range p.a.Body {
		for _, term := range an.Terms(b.Text) {
			v.body[term]++
		}
	}
	p.views[i] = v
	return v
}

// Match scores the article against t, as Matcher.Match does.
func (p *Prepared) Match(t *Topic) (score float64, ok bool) {
	terms, keepStop := p.m.topicTerms(t, p.a.Language)
	if len(terms) == 0 {
		return 0, false
	}
	v := p.terms(keepStop)
	matched := 0
	total := 0.0
	for _, term := range terms {
		w := 0.0
		if v.title[term] {
			w += weightTitle
		}
		if v.desc[term] {
			w += weightDescription
		}
		w += weightBody * float64(min(v.body[term], bodySaturation)) / bodySaturation
		if w > 0 {
			matched++
		}
		total += w
	}
	need := t.MinMatch
	if need <= 0 || need > 1 {
		need = 1
	}
	score = total / ((weightTitle + weightDescription + weightBody) * float64(len(terms)))
	return score, float64(matched) >= need*float64(len(terms))-1e-9
}

func set(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[t] = true
	}
	return m
}
