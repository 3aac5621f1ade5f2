package classify

import (
	"fmt"
	"math"
	"sort"
)

// Tree is a C4.5-style decision tree learner (Quinlan 1993, as WEKA's J48): binary splits
// on numeric thresholds chosen by gain ratio among the candidates whose information gain is
// at least the average (with C4.5 release 8's penalty of log2(candidate thresholds)/N on
// numeric splits), leaves of at least MinLeaf instances, and pessimistic post-pruning by
// subtree replacement at confidence CF.
type Tree struct {
	MinLeaf  int     // default 2 (J48's minNumObj)
	CF       float64 // pruning confidence, default 0.25 (J48's); 0 < CF < 0.5
	NoPrune  bool    // keep the full tree
	MaxDepth int     // guard against pathological data, default 64
}

// Name implements Learner.
func (t Tree) Name() string {
	if t.NoPrune {
		return "tree (unpruned)"
	}
	return "tree"
}

// Node is a tree node: a leaf when Feature < 0.
type Node struct {
	Feature   int     `json:"f"`
	Threshold float64 `json:"t,omitempty"` // go left when x[Feature] <= Threshold
	Left      *Node   `json:"l,omitempty"`
	Right     *Node   `json:"r,omitempty"`
	Class     int     `json:"c"`           // majority class of the training rows here
	Counts    []int   `json:"n,omitempty"` // training rows per class
}

// TreeModel is a trained tree.
type TreeModel struct {
	Root *Node `json:"root"`
}

// Predict implements Model.
func (m *TreeModel) Predict(x []float64) int {
	n := m.Root
	for n.Feature >= 0 {
		if n.Feature < len(x) && x[n.Feature] > n.Threshold {
			n = n.Right
		} else {
			n = n.Left
		}
	}
	return n.Class
}

// Size returns the number of nodes and leaves (the dissertation's Table 8 reports both).
func (m *TreeModel) Size() (nodes, leaves int) {
	var walk func(*Node)
	walk = func(n *Node) {
		nodes++
		if n.Feature < 0 {
			leaves++
			return
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(m.Root)
	return nodes, leaves
}

// Fit implements Learner.
func (t Tree) Fit(d *Dataset) (Model, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if t.MinLeaf <= 0 {
		t.MinLeaf = 2
	}
	if t.CF == 0 {
		t.CF = 0.25
	}
	if t.CF <= 0 || t.CF >= 0.5 {
		return nil, fmt.Errorf("classify: tree pruning confidence must be in (0, 0.5), got %v", t.CF)
	}
	if t.MaxDepth <= 0 {
		t.MaxDepth = 64
	}
	rows := make([]int, len(d.X))
	for i := range rows {
		rows[i] = i
	}
	b := &treeBuilder{t: t, d: d, z: normalQuantile(1 - t.CF)}
	root := b.grow(rows, 0)
	if !t.NoPrune {
		b.prune(root)
	}
	return &TreeModel{Root: root}, nil
}

type treeBuilder struct {
	t Tree
	d *Dataset
	z float64
}

func (b *treeBuilder) counts(rows []int) []int {
	c := make([]int, len(b.d.Classes))
	for _, r := range rows {
		c[b.d.Y[r]]++
	}
	return c
}

func majority(c []int) int {
	best := 0
	for k, v := range c {
		if v > c[best] {
			best = k
		}
	}
	return best
}

func entropy(c []int, n int) float64 {
	if n == 0 {
		return 0
	}
	var h float64
	for _, v := range c {
		if v > 0 {
			p := float64(v) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}

type split struct {
	feature   int
	threshold float64
	gain      float64
	ratio     float64
}

func (b *treeBuilder) grow(rows []int, depth int) *Node {
	counts := b.counts(rows)
	n := &Node{Feature: -1, Class: majority(counts), Counts: counts}
	if counts[n.Class] == len(rows) || len(rows) < 2*b.t.MinLeaf || depth >= b.t.MaxDepth {
		return n
	}
	base := entropy(counts, len(rows))
	var cands []split
	for f := range b.d.Features {
		if s, ok := b.bestThreshold(rows, f, base); ok {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return n
	}
	var avg float64
	for _, s := range cands {
		avg += s.gain
	}
	avg /= float64(len(cands))
	best := -1
	for i, s := range cands {
		if s.gain >= avg-1e-12 && (best < 0 || s.ratio > cands[best].ratio) {
			best = i
		}
	}
	s := cands[best]
	var left, right []int
	for _, r := range rows {
		if b.d.X[r][s.feature] <= s.threshold {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	n.Feature, n.Threshold = s.feature, s.threshold
	n.Left, n.Right = b.grow(left, depth+1), b.grow(right, depth+1)
	return n
}

// bestThreshold finds feature f's split of rows with the highest information gain, each
// side holding at least MinLeaf rows, and returns it with its gain ratio.
func (b *treeBuilder) bestThreshold(rows []int, f int, base float64) (split, bool) {
	sorted := append([]int{}, rows...)
	x := b.d.X
	sort.Slice(sorted, func(i, j int) bool { return x[sorted[i]][f] < x[sorted[j]][f] })
	total := len(sorted)
	left := make([]int, len(b.d.Classes))
	right := b.counts(sorted)
	best := split{feature: f, gain: math.Inf(-1)}
	candidates := 0
	for i := 0; i < total-1; i++ {
		y := b.d.Y[sorted[i]]
		left[y]++
		right[y]--
		v, next := x[sorted[i]][f], x[sorted[i+1]][f]
		if v == next {
			continue
		}
		candidates++
		nl, nr := i+1, total-i-1
		if nl < b.t.MinLeaf || nr < b.t.MinLeaf {
			continue
		}
		gain := base - (float64(nl)*entropy(left, nl)+float64(nr)*entropy(right, nr))/float64(total)
		if gain > best.gain {
			best.gain = gain
			best.threshold = v + (next-v)/2
			pl, pr := float64(nl)/float64(total), float64(nr)/float64(total)
			best.ratio = -pl*math.Log2(pl) - pr*math.Log2(pr) // split information, divided below
		}
	}
	if math.IsInf(best.gain, -1) {
		return split{}, false
	}
	best.gain -= math.Log2(float64(max(candidates, 1))) / float64(total)
	if best.gain <= 0 || best.ratio <= 0 {
		return split{}, false
	}
	best.ratio = best.gain / best.ratio
	return best, true
}

// prune replaces, bottom-up, every subtree whose pessimistic error estimate is no better
// than that of a leaf in its place, and returns the subtree's estimated errors.
func (b *treeBuilder) prune(n *Node) float64 {
	total := 0
	for _, c := range n.Counts {
		total += c
	}
	leafErr := b.pessimistic(total-n.Counts[n.Class], total)
	if n.Feature < 0 {
		return leafErr
	}
	sub := b.prune(n.Left) + b.prune(n.Right)
	if leafErr <= sub+0.1 { // C4.5's tolerance of 0.1 errors
		n.Feature, n.Left, n.Right = -1, nil, nil
		return leafErr
	}
	return sub
}

// pessimistic is C4.5's estimate of the errors a leaf with e errors out of n training
// rows makes: n times the upper confidence limit of the binomial error rate (the normal
// approximation of Quinlan's addErrs, with its exact form for e = 0 and its interpolation
// below one error).
func (b *treeBuilder) pessimistic(e, n int) float64 {
	if n == 0 {
		return 0
	}
	N, E := float64(n), float64(e)
	cf := b.t.CF
	if E < 1 {
		base := N * (1 - math.Pow(cf, 1/N))
		if E == 0 {
			return base
		}
		return base + E*(b.pessimistic(1, n)-base)
	}
	if E+0.5 >= N {
		return math.Max(N-E, 0) + E
	}
	z := b.z
	f := (E + 0.5) / N
	r := (f + z*z/(2*N) + z*math.Sqrt(f/N-f*f/N+z*z/(4*N*N))) / (1 + z*z/N)
	return r * N
}

// normalQuantile is the standard normal quantile function (Acklam's rational
// approximation, relative error below 1.2e-9).
func normalQuantile(p float64) float64 {
	a := []float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	bb := []float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := []float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	dd := []float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	const low = 0.02425
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	case p < low:
		q := math.Sqrt(-2 * math.Log(p))
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((dd[0]*q+dd[1])*q+dd[2])*q+dd[3])*q + 1)
	case p > 1-low:
		q := math.Sqrt(-2 * math.Log(1-p))
		return -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((dd[0]*q+dd[1])*q+dd[2])*q+dd[3])*q + 1)
	}
	q := p - 0.5
	r := q * q
	return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((bb[0]*r+bb[1])*r+bb[2])*r+bb[3])*r+bb[4])*r + 1)
}
