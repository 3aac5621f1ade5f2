package focus

import (
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/urlnorm"
)

// FishParams configure Fish-search. The zero value takes the defaults.
type FishParams struct {
	Width int     // children of an irrelevant page that get 0.5 (default 10)
	A     float64 // a relevant page's first A·Width children get 1 (default 1.5, De Bra and Post)
	Depth int     // D: links followed from the last relevant page (default 3)
}

func (p *FishParams) defaults() {
	if p.Width <= 0 {
		p.Width = 10
	}
	if p.A <= 0 {
		p.A = 1.5
	}
	if p.Depth <= 0 {
		p.Depth = 3
	}
}

// Fish is Fish-search (De Bra and Post 1994; seed 001 §2.7, Fig. 8). Relevance is binary
// (the page's relevant flag). A relevant page's first A·Width links get potential score 1,
// an irrelevant page's first Width links 0.5, all other links 0. Depth measures how far the
// school has swum from food: a relevant page's links get depth D, an irrelevant page's links
// its own depth minus 1, and a page at depth 0 sends no links on (here: they are parked at
// the bottom of the frontier, see parkedPriority). Seeds start at depth D.
//
// Differences from the paper, forced by a frontier that fixes priorities at discovery: a
// child found again keeps its first score and depth (the paper takes the maximum and
// re-sorts), and the list's three insertion points (front, middle, end) become the three
// scores, links of equal score fetched in discovery order.
type Fish struct {
	rel    *Relevance
	p      FishParams
	depths *memo[urlnorm.Key, int8]
}

// NewFish returns Fish-search; memo bounds the per-link depths kept (0: the default).
func NewFish(rel *Relevance, p FishParams, memoSize int) *Fish {
	p.defaults()
	return &Fish{rel: rel, p: p, depths: newMemo[urlnorm.Key, int8](memoSize)}
}

// Score implements crawl.LinkScorer.
func (f *Fish) Score(l crawl.Link) float64 {
	if l.Source == nil {
		f.depths.put(l.URL.Key(), int8(f.p.Depth))
		return seedPriority
	}
	srcDepth := f.depthOf(l.Source)
	if isRedirect(l) {
		f.depths.put(l.URL.Key(), int8(srcDepth))
		return l.Source.Item.Priority
	}
	info := sourceInfo(f.rel, l.Source)
	childDepth := srcDepth - 1
	if info.relevant {
		childDepth = f.p.Depth
	}
	f.depths.put(l.URL.Key(), int8(max(childDepth, 0)))
	if srcDepth <= 0 && !info.relevant {
		return parkedPriority
	}
	index := l.Index
	if index < 0 {
		index = 1 << 30 // a refresh or rel=next link is nobody's first child
	}
	switch {
	case info.relevant && float64(index) < f.p.A*float64(f.p.Width):
		return 1
	case !info.relevant && index < f.p.Width:
		return 0.5
	}
	return 0
}

// depthOf is the Fish depth of a fetched page: what its discovering link was given, D for
// a page whose link was forgotten (the memo is bounded) or was a seed.
func (f *Fish) depthOf(d *crawl.Document) int {
	if v, ok := f.depths.get(keyOf(d)); ok {
		return int(v)
	}
	return f.p.Depth
}

// SharkParams configure Shark-search. The zero value takes the defaults.
type SharkParams struct {
	Depth int     // D, as in Fish-search (default 3)
	Decay float64 // δ: share of a parent's score its children inherit (default 0.5)
	Beta  float64 // β: weight of the anchor against its context (default 0.8)
	Gamma float64 // γ (seed 001's r): weight of inherited against neighbourhood score (default 0.5)
	// Window is the anchor context: words on each side of the anchor (default 20, the
	// extended anchor text of GeoDiscover, seed 000 §3.6).
	Window int
}

func (p *SharkParams) defaults() {
	if p.Depth <= 0 {
		p.Depth = 3
	}
	if p.Decay <= 0 {
		p.Decay = 0.5
	}
	if p.Beta <= 0 {
		p.Beta = 0.8
	}
	if p.Gamma <= 0 {
		p.Gamma = 0.5
	}
	if p.Window <= 0 {
		p.Window = 20
	}
}

// sharkState is what Shark-search remembers about a discovered link until it is fetched.
type sharkState struct {
	inherited float32
	depth     int8
}

// Shark is Shark-search (Hersovici et al. 1998; seed 001 §2.8, Fig. 9), with the fuzzy
// page similarity sim(q, page) = the page's relevance score:
//
//	inherited(child)  = δ·sim(q, page)  if sim(q, page) > 0, else δ·inherited(page)
//	anchor            = sim(q, anchor text)
//	context           = 1 if anchor > 0, else sim(q, the Window words around the anchor)
//	neighbourhood     = β·anchor + (1−β)·context
//	potential(child)  = γ·inherited(child) + (1−γ)·neighbourhood
//
// Depth works as in Fish-search, with "relevant" meaning sim > 0. The same frontier
// difference applies: no re-sorting of rediscovered children.
type Shark struct {
	rel    *Relevance
	f      featureSource
	p      SharkParams
	states *memo[urlnorm.Key, sharkState]
}

// NewShark returns Shark-search.
func NewShark(rel *Relevance, topics []*Topic, p SharkParams, memoSize int) *Shark {
	p.defaults()
	return &Shark{rel: rel, f: newFeatureSource(rel, topics, ContextDisjoint), p: p, states: newMemo[urlnorm.Key, sharkState](memoSize)}
}

// Score implements crawl.LinkScorer.
func (s *Shark) Score(l crawl.Link) float64 {
	if l.Source == nil {
		s.states.put(l.URL.Key(), sharkState{depth: int8(s.p.Depth)})
		return seedPriority
	}
	src, ok := s.states.get(keyOf(l.Source))
	if !ok {
		src = sharkState{depth: int8(s.p.Depth)}
	}
	if isRedirect(l) {
		s.states.put(l.URL.Key(), src)
		return l.Source.Item.Priority
	}
	info := sourceInfo(s.rel, l.Source)
	child := sharkState{inherited: float32(s.p.Decay) * src.inherited, depth: max(src.depth-1, 0)}
	if info.score > 0 {
		child = sharkState{inherited: float32(s.p.Decay * info.score), depth: int8(s.p.Depth)}
	}
	s.states.put(l.URL.Key(), child)
	if src.depth <= 0 && info.score <= 0 {
		return parkedPriority
	}
	var anchor, context float64
	if p := linkPage(l); p != nil {
		anchor = s.f.similarity(p.Links[l.Index].Anchor, info.lang)
		if anchor > 0 {
			context = 1
		} else {
			context = s.f.similarity(p.AnchorWindow(l.Index, s.p.Window), info.lang)
		}
	}
	neighbourhood := s.p.Beta*anchor + (1-s.p.Beta)*context
	return s.p.Gamma*float64(child.inherited) + (1-s.p.Gamma)*neighbourhood
}
