package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// NaiveBayes is Gaussian naive Bayes: per class, a normal distribution for each feature,
// independent given the class. Variances get a floor of 1e-9 times the largest feature
// variance so constant features do not divide by zero.
type NaiveBayes struct{}

// Name implements Learner.
func (NaiveBayes) Name() string { return "naive Bayes" }

// BayesModel is a trained Gaussian naive Bayes.
type BayesModel struct {
	LogPrior []float64   `json:"log_prior"`
	Mean     [][]float64 `json:"mean"` // [class][feature]
	Var      [][]float64 `json:"var"`
}

// Fit implements Learner.
func (NaiveBayes) Fit(d *Dataset) (Model, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k, f := len(d.Classes), len(d.Features)
	m := &BayesModel{LogPrior: make([]float64, k), Mean: make([][]float64, k), Var: make([][]float64, k)}
	counts := d.ClassCounts()
	for c := range m.Mean {
		m.Mean[c] = make([]float64, f)
		m.Var[c] = make([]float64, f)
	}
	for i, x := range d.X {
		for j, v := range x {
			m.Mean[d.Y[i]][j] += v
		}
	}
	for c := range m.Mean {
		for j := range m.Mean[c] {
			m.Mean[c][j] /= math.Max(float64(counts[c]), 1)
		}
	}
	for i, x := range d.X {
		for j, v := range x {
			dv := v - m.Mean[d.Y[i]][j]
			m.Var[d.Y[i]][j] += dv * dv
		}
	}
	var floor float64
	for c := range m.Var {
		for j := range m.Var[c] {
			m.Var[c][j] /= math.Max(float64(counts[c]), 1)
			floor = math.Max(floor, m.Var[c][j])
		}
	}
	floor = math.Max(floor*1e-9, 1e-12)
	for c := range m.Var {
		for j := range m.Var[c] {
			m.Var[c][j] += floor
		}
		if counts[c] == 0 {
			m.LogPrior[c] = math.Inf(-1)
		} else {
			m.LogPrior[c] = math.Log(float64(counts[c]) / float64(len(d.Y)))
		}
	}
	return m, nil
}

// Predict implements Model.
func (m *BayesModel) Predict(x []float64) int {
	best, bestScore := 0, math.Inf(-1)
	for c := range m.LogPrior {
		s := m.LogPrior[c]
		for j, v := range x {
			if j >= len(m.Mean[c]) {
				break
			}
			dv := v - m.Mean[c][j]
			s -= 0.5*math.Log(2*math.Pi*m.Var[c][j]) + dv*dv/(2*m.Var[c][j])
		}
		if s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

// KNN is k-nearest neighbours with Euclidean distance over features scaled to [0, 1] by
// the training data's ranges (as WEKA's IBk, which seed 004 ran with k = 1 and 2). Votes
// are equal; a tie goes to the class of the nearest tied neighbour.
type KNN struct{ K int }

// Name implements Learner.
func (k KNN) Name() string { return fmt.Sprintf("%d-NN", max(k.K, 1)) }

// KNNModel keeps the training rows, scaled.
type KNNModel struct {
	K     int         `json:"k"`
	Min   []float64   `json:"min"`
	Range []float64   `json:"range"`
	X     [][]float64 `json:"x"`
	Y     []int       `json:"y"`
	NumY  int         `json:"classes"`
}

// Fit implements Learner.
func (k KNN) Fit(d *Dataset) (Model, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	f := len(d.Features)
	m := &KNNModel{K: max(k.K, 1), Min: make([]float64, f), Range: make([]float64, f), Y: d.Y, NumY: len(d.Classes)}
	for j := 0; j < f; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range d.X {
			lo, hi = math.Min(lo, x[j]), math.Max(hi, x[j])
		}
		m.Min[j], m.Range[j] = lo, hi-lo
	}
	m.X = make([][]float64, len(d.X))
	for i, x := range d.X {
		m.X[i] = m.scale(x)
	}
	return m, nil
}

func (m *KNNModel) scale(x []float64) []float64 {
	s := make([]float64, len(m.Min))
	for j := range s {
		if j < len(x) && m.Range[j] > 0 {
			s[j] = (x[j] - m.Min[j]) / m.Range[j]
		}
	}
	return s
}

// Predict implements Model.
func (m *KNNModel) Predict(x []float64) int {
	q := m.scale(x)
	type nb struct {
		d float64
		y int
	}
	best := make([]nb, 0, m.K+1)
	for i, r := range m.X {
		var d float64
		for j, v := range r {
			dv := v - q[j]
			d += dv * dv
		}
		if len(best) < m.K || d < best[len(best)-1].d {
			best = append(best, nb{d, m.Y[i]})
			sort.Slice(best, func(a, b int) bool { return best[a].d < best[b].d })
			if len(best) > m.K {
				best = best[:m.K]
			}
		}
	}
	votes := make([]int, m.NumY)
	for _, b := range best {
		votes[b.y]++
	}
	top := 0
	for _, v := range votes {
		top = max(top, v)
	}
	for _, b := range best { // the nearest neighbour among the tied classes
		if votes[b.y] == top {
			return b.y
		}
	}
	return 0
}

// ZeroR predicts the majority class of the training data (WEKA's ZeroR baseline).
type ZeroR struct{}

// Name implements Learner.
func (ZeroR) Name() string { return "majority" }

// ConstantModel always predicts one class.
type ConstantModel struct {
	Class int `json:"class"`
}

// Fit implements Learner.
func (ZeroR) Fit(d *Dataset) (Model, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &ConstantModel{Class: majority(d.ClassCounts())}, nil
}

// Predict implements Model.
func (m *ConstantModel) Predict([]float64) int { return m.Class }

// Random assigns a class uniformly at random: seed 004's RandomClassifier, the stand-in for
// approaches that assume nothing about a new page.
type Random struct{ Seed uint64 }

// Name implements Learner.
func (Random) Name() string { return "random" }

// RandomModel draws classes from a seeded generator.
type RandomModel struct {
	classes int
	rng     *rand.Rand
}

// Fit implements Learner.
func (r Random) Fit(d *Dataset) (Model, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &RandomModel{classes: len(d.Classes), rng: rand.New(rand.NewPCG(r.Seed, 0x7a4d))}, nil
}

// Predict implements Model.
func (m *RandomModel) Predict([]float64) int { return m.rng.IntN(m.classes) }
