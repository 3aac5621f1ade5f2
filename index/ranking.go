package index

import (
	"fmt"
	"math"
)

// Ranking says how results are ordered. A document's text score is BM25 summed over the
// fields a query word matched, each multiplied by the field's weight, plus Proximity for
// each pair of adjacent query words found next to each other. The final score blends the
// text score, normalized by the best text score among the results, with the link prior and
// the topic relevance:
//
//	final = (1 − Link − Relevance) × text/best + Link × prior + Relevance × relevance
//
// The blend is applied to the best Window results by text score (as Elasticsearch's
// rescoring does); results beyond the window follow in text order. Link = 1 with
// LinkSignal "inlinks" orders results by in-link count alone, as seed 002 did.
//
// The zero Ranking is DefaultRanking; see its constants for how each value was chosen.
type Ranking struct {
	Title       float64 `json:"title"`
	Body        float64 `json:"body"`
	Headings    float64 `json:"headings"`
	Description float64 `json:"description"`
	Anchors     float64 `json:"anchors"`
	Extra       float64 `json:"extra"`
	URL         float64 `json:"url"`
	// K1 and B are BM25's term-frequency saturation and length normalization.
	K1 float64 `json:"k1"`
	B  float64 `json:"b"`
	// Proximity is the weight of adjacent query words found as a phrase (0: off).
	Proximity float64 `json:"proximity"`
	// Feedback is the weight of pseudo-relevance feedback (RM3, feedback.go): the words
	// the best matches share rescore the matches with this share of the query (0: off,
	// below 1).
	Feedback float64 `json:"feedback"`
	// Link and Relevance are the blend weights of the link prior and topic relevance;
	// together at most 1.
	Link      float64 `json:"link"`
	Relevance float64 `json:"relevance"`
	// LinkSignal is "pagerank" (default) or "inlinks".
	LinkSignal string `json:"link_signal"`
	// Window is how many of the best text matches the blend reorders (default 200).
	Window int `json:"window"`
}

// DefaultRanking returns the default ranking.
func DefaultRanking() Ranking { return Ranking{}.withDefaults() }

// The defaults. Title, k1, b and proximity were chosen by coordinate ascent on the odd
// half of the Cranfield queries (ireval.TuneRanking, `sonda eval retrieval --tune`): from
// title 2, k1 1.2, b 0.75, proximity 0.5 it moved title to 3 and k1 to 2, and a second round
// changed nothing. Cranfield has no headings, descriptions, anchors or URLs, so their
// weights are set between the body's and the title's by judgment: headings and anchor
// text are short descriptions of a page, like a title but noisier; a URL's words are
// noisier still. The feedback weight is RM3's usual interpolation (Anserini's default),
// not tuned: on Cranfield it gained on both halves alike. The link weight was chosen on a crawled test web (TestLinkWeightChoice):
// weights up to 0.3 neither helped nor hurt there and 0.5 hurt, so it is small, a
// tie-breaker among close text scores. The relevance weight was chosen on two crawled
// topical test webs with ground-truth labels (TestRelevanceWeightChoice): 0.4 gave the
// best mean of on-topic precision for words the topic shares with other themes and of
// known-item MRR; up to 0.3 known items lose almost nothing, from 0.5 they lose a fifth.
const (
	defaultTitle       = 3.0
	defaultBody        = 1.0
	defaultHeadings    = 1.5
	defaultDescription = 1.0
	defaultAnchors     = 1.5
	defaultExtra       = 1.0
	defaultURL         = 0.5
	defaultK1          = 2.0
	defaultB           = 0.75
	defaultProximity   = 0.5
	defaultFeedback    = 0.5
	defaultLink        = 0.1
	defaultRelevance   = 0.4
	defaultWindow      = 200
)

// withDefaults turns the zero Ranking into DefaultRanking; any other Ranking is taken as
// written (a weight of 0 turns that part off), apart from an empty LinkSignal and a
// non-positive Window, which take their defaults.
func (r Ranking) withDefaults() Ranking {
	if r == (Ranking{}) {
		r = Ranking{
			Title: defaultTitle, Body: defaultBody, Headings: defaultHeadings, Description: defaultDescription,
			Anchors: defaultAnchors, Extra: defaultExtra, URL: defaultURL, K1: defaultK1, B: defaultB,
			Proximity: defaultProximity, Feedback: defaultFeedback, Link: defaultLink, Relevance: defaultRelevance,
		}
	}
	if r.LinkSignal == "" {
		r.LinkSignal = "pagerank"
	}
	if r.Window <= 0 {
		r.Window = defaultWindow
	}
	return r
}

func (r Ranking) validate() error {
	for _, w := range []struct {
		name string
		v    float64
	}{{"title", r.Title}, {"body", r.Body}, {"headings", r.Headings}, {"description", r.Description},
		{"anchors", r.Anchors}, {"extra", r.Extra}, {"url", r.URL}, {"k1", r.K1}, {"b", r.B}, {"proximity", r.Proximity},
		{"feedback", r.Feedback}, {"link", r.Link}, {"relevance", r.Relevance}} {
		if math.IsNaN(w.v) || math.IsInf(w.v, 0) {
			return fmt.Errorf("index: ranking.%s: %v is not a number", w.name, w.v)
		}
	}
	for _, w := range []struct {
		name string
		v    float64
	}{{"title", r.Title}, {"body", r.Body}, {"headings", r.Headings}, {"description", r.Description},
		{"anchors", r.Anchors}, {"extra", r.Extra}, {"url", r.URL}, {"proximity", r.Proximity},
		{"feedback", r.Feedback}, {"link", r.Link}, {"relevance", r.Relevance}, {"b", r.B}} {
		if w.v < 0 {
			return fmt.Errorf("index: ranking.%s: %v is negative (0 turns it off)", w.name, w.v)
		}
	}
	if r.K1 <= 0 {
		return fmt.Errorf("index: ranking.k1: %v must be positive (BM25's usual range is 0.5 to 2)", r.K1)
	}
	if r.B > 1 {
		return fmt.Errorf("index: ranking.b: %v is above 1 (BM25's length normalization runs from 0, none, to 1, full)", r.B)
	}
	if r.Feedback >= 1 {
		return fmt.Errorf("index: ranking.feedback: %v must be below 1 (it is the feedback's share of the query; 0 turns it off)", r.Feedback)
	}
	if r.Link+r.Relevance > 1 {
		return fmt.Errorf("index: ranking.link (%v) + ranking.relevance (%v) must not exceed 1", r.Link, r.Relevance)
	}
	switch r.LinkSignal {
	case "pagerank", "inlinks":
	default:
		return fmt.Errorf("index: ranking.link-signal: %q is not pagerank or inlinks", r.LinkSignal)
	}
	return nil
}

// fieldWeight returns the weight of a text field.
func (r Ranking) fieldWeight(name string) float64 {
	switch name {
	case fieldTitle:
		return r.Title
	case fieldBody:
		return r.Body
	case fieldHeadings:
		return r.Headings
	case fieldDescription:
		return r.Description
	case fieldAnchors:
		return r.Anchors
	case fieldExtra:
		return r.Extra
	case fieldURL:
		return r.URL
	}
	return 0
}
