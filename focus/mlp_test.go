package focus

import (
	"math"
	"path/filepath"
	"testing"
)

// TestMLPShape: seed 001's network is 7 inputs, 4 logistic hidden units, 1 logistic output.
func TestMLPShape(t *testing.T) {
	m := NewMLP(NumLinkFeatures, MLPDefaults.Hidden, 1)
	if m.Inputs != 7 || len(m.Hidden) != 4 || len(m.Output) != 5 {
		t.Fatalf("shape %d-%d-%d", m.Inputs, len(m.Hidden), len(m.Output)-1)
	}
	for _, w := range m.Hidden {
		if len(w) != 8 {
			t.Fatalf("hidden unit with %d weights, want 7 and a bias", len(w))
		}
	}
	if MLPDefaults.LearningRate != 0.1 || MLPDefaults.Momentum != 0.5 || MLPDefaults.Epochs != 1000 {
		t.Errorf("defaults %+v differ from Table 3", MLPDefaults)
	}
	var x LinkFeatures
	if y := m.Predict(x[:]); y <= 0 || y >= 1 {
		t.Errorf("logistic output %v outside (0, 1)", y)
	}
}

// TestMLPLearnsTinySet trains on a tiny set where the target is the anchor cosine blended
// with the page cosine (the kind of relation the thesis expects the network to find) and
// checks Eq. 6's error falls and the trained network ranks unseen links correctly.
func TestMLPLearnsTinySet(t *testing.T) {
	var samples []LinkSample
	for i := 0; i < 20; i++ {
		a, p := float64(i%5)/4, float64(i%4)/3
		samples = append(samples, LinkSample{X: LinkFeatures{a, a / 2, 0, 0, 0, 0, p}, Target: 0.1 + 0.6*a + 0.2*p})
	}
	m, err := TrainLinkMLP(samples, MLPParams{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.SSE) != 1000 || m.SSE[len(m.SSE)-1] >= m.SSE[0]/5 {
		t.Fatalf("SSE %v → %v over %d epochs: did not fall", m.SSE[0], m.SSE[len(m.SSE)-1], len(m.SSE))
	}
	good := m.Predict([]float64{0.9, 0.45, 0, 0, 0, 0, 0.5})
	bad := m.Predict([]float64{0.1, 0.05, 0, 0, 0, 0, 0.5})
	if good <= bad || math.Abs(good-(0.1+0.54+0.1)) > 0.1 {
		t.Errorf("trained network: on-topic anchor %.3f, off-topic %.3f", good, bad)
	}
	path := filepath.Join(t.TempDir(), "mlp.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadMLP(path)
	if err != nil || back.Predict([]float64{0.9, 0.45, 0, 0, 0, 0, 0.5}) != good {
		t.Errorf("round trip: %v", err)
	}
	if _, err := TrainLinkMLP(nil, MLPParams{}); err == nil {
		t.Error("training without samples must fail")
	}
	if _, err := LoadMLP(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("loading a missing file must fail")
	}
}

// TestLinkSamplerPairsFeaturesWithPostScore: the training stage records each link's seven
// features when discovered and pairs them with the post-score of the page it led to.
func TestLinkSamplerPairsFeaturesWithPostScore(t *testing.T) {
	rel := testRelevance(t)
	s := NewLinkSampler(rel, nil, NewRandom(1), ContextDisjoint, 0)
	rel.AddObserver(s)
	s.Score(seedLink(t, "http://a.test/"))
	on := fetched(t, rel, "http://a.test/", onTopicPage)
	l := link(t, on, 0) // anchor "reactor safety" → http://a.test/r1
	s.Score(l)
	if len(s.Samples()) != 0 {
		t.Fatal("a seed has no discovering link: no sample")
	}
	child := fetched(t, rel, "http://a.test/r1", offTopicPage)
	got := s.Samples()
	if len(got) != 1 {
		t.Fatalf("%d samples, want 1", len(got))
	}
	if got[0].Target != *child.Record.Relevance || got[0].X[6] != *on.Record.Relevance || got[0].X[0] == 0 {
		t.Errorf("sample %+v: want target %v, page feature %v, a non-zero anchor feature", got[0], *child.Record.Relevance, *on.Record.Relevance)
	}
}
