package focus

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/urlnorm"
)

// MLP is seed 001's link network: a feed-forward perceptron with one hidden layer of
// logistic units and one logistic output, trained by error backpropagation with momentum.
// The thesis's network is 7-4-1 (NewMLP(NumLinkFeatures, 4, seed)) with learning rate 0.1,
// momentum 0.5 and 1,000 epochs (MLPDefaults). The thesis does not say whether its units
// have biases; these do (a logistic unit without one cannot output 0.5 for a zero input,
// and all-zero inputs are common: links with no topic words anywhere near them).
type MLP struct {
	Kind    string      `json:"kind"` // "sonda-link-mlp"
	Version int         `json:"version"`
	Inputs  int         `json:"inputs"`
	Hidden  [][]float64 `json:"hidden"` // Hidden[j] = weights of hidden unit j: Inputs weights, then bias
	Output  []float64   `json:"output"` // weights of the output unit: one per hidden unit, then bias
	// Training record (informational).
	Epochs       int       `json:"epochs,omitempty"`
	LearningRate float64   `json:"learning_rate,omitempty"`
	Momentum     float64   `json:"momentum,omitempty"`
	Samples      int       `json:"samples,omitempty"`
	SSE          []float64 `json:"sse,omitempty"` // Eq. 6 per epoch: ½ Σ (target − output)²
}

const mlpKind = "sonda-link-mlp"

// MLPParams are the training parameters; the zero value takes MLPDefaults.
type MLPParams struct {
	Hidden       int     // hidden units (default 4)
	LearningRate float64 // default 0.1
	Momentum     float64 // default 0.5
	Epochs       int     // default 1,000
	Seed         uint64  // initial weights and presentation order
}

// MLPDefaults are seed 001's Table 3 parameters.
var MLPDefaults = MLPParams{Hidden: 4, LearningRate: 0.1, Momentum: 0.5, Epochs: 1000}

func (p *MLPParams) defaults() {
	if p.Hidden <= 0 {
		p.Hidden = MLPDefaults.Hidden
	}
	if p.LearningRate <= 0 {
		p.LearningRate = MLPDefaults.LearningRate
	}
	if p.Momentum < 0 || p.Momentum >= 1 {
		p.Momentum = MLPDefaults.Momentum
	}
	if p.Epochs <= 0 {
		p.Epochs = MLPDefaults.Epochs
	}
}

// NewMLP returns an untrained network with weights drawn uniformly from [−0.5, 0.5].
func NewMLP(inputs, hidden int, seed uint64) *MLP {
	rng := rand.New(rand.NewPCG(seed, 0x31a9))
	w := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64() - 0.5
		}
		return v
	}
	m := &MLP{Kind: mlpKind, Version: 1, Inputs: inputs, Hidden: make([][]float64, hidden), Output: w(hidden + 1)}
	for j := range m.Hidden {
		m.Hidden[j] = w(inputs + 1)
	}
	return m
}

// Predict is the network's output for x (len(x) must be Inputs).
func (m *MLP) Predict(x []float64) float64 {
	h := make([]float64, len(m.Hidden))
	return m.forward(x, h)
}

// forward computes the hidden activations into h and returns the output.
func (m *MLP) forward(x, h []float64) float64 {
	z := m.Output[len(m.Hidden)]
	for j, wj := range m.Hidden {
		a := wj[m.Inputs]
		for i, xi := range x {
			a += wj[i] * xi
		}
		h[j] = sigmoid(a)
		z += m.Output[j] * h[j]
	}
	return sigmoid(z)
}

// LinkSample is one training pair of seed 001: the features of the link that led to a page
// and the page's post-score, which the network should have predicted.
type LinkSample struct {
	X      LinkFeatures `json:"x"`
	Target float64      `json:"target"`
}

// Train runs backpropagation with momentum, one weight update per sample (the classic
// online form), the samples in a new random order every epoch. It returns the sum of
// squared errors of each epoch (Eq. 6), measured while the epoch runs.
func (m *MLP) Train(samples []LinkSample, p MLPParams) ([]float64, error) {
	p.defaults()
	if len(samples) == 0 {
		return nil, errors.New("focus: no training samples: the training crawl fetched no page reached through a scored link")
	}
	if m.Inputs != NumLinkFeatures {
		return nil, fmt.Errorf("focus: network has %d inputs, samples have %d", m.Inputs, NumLinkFeatures)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x0de7))
	order := make([]int, len(samples))
	for i := range order {
		order[i] = i
	}
	nh := len(m.Hidden)
	h := make([]float64, nh)
	dHidden := make([][]float64, nh) // previous updates, for momentum
	for j := range dHidden {
		dHidden[j] = make([]float64, m.Inputs+1)
	}
	dOut := make([]float64, nh+1)
	deltaH := make([]float64, nh)
	sse := make([]float64, 0, p.Epochs)
	for epoch := 0; epoch < p.Epochs; epoch++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var e float64
		for _, s := range order {
			x, t := samples[s].X[:], samples[s].Target
			y := m.forward(x, h)
			e += 0.5 * (t - y) * (t - y)
			deltaO := (t - y) * y * (1 - y)
			for j := 0; j < nh; j++ {
				deltaH[j] = deltaO * m.Output[j] * h[j] * (1 - h[j])
			}
			for j := 0; j < nh; j++ {
				dOut[j] = p.LearningRate*deltaO*h[j] + p.Momentum*dOut[j]
				m.Output[j] += dOut[j]
			}
			dOut[nh] = p.LearningRate*deltaO + p.Momentum*dOut[nh]
			m.Output[nh] += dOut[nh]
			for j := 0; j < nh; j++ {
				wj, dj := m.Hidden[j], dHidden[j]
				for i, xi := range x {
					dj[i] = p.LearningRate*deltaH[j]*xi + p.Momentum*dj[i]
					wj[i] += dj[i]
				}
				dj[m.Inputs] = p.LearningRate*deltaH[j] + p.Momentum*dj[m.Inputs]
				wj[m.Inputs] += dj[m.Inputs]
			}
		}
		sse = append(sse, e)
	}
	m.Epochs, m.LearningRate, m.Momentum, m.Samples = p.Epochs, p.LearningRate, p.Momentum, len(samples)
	m.SSE = sse
	return sse, nil
}

// TrainLinkMLP trains a fresh 7-4-1 network (or p.Hidden units) on samples.
func TrainLinkMLP(samples []LinkSample, p MLPParams) (*MLP, error) {
	p.defaults()
	m := NewMLP(NumLinkFeatures, p.Hidden, p.Seed)
	if _, err := m.Train(samples, p); err != nil {
		return nil, err
	}
	return m, nil
}

// Save writes the network as JSON.
func (m *MLP) Save(path string) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadMLP reads a network written by Save.
func LoadMLP(path string) (*MLP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("link model: %w", err)
	}
	var m MLP
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("link model %s: %w", path, err)
	}
	if m.Kind != mlpKind || m.Version != 1 || m.Inputs != NumLinkFeatures || len(m.Hidden) == 0 || len(m.Output) != len(m.Hidden)+1 {
		return nil, fmt.Errorf("link model %s: not a sonda link network with %d inputs; train one with `sonda train links`", path, NumLinkFeatures)
	}
	for _, w := range m.Hidden {
		if len(w) != m.Inputs+1 {
			return nil, fmt.Errorf("link model %s: hidden unit with %d weights, want %d", path, len(w), m.Inputs+1)
		}
	}
	return &m, nil
}

// MLPScorer is seed 001's retrieval stage: a link's priority is the trained network's
// pre-score for it, computed once when the link is first discovered (Fig. 18, lines
// 29–33), and the frontier fetches the best pre-score first.
type MLPScorer struct {
	rel *Relevance
	f   featureSource
	net *MLP
	mu  sync.Mutex // Predict is read-only, but hidden-activation buffers are reused
	h   []float64
}

// NewMLPScorer returns the retrieval-stage strategy for a trained network.
func NewMLPScorer(rel *Relevance, topics []*Topic, net *MLP, mode ContextMode) *MLPScorer {
	return &MLPScorer{rel: rel, f: newFeatureSource(rel, topics, mode), net: net, h: make([]float64, len(net.Hidden))}
}

// Score implements crawl.LinkScorer.
func (s *MLPScorer) Score(l crawl.Link) float64 {
	switch {
	case l.Source == nil:
		return seedPriority
	case isRedirect(l):
		return l.Source.Item.Priority
	}
	x := s.f.features(l, sourceInfo(s.rel, l.Source))
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.net.forward(x[:], s.h)
}

// LinkSampler is seed 001's training stage: it wraps the training crawl's strategy
// (random order), computes the seven features of every link when it is first discovered,
// and, as an Observer of relevance, pairs them with the post-score of the page the link
// led to. Samples then trains the network.
type LinkSampler struct {
	inner crawl.LinkScorer
	f     featureSource
	feats *memo[urlnorm.Key, LinkFeatures]

	mu      sync.Mutex
	samples []LinkSample
}

// NewLinkSampler wraps inner (use NewRandom for the thesis's training stage). Register it
// with rel.AddObserver.
func NewLinkSampler(rel *Relevance, topics []*Topic, inner crawl.LinkScorer, mode ContextMode, memoSize int) *LinkSampler {
	if len(topics) == 0 {
		topics = rel.judge.Topics
	}
	return &LinkSampler{inner: inner, f: newFeatureSource(rel, topics, mode), feats: newMemo[urlnorm.Key, LinkFeatures](memoSize)}
}

// Score implements crawl.LinkScorer.
func (s *LinkSampler) Score(l crawl.Link) float64 {
	switch {
	case l.Source == nil:
	case isRedirect(l):
		if x, ok := s.feats.get(keyOf(l.Source)); ok {
			s.feats.put(l.URL.Key(), x)
		}
	default:
		s.feats.put(l.URL.Key(), s.f.features(l, sourceInfo(s.f.rel, l.Source)))
	}
	return s.inner.Score(l)
}

// Observe implements Observer.
func (s *LinkSampler) Observe(d *crawl.Document, j Judgment) {
	x, ok := s.feats.get(keyOf(d))
	if !ok {
		return // a seed, or a link forgotten by the bounded memo
	}
	s.mu.Lock()
	s.samples = append(s.samples, LinkSample{X: x, Target: j.Score})
	s.mu.Unlock()
}

// Samples returns the training pairs collected so far.
func (s *LinkSampler) Samples() []LinkSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LinkSample(nil), s.samples...)
}

// sseDrop describes a training run for reports.
func sseDrop(sse []float64) string {
	if len(sse) == 0 {
		return "no epochs"
	}
	return fmt.Sprintf("SSE %.2f (epoch 1) → %.2f (epoch %d)", sse[0], sse[len(sse)-1], len(sse))
}
