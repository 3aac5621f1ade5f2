package classify

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTables15to17 is seed 004's evaluation of the initial classifiers in the live case
// study: Tables 13 and 14 (pages monitored per group, and how many changed daily) give the
// 2×2 confusion matrices of Tables 15 and 16 ("changes daily" = group 0 vs the rest), whose
// measures are Table 17.
func TestTables15to17(t *testing.T) {
	type group struct{ monitored, daily int }
	fromGroups := func(g [4]group) Binary {
		b := Binary{TP: g[0].daily, FP: g[0].monitored - g[0].daily}
		for _, x := range g[1:] {
			b.FN += x.daily
			b.TN += x.monitored - x.daily
		}
		return b
	}
	random := fromGroups([4]group{{25670, 2042}, {2382, 223}, {2237, 291}, {51152, 4045}}) // Table 13
	tree := fromGroups([4]group{{25670, 6161}, {2382, 173}, {2237, 12}, {51152, 255}})     // Table 14
	if random != (Binary{TP: 2042, FN: 4559, FP: 23628, TN: 51212}) {
		t.Errorf("Table 15 from Table 13: %+v", random)
	}
	if tree != (Binary{TP: 6161, FN: 440, FP: 19509, TN: 55331}) {
		t.Errorf("Table 16 from Table 14: %+v", tree)
	}
	// Table 17. The dissertation gives three decimals, sometimes rounded (accuracy 0.6539 →
	// 0.654), sometimes truncated (precision 0.0795 → 0.079), and computes F from those
	// precision and recall values (random: 2·0.079·0.309/0.388 = 0.1258 → 0.125, where the
	// exact F is 0.1266).
	for _, tc := range []struct {
		name string
		b    Binary
		want [6]float64 // accuracy, recall, specificity, precision, NPV, F
	}{
		{"random", random, [6]float64{0.654, 0.309, 0.684, 0.079, 0.918, 0.125}},
		{"tree", tree, [6]float64{0.755, 0.933, 0.739, 0.240, 0.992, 0.381}},
	} {
		trunc := func(x float64) float64 { return math.Floor(x*1000) / 1000 }
		got := [6]float64{tc.b.Accuracy(), tc.b.Recall(), tc.b.Specificity(), tc.b.Precision(), tc.b.NPV(), tc.b.FMeasure()}
		for i := 0; i < 5; i++ {
			if trunc(got[i]) != tc.want[i] && math.Round(got[i]*1000)/1000 != tc.want[i] {
				t.Errorf("%s measure %d: %.4f, Table 17 says %.3f", tc.name, i, got[i], tc.want[i])
			}
		}
		p, r := trunc(got[3]), trunc(got[1])
		if f := trunc(2 * p * r / (p + r)); f != tc.want[5] {
			t.Errorf("%s F from the table's precision and recall: %.3f, Table 17 says %.3f", tc.name, f, tc.want[5])
		}
		if math.Abs(got[5]-tc.want[5]) > 0.002 {
			t.Errorf("%s exact F %.4f is far from Table 17's %.3f", tc.name, got[5], tc.want[5])
		}
	}
	// The same numbers through a confusion matrix.
	c := NewConfusion([]string{"daily", "other"})
	c.Counts = [][]int{{6161, 440}, {19509, 55331}}
	if c.OneVsRest(0) != tree || math.Round(c.Accuracy()*1000) != 755 {
		t.Errorf("confusion matrix view: %+v, accuracy %v", c.OneVsRest(0), c.Accuracy())
	}
	if !strings.Contains(c.String(), "0.382") {
		t.Errorf("report lacks the F-measure:\n%s", c)
	}
	if (Binary{}).Precision() != 0 {
		t.Error("a zero denominator must give 0")
	}
}

// blobs makes a dataset of Gaussian clusters, one per class, with noise features.
func blobs(n, classes, noise int, spread float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 9))
	d := &Dataset{}
	for c := 0; c < classes; c++ {
		d.Classes = append(d.Classes, string(rune('a'+c)))
	}
	d.Features = []string{"x", "y"}
	for k := 0; k < noise; k++ {
		d.Features = append(d.Features, "noise"+string(rune('0'+k)))
	}
	for i := 0; i < n; i++ {
		c := i % classes
		row := []float64{float64(c)*3 + rng.NormFloat64()*spread, float64(c%2)*2 + rng.NormFloat64()*spread}
		for k := 0; k < noise; k++ {
			row = append(row, rng.NormFloat64())
		}
		d.X = append(d.X, row)
		d.Y = append(d.Y, c)
	}
	return d
}

func TestLearnersOnBlobs(t *testing.T) {
	d := blobs(600, 3, 1, 0.6, 1)
	for _, l := range []Learner{Tree{}, Tree{NoPrune: true}, NaiveBayes{}, KNN{K: 1}, KNN{K: 2}} {
		conf, err := CrossValidate(d, l, 10, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if conf.Total() != 600 {
			t.Errorf("%s: %d predictions, want 600", l.Name(), conf.Total())
		}
		if acc := conf.Accuracy(); acc < 0.9 {
			t.Errorf("%s: cross-validated accuracy %.3f on separable blobs", l.Name(), acc)
		}
	}
	for _, l := range []Learner{ZeroR{}, Random{Seed: 3}} {
		conf, err := CrossValidate(d, l, 10, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if acc := conf.Accuracy(); acc > 0.45 {
			t.Errorf("baseline %s: accuracy %.3f, want about 1/3", l.Name(), acc)
		}
	}
}

// TestTreePruning: on noisy labels, the pruned tree is smaller than the unpruned one and
// generalizes at least as well, as in seed 004's Table 8.
func TestTreePruning(t *testing.T) {
	d := blobs(1500, 2, 3, 1.5, 2)
	full, err := Tree{NoPrune: true}.Fit(d)
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := Tree{}.Fit(d)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := full.(*TreeModel).Size()
	pn, pl := pruned.(*TreeModel).Size()
	if pn >= fn || pl < 2 {
		t.Errorf("pruned tree has %d nodes (%d leaves), unpruned %d", pn, pl, fn)
	}
	cf, _ := CrossValidate(d, Tree{NoPrune: true}, 10, rand.New(rand.NewPCG(4, 4)))
	cp, _ := CrossValidate(d, Tree{}, 10, rand.New(rand.NewPCG(4, 4)))
	if cp.Accuracy() < cf.Accuracy()-0.01 {
		t.Errorf("pruned accuracy %.3f below unpruned %.3f", cp.Accuracy(), cf.Accuracy())
	}
	if _, err := (Tree{CF: 0.7}).Fit(d); err == nil {
		t.Error("a pruning confidence of 0.7 was accepted")
	}
}

func TestTreeThreshold(t *testing.T) {
	d := &Dataset{Features: []string{"v"}, Classes: []string{"lo", "hi"}}
	for i := 0; i < 40; i++ {
		d.X = append(d.X, []float64{float64(i)})
		d.Y = append(d.Y, map[bool]int{false: 0, true: 1}[i >= 25])
	}
	m, err := Tree{}.Fit(d)
	if err != nil {
		t.Fatal(err)
	}
	root := m.(*TreeModel).Root
	if root.Feature != 0 || root.Threshold != 24.5 {
		t.Errorf("split %d <= %v, want v <= 24.5", root.Feature, root.Threshold)
	}
	if m.Predict([]float64{10}) != 0 || m.Predict([]float64{30}) != 1 {
		t.Error("wrong predictions on a clean threshold")
	}
}

func TestKNNTieGoesToNearest(t *testing.T) {
	d := &Dataset{Features: []string{"v"}, Classes: []string{"a", "b"},
		X: [][]float64{{0}, {10}, {20}}, Y: []int{0, 1, 1}}
	m, _ := KNN{K: 2}.Fit(d)
	if got := m.Predict([]float64{4}); got != 0 {
		t.Errorf("k=2 tie between a (distance 4) and b (6): predicted %d, want a", got)
	}
	if got := m.Predict([]float64{16}); got != 1 {
		t.Errorf("predicted %d, want b", got)
	}
}

func TestBalance(t *testing.T) {
	d := &Dataset{Features: []string{"v"}, Classes: []string{"a", "b", "c"}}
	for i := 0; i < 100; i++ {
		d.X = append(d.X, []float64{float64(i)})
		d.Y = append(d.Y, map[bool]int{true: 0, false: 1}[i < 80])
	}
	b := d.Balance(rand.New(rand.NewPCG(1, 1)))
	if got := b.ClassCounts(); got[0] != 20 || got[1] != 20 || got[2] != 0 {
		t.Errorf("balanced counts %v, want 20/20/0", got)
	}
}

// TestBackwardElimination drops features that carry no signal and keeps the informative
// ones.
func TestBackwardElimination(t *testing.T) {
	d := blobs(400, 2, 2, 0.7, 5)
	steps, err := BackwardElimination(d, NaiveBayes{}, 5, 0.005, 1)
	if err != nil {
		t.Fatal(err)
	}
	final := steps[len(steps)-1]
	if !contains(final.Features, "x") {
		t.Errorf("selection %v dropped the informative feature x", final.Features)
	}
	if contains(final.Features, "noise0") && contains(final.Features, "noise1") {
		t.Errorf("selection %v kept both noise features", final.Features)
	}
	if final.Accuracy < steps[0].Accuracy-0.005 {
		t.Errorf("selection lost accuracy: %.3f -> %.3f", steps[0].Accuracy, final.Accuracy)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestDatasetValidate(t *testing.T) {
	bad := []*Dataset{
		{Features: []string{"a"}, Classes: []string{"x"}},
		{Features: []string{"a"}, Classes: []string{"x"}, X: [][]float64{{1}}, Y: []int{0, 0}},
		{Features: []string{"a"}, Classes: []string{"x"}, X: [][]float64{{1, 2}}, Y: []int{0}},
		{Features: []string{"a"}, Classes: []string{"x"}, X: [][]float64{{math.NaN()}}, Y: []int{0}},
		{Features: []string{"a"}, Classes: []string{"x"}, X: [][]float64{{1}}, Y: []int{3}},
	}
	for i, d := range bad {
		if _, err := (Tree{}).Fit(d); err == nil {
			t.Errorf("dataset %d accepted", i)
		}
	}
	if _, err := CrossValidate(blobs(10, 2, 0, 1, 1), Tree{}, 20, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("20 folds of 10 rows accepted")
	}
	if _, err := blobs(10, 2, 0, 1, 1).Columns([]string{"z"}); err == nil {
		t.Error("an unknown column was accepted")
	}
}

// TestKMeans1DSeed004 clusters change rates shaped like seed 004's data and recovers four
// groups near the true rates.
func TestKMeans1DSeed004(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	truth := []float64{1, 1 / 3.1, 1 / 31.8, 1 / 96.9}
	var values []float64
	for i := 0; i < 4000; i++ {
		r := truth[i%4]
		values = append(values, r*(1+0.1*rng.NormFloat64()))
	}
	cents, assign := KMeans1D(values, 4)
	if len(cents) != 4 || len(assign) != len(values) {
		t.Fatalf("centroids %v", cents)
	}
	for k, want := range []float64{truth[3], truth[2], truth[1], truth[0]} {
		if math.Abs(cents[k]-want) > 0.02*math.Max(want, 0.1) {
			t.Errorf("centroid %d = %.4f, want about %.4f", k, cents[k], want)
		}
	}
	if c, _ := KMeans1D([]float64{1, 1, 1}, 3); len(c) != 1 {
		t.Errorf("three equal values gave %d clusters", len(c))
	}
	if c, a := KMeans1D(nil, 2); c != nil || a != nil {
		t.Error("no values must give no clusters")
	}
}

func TestSaveLoad(t *testing.T) {
	d := blobs(200, 3, 0, 0.5, 8)
	for _, l := range []Learner{Tree{}, NaiveBayes{}, KNN{K: 1}, ZeroR{}} {
		m, err := l.Fit(d)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Save(&buf, m, d.Features, d.Classes, nil); err != nil {
			t.Fatal(err)
		}
		s, err := Load(&buf)
		if err != nil {
			t.Fatalf("%s: %v", l.Name(), err)
		}
		for i, x := range d.X[:50] {
			if s.Predict(x) != m.Predict(x) {
				t.Fatalf("%s: row %d predicted differently after a round trip", l.Name(), i)
			}
		}
	}
	if err := Save(&bytes.Buffer{}, &RandomModel{}, nil, nil, nil); err == nil {
		t.Error("a random model was saved")
	}
	for _, bad := range []string{
		`{}`, `{"kind":"tree","features":["a"],"classes":["x"],"model":{"root":{"f":3,"c":0}}}`,
		`{"kind":"tree","features":["a"],"classes":["x"],"model":{"root":{"f":0,"c":0}}}`,
		`{"kind":"bayes","features":["a"],"classes":["x"],"model":{"log_prior":[0],"mean":[[1,2]],"var":[[1]]}}`,
		`{"kind":"knn","features":["a"],"classes":["x"],"model":{"k":1,"min":[0],"range":[1],"x":[[1]],"y":[4],"classes":1}}`,
		`{"kind":"majority","features":["a"],"classes":["x"],"model":{"class":2}}`,
		`{"kind":"svm","features":["a"],"classes":["x"],"model":{}}`, `not json`,
	} {
		if _, err := Load(strings.NewReader(bad)); err == nil {
			t.Errorf("Load(%s) accepted", bad)
		}
	}
}

func FuzzLoad(f *testing.F) {
	d := blobs(30, 2, 0, 0.5, 1)
	for _, l := range []Learner{Tree{}, NaiveBayes{}, KNN{K: 2}} {
		m, _ := l.Fit(d)
		var buf bytes.Buffer
		_ = Save(&buf, m, d.Features, d.Classes, nil)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Load(bytes.NewReader(b))
		if err != nil {
			return
		}
		_ = s.Predict(make([]float64, len(s.Features)))
		_ = s.Predict(nil)
	})
}

func BenchmarkTreePredict(b *testing.B) {
	d := blobs(20000, 4, 4, 1, 1)
	m, _ := Tree{}.Fit(d)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Predict(d.X[i%len(d.X)])
	}
}

func BenchmarkTreeFit(b *testing.B) {
	d := blobs(20000, 4, 4, 1, 1)
	for i := 0; i < b.N; i++ {
		Tree{}.Fit(d)
	}
}
