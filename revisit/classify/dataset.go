package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dataset is a table of numeric feature vectors with class labels.
type Dataset struct {
	Features []string    // names of the columns of X
	Classes  []string    // names of the labels
	X        [][]float64 // one row per instance
	Y        []int       // label of each row, an index into Classes
}

// Validate reports a dataset learners cannot use.
func (d *Dataset) Validate() error {
	if len(d.X) != len(d.Y) {
		return fmt.Errorf("classify: %d rows but %d labels", len(d.X), len(d.Y))
	}
	if len(d.X) == 0 {
		return fmt.Errorf("classify: the dataset is empty")
	}
	for i, row := range d.X {
		if len(row) != len(d.Features) {
			return fmt.Errorf("classify: row %d has %d values for %d features", i, len(row), len(d.Features))
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("classify: row %d, feature %s: %v is not a number", i, d.Features[j], v)
			}
		}
		if d.Y[i] < 0 || d.Y[i] >= len(d.Classes) {
			return fmt.Errorf("classify: row %d: label %d is not one of the %d classes", i, d.Y[i], len(d.Classes))
		}
	}
	return nil
}

// subset returns the rows idx (sharing their storage).
func (d *Dataset) subset(idx []int) *Dataset {
	s := &Dataset{Features: d.Features, Classes: d.Classes, X: make([][]float64, len(idx)), Y: make([]int, len(idx))}
	for i, k := range idx {
		s.X[i], s.Y[i] = d.X[k], d.Y[k]
	}
	return s
}

// Columns returns a dataset with only the named features, in that order.
func (d *Dataset) Columns(names []string) (*Dataset, error) {
	cols := make([]int, len(names))
	for i, n := range names {
		cols[i] = -1
		for j, f := range d.Features {
			if f == n {
				cols[i] = j
			}
		}
		if cols[i] < 0 {
			return nil, fmt.Errorf("classify: no feature %q (have %v)", n, d.Features)
		}
	}
	s := &Dataset{Features: append([]string{}, names...), Classes: d.Classes, Y: d.Y, X: make([][]float64, len(d.X))}
	for i, row := range d.X {
		r := make([]float64, len(cols))
		for j, c := range cols {
			r[j] = row[c]
		}
		s.X[i] = r
	}
	return s, nil
}

// ClassCounts counts the rows of each class.
func (d *Dataset) ClassCounts() []int {
	n := make([]int, len(d.Classes))
	for _, y := range d.Y {
		n[y]++
	}
	return n
}

// Balance samples every class down to the size of the smallest non-empty one, as seed 004
// did (20,000 instances, 5,000 per class). Classes without rows stay empty.
func (d *Dataset) Balance(rng *rand.Rand) *Dataset {
	counts := d.ClassCounts()
	smallest := 0
	for _, c := range counts {
		if c > 0 && (smallest == 0 || c < smallest) {
			smallest = c
		}
	}
	byClass := make([][]int, len(d.Classes))
	for i, y := range d.Y {
		byClass[y] = append(byClass[y], i)
	}
	var keep []int
	for _, rows := range byClass {
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		keep = append(keep, rows[:min(len(rows), smallest)]...)
	}
	rng.Shuffle(len(keep), func(a, b int) { keep[a], keep[b] = keep[b], keep[a] })
	return d.subset(keep)
}

// folds splits row indexes into k stratified folds: each class's rows are dealt out in
// turn, so every fold has about the same class mix.
func (d *Dataset) folds(k int, rng *rand.Rand) [][]int {
	byClass := make([][]int, len(d.Classes))
	for i, y := range d.Y {
		byClass[y] = append(byClass[y], i)
	}
	out := make([][]int, k)
	next := 0
	for _, rows := range byClass {
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		for _, r := range rows {
			out[next%k] = append(out[next%k], r)
			next++
		}
	}
	return out
}

// Learner trains a model on a dataset.
type Learner interface {
	Name() string
	Fit(d *Dataset) (Model, error)
}

// Model predicts a class from a feature vector (in the training dataset's column order).
type Model interface {
	Predict(x []float64) int
}

// CrossValidate runs stratified k-fold cross-validation (seed 004 used k = 10) and returns
// the pooled confusion matrix of the held-out predictions.
func CrossValidate(d *Dataset, l Learner, k int, rng *rand.Rand) (*Confusion, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if k < 2 || k > len(d.X) {
		return nil, fmt.Errorf("classify: %d folds for %d rows: need 2 ≤ k ≤ rows", k, len(d.X))
	}
	conf := NewConfusion(d.Classes)
	folds := d.folds(k, rng)
	for f, test := range folds {
		var train []int
		for g, rows := range folds {
			if g != f {
				train = append(train, rows...)
			}
		}
		m, err := l.Fit(d.subset(train))
		if err != nil {
			return nil, fmt.Errorf("classify: %s on fold %d: %w", l.Name(), f+1, err)
		}
		for _, r := range test {
			conf.Add(d.Y[r], m.Predict(d.X[r]))
		}
	}
	return conf, nil
}

// Resubstitution trains on the whole dataset and scores it on the same rows (the
// dissertation's resubstitution error is 1 minus this accuracy).
func Resubstitution(d *Dataset, l Learner) (*Confusion, Model, error) {
	if err := d.Validate(); err != nil {
		return nil, nil, err
	}
	m, err := l.Fit(d)
	if err != nil {
		return nil, nil, err
	}
	conf := NewConfusion(d.Classes)
	for i, x := range d.X {
		conf.Add(d.Y[i], m.Predict(x))
	}
	return conf, m, nil
}

// Step is one round of backward elimination: the features kept and their cross-validated
// accuracy.
type Step struct {
	Features []string
	Accuracy float64
}

// BackwardElimination is wrapper feature selection (seed 004, after Kohavi & John): start
// with every feature; at each round, cross-validate the learner without each remaining
// feature in turn and drop the one whose removal scores best, as long as accuracy does not
// fall by more than tolerance. It returns the rounds taken, the last being the selection.
// The same seed is used for every evaluation, so all candidates see the same folds.
func BackwardElimination(d *Dataset, l Learner, k int, tolerance float64, seed uint64) ([]Step, error) {
	eval := func(names []string) (float64, error) {
		sub, err := d.Columns(names)
		if err != nil {
			return 0, err
		}
		conf, err := CrossValidate(sub, l, k, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			return 0, err
		}
		return conf.Accuracy(), nil
	}
	current := append([]string{}, d.Features...)
	acc, err := eval(current)
	if err != nil {
		return nil, err
	}
	steps := []Step{{Features: append([]string{}, current...), Accuracy: acc}}
	for len(current) > 1 {
		best, bestAcc := -1, math.Inf(-1)
		for i := range current {
			cand := append(append([]string{}, current[:i]...), current[i+1:]...)
			a, err := eval(cand)
			if err != nil {
				return nil, err
			}
			if a > bestAcc {
				best, bestAcc = i, a
			}
		}
		if bestAcc < acc-tolerance {
			break
		}
		current = append(current[:best:best], current[best+1:]...)
		acc = bestAcc
		steps = append(steps, Step{Features: append([]string{}, current...), Accuracy: acc})
	}
	return steps, nil
}
