package focus

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/urlnorm"
)

// OnlineParams configure the online link learner. The zero value takes the defaults.
type OnlineParams struct {
	// LearningRate is AdaGrad's base step (default 0.3).
	LearningRate float64
	// L2 shrinks weights toward the prior a little at each update (default 1e-4).
	L2 float64
	// Bonus is the exploration bonus of a link to a host with n fetched pages:
	// Bonus/sqrt(1+n), added to the predicted probability (default 0.1). It sends the
	// crawl to hosts it knows nothing about, where a relevant region may start.
	Bonus float64
	// Explore is the share of links whose priority is drawn at random instead (default
	// 0.02): the ε of ε-greedy, a floor of exploration the model cannot talk itself out of.
	Explore float64
	// Bits sizes the hashed feature space, 2^Bits weights (default 18).
	Bits int
	// Window is the context read around an anchor, in words on each side (default 10).
	Window int
}

func (p *OnlineParams) defaults() {
	if p.LearningRate <= 0 {
		p.LearningRate = 0.3
	}
	if p.L2 < 0 {
		p.L2 = 0
	} else if p.L2 == 0 {
		p.L2 = 1e-4
	}
	if p.Bonus < 0 {
		p.Bonus = 0
	} else if p.Bonus == 0 {
		p.Bonus = 0.1
	}
	if p.Explore < 0 {
		p.Explore = 0
	} else if p.Explore == 0 {
		p.Explore = 0.02
	}
	if p.Bits <= 0 || p.Bits > 24 {
		p.Bits = 18
	}
	if p.Window <= 0 {
		p.Window = 10
	}
}

// Online is sonda's default focused strategy: a logistic-regression link classifier that
// predicts whether the page behind a link is relevant and learns, during the crawl, from
// every page it fetches. Its features are those the literature found predictive (seed 001's
// link cosines; Chakrabarti's and ACHE's anchor, URL and context words; host harvest):
//
//	the source page's relevance and relevant flag, and how many hops the link is from
//	  the last relevant page on its path (0–5+): tunnelling through off-topic pages
//	seed 001's seven cosines (anchor, contexts at distance 1–5, source page)
//	the words of the anchor, of the target URL and of the text around the anchor
//	the target host's harvest so far (relevant / fetched, smoothed) and how much of it is
//	  known, the source host's harvest, and whether the link stays on its host
//
// Words are hashed into 2^Bits weights. Learning is AdaGrad on the log loss, one update
// per fetched page, so it costs microseconds and follows the crawl as it moves. Before any
// page is fetched the weights encode best-first with anchor evidence (the source's
// relevance and the anchor cosine count), so the first links are not ranked at random.
//
// Exploitation is the predicted probability; exploration is a bonus for hosts with few
// fetched pages and, for a small share of links, a random priority. Like every strategy
// here it scores a link once, at discovery: the frontier keeps that priority.
type Online struct {
	rel *Relevance
	f   featureSource
	p   OnlineParams

	links *memo[urlnorm.Key, onlineLink] // features of discovered links, until their page is judged

	mu    sync.Mutex
	w     []float64 // weights
	g2    []float64 // AdaGrad: sum of squared gradients per weight
	prior []float64 // initial weights, which L2 shrinks toward
	hosts map[string]*hostStats
	rng   *rand.Rand
	seen  int // pages learned from
}

type hostStats struct{ fetched, relevant float64 }

// onlineLink is what the learner keeps about a link between discovery and fetch.
type onlineLink struct {
	x    []feature
	hops int8
}

type feature struct {
	i uint32
	v float32
}

// Feature slots with fixed meaning; hashed words use the rest of the space.
const (
	fBias        = 0
	fSrcScore    = 1
	fSrcRelevant = 2
	fCos0        = 3 // fCos0 + k for seed 001's feature k (k = 0..6)
	fHostRate    = fCos0 + NumLinkFeatures
	fHostKnown   = fHostRate + 1
	fSrcHostRate = fHostRate + 2
	fSameHost    = fHostRate + 3
	fHops0       = fHostRate + 4 // fHops0 + h for h hops from the last relevant page (h = 0..5)
	fFixed       = fHops0 + 6
)

// NewOnline returns the online learner.
func NewOnline(rel *Relevance, topics []*Topic, p OnlineParams, seed uint64, memoSize int) *Online {
	p.defaults()
	if memoSize <= 0 {
		memoSize = 1 << 18
	}
	n := 1 << p.Bits
	o := &Online{rel: rel, f: newFeatureSource(rel, topics, ContextDisjoint), p: p, links: newMemo[urlnorm.Key, onlineLink](memoSize),
		w: make([]float64, n), g2: make([]float64, n), hosts: map[string]*hostStats{}, rng: rand.New(rand.NewPCG(seed, 0x011e))}
	// The prior: best-first with anchor evidence. A page as relevant as the threshold with
	// an on-topic anchor starts near 0.7; an off-topic page with a bare anchor near 0.1.
	o.w[fBias] = -2.5
	o.w[fSrcScore] = 2
	o.w[fSrcRelevant] = 1
	o.w[fCos0+0] = 3 // anchor
	o.w[fCos0+1] = 1 // nearest context
	o.w[fHops0+0] = 0.5
	o.prior = append([]float64(nil), o.w[:fFixed]...)
	if rel != nil {
		rel.AddObserver(o)
	}
	return o
}

// Score implements crawl.LinkScorer.
func (o *Online) Score(l crawl.Link) float64 {
	if l.Source == nil {
		return seedPriority
	}
	if isRedirect(l) {
		if v, ok := o.links.get(keyOf(l.Source)); ok {
			o.links.put(l.URL.Key(), v)
		}
		return l.Source.Item.Priority
	}
	info := sourceInfo(o.rel, l.Source)
	hops := int8(0)
	if !info.relevant {
		hops = 1
		if v, ok := o.links.get(keyOf(l.Source)); ok {
			hops = min(v.hops+1, 5)
		}
	}
	x := o.features(l, info, hops)
	o.links.put(l.URL.Key(), onlineLink{x: x, hops: hops})

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rng.Float64() < o.p.Explore {
		return o.rng.Float64()
	}
	p := sigmoid(o.dot(x))
	n := 0.0
	if h := o.hosts[l.URL.HostKey()]; h != nil {
		n = h.fetched
	}
	return p + o.p.Bonus/math.Sqrt(1+n)
}

// features builds the sparse feature vector of a link. It reads host statistics under the
// lock briefly; the text work happens outside it.
func (o *Online) features(l crawl.Link, info pageInfo, hops int8) []feature {
	x := make([]feature, 0, 48)
	add := func(i int, v float64) {
		if v != 0 {
			x = append(x, feature{uint32(i), float32(v)})
		}
	}
	add(fBias, 1)
	add(fSrcScore, info.score)
	if info.relevant {
		add(fSrcRelevant, 1)
	}
	cos := o.f.features(l, info)
	for k, v := range cos {
		add(fCos0+k, v)
	}
	add(fHops0+int(hops), 1)
	target, source := l.URL.HostKey(), ""
	if l.Source != nil {
		source = l.Source.URL.HostKey()
	}
	if target == source {
		add(fSameHost, 1)
	}
	o.mu.Lock()
	if h := o.hosts[target]; h != nil {
		add(fHostRate, (h.relevant+0.5)/(h.fetched+1)-0.5)
		add(fHostKnown, math.Log1p(h.fetched)/5)
	}
	if h := o.hosts[source]; h != nil {
		add(fSrcHostRate, (h.relevant+0.5)/(h.fetched+1)-0.5)
	}
	o.mu.Unlock()

	lang := info.lang
	a := analyzerFor(lang, text.StemSnowball)
	if p := linkPage(l); p != nil {
		anchor := p.Links[l.Index].Anchor
		x = o.words(x, "a:", a.Terms(anchor))
		window := p.AnchorWindow(l.Index, o.p.Window)
		x = o.words(x, "c:", a.Terms(strings.Replace(window, anchor, " ", 1)))
	}
	return o.words(x, "u:", urlTokens(l.URL.String()))
}

// words adds hashed word features scaled to unit total length, so a long anchor does not
// outweigh a short one.
func (o *Online) words(x []feature, prefix string, ws []string) []feature {
	if len(ws) == 0 {
		return x
	}
	v := float32(1 / math.Sqrt(float64(len(ws))))
	mask := uint32(len(o.w) - 1)
	for _, w := range ws {
		i := hashWord(prefix, w) & mask
		if i < fFixed {
			i += fFixed // keep hashed words off the fixed slots
		}
		x = append(x, feature{i, v})
	}
	return x
}

// hashWord is FNV-1a over prefix and word: fixed across runs, so crawls repeat.
func hashWord(prefix, w string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(prefix); i++ {
		h = (h ^ uint32(prefix[i])) * 16777619
	}
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * 16777619
	}
	return h
}

func (o *Online) dot(x []feature) float64 {
	var z float64
	for _, f := range x {
		z += o.w[f.i] * float64(f.v)
	}
	return z
}

// Observe implements Observer: it learns from the page the link led to, and counts the
// page toward its host's harvest.
func (o *Online) Observe(d *crawl.Document, j Judgment) {
	y := 0.0
	if j.Relevant {
		y = 1
	}
	link, known := o.links.get(keyOf(d))
	o.mu.Lock()
	defer o.mu.Unlock()
	host := d.URL.HostKey()
	h := o.hosts[host]
	if h == nil {
		h = &hostStats{}
		o.hosts[host] = h
	}
	h.fetched++
	h.relevant += y
	if !known {
		return // a seed, or a link the bounded memo forgot
	}
	o.seen++
	g := sigmoid(o.dot(link.x)) - y
	for _, f := range link.x {
		gi := g * float64(f.v)
		o.g2[f.i] += gi * gi
		step := o.p.LearningRate / math.Sqrt(o.g2[f.i]+1e-8)
		target := 0.0
		if int(f.i) < len(o.prior) {
			target = o.prior[f.i]
		}
		o.w[f.i] -= step * (gi + o.p.L2*(o.w[f.i]-target))
	}
}

// Learned is how many pages the learner has learned from.
func (o *Online) Learned() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen
}
