package focus

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// syntheticExamples writes n relevant and 2n irrelevant documents from word pools that
// overlap, like real topical and off-topic pages do.
func syntheticExamples(n int, seed uint64) []Example {
	rng := rand.New(rand.NewPCG(seed, 1))
	topic := strings.Fields("reactor uranium fission coolant neutron isotope radiation plutonium enrichment containment")
	shared := strings.Fields("power energy plant fuel electric grid safety technology")
	other := strings.Fields("recipe butter match goal stock bank travel hotel garden guitar flour league")
	common := strings.Fields("the of and a year people time world report new first city week")
	doc := func(pools ...[]string) string {
		var b strings.Builder
		for i := 0; i < 60; i++ {
			pool := pools[rng.IntN(len(pools))]
			b.WriteString(pool[rng.IntN(len(pool))] + " ")
		}
		return b.String()
	}
	var out []Example
	for i := 0; i < n; i++ {
		out = append(out, Example{Page: NewPageText("", "", doc(topic, shared, common, common), "en"), Relevant: true})
	}
	for i := 0; i < 2*n; i++ {
		out = append(out, Example{Page: NewPageText("", "", doc(other, shared, common, common), "en"), Relevant: false})
	}
	return out
}

func TestPageModel(t *testing.T) {
	train := syntheticExamples(40, 1)
	m, err := TrainPageModel(train, TrainOptions{Name: "nuclear"})
	if err != nil {
		t.Fatal(err)
	}
	test := syntheticExamples(20, 2)
	right := 0
	for _, e := range test {
		if (m.Probability(e.Page) >= m.Threshold) == e.Relevant {
			right++
		}
	}
	if acc := float64(right) / float64(len(test)); acc < 0.95 {
		t.Errorf("held-out accuracy %.2f", acc)
	}
	cv, err := CrossValidate(train, TrainOptions{}, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if cv.Precision < 0.9 || cv.Recall < 0.9 || cv.TP+cv.FP+cv.FN+cv.TN != len(train) {
		t.Errorf("cross-validation %+v", cv)
	}
	path := filepath.Join(t.TempDir(), "page.json")
	m.CV = &cv
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPageModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if p1, p2 := m.Probability(test[0].Page), back.Probability(test[0].Page); p1 != p2 {
		t.Errorf("round trip changes probabilities: %v → %v", p1, p2)
	}
	// The derived topic points link strategies at the model's strongest relevant words.
	top := back.Topic()
	if c := top.TextCosine("uranium reactor", "en"); c < 0.2 {
		t.Errorf("derived topic: cosine %.2f of two relevant words", c)
	}
	// A judge with only a model labels pages with the model's name.
	j := (&Judge{Model: back}).Judge(test[0].Page)
	if !j.Relevant || j.Topics[0] != "nuclear" {
		t.Errorf("model judgment %+v", j)
	}
}

func TestPageModelErrors(t *testing.T) {
	only := syntheticExamples(5, 1)[:5]
	if _, err := TrainPageModel(only, TrainOptions{}); err == nil {
		t.Error("one class only must fail")
	}
	if _, err := CrossValidate(syntheticExamples(2, 1), TrainOptions{}, 5, 1); err == nil {
		t.Error("fewer examples than folds must fail")
	}
	path := filepath.Join(t.TempDir(), "x.json")
	(&MLP{Kind: "sonda-link-mlp"}).Save(path)
	if _, err := LoadPageModel(path); err == nil || !strings.Contains(err.Error(), "sonda train page") {
		t.Errorf("loading another kind of file: %v", err)
	}
}
