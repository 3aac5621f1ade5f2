// Package classify owns the small supervised-learning toolkit behind seed 004's initial
// change classifier: datasets of numeric features, a C4.5-style decision tree, Gaussian
// naive Bayes, k-nearest neighbours and the dissertation's random and majority baselines;
// class balancing, stratified k-fold cross-validation, wrapper feature selection by backward
// elimination; confusion matrices with accuracy, precision, recall (sensitivity),
// specificity, negative predictive value and F-measure; and one-dimensional k-means, which
// the dissertation used to find its change classes.
//
// The dissertation used WEKA (J48, NaiveBayes, IBk). Go has no WEKA; these learners are a
// few hundred lines, have no dependencies, classify a page in microseconds, and serialize to
// JSON so a trained model ships as a file (`sonda train revisit` writes it, the crawler's
// change-class policy reads it).
package classify

import (
	"fmt"
	"strings"
)

// Confusion is a confusion matrix: Counts[true][predicted].
type Confusion struct {
	Classes []string
	Counts  [][]int
}

// NewConfusion makes an empty matrix for the named classes.
func NewConfusion(classes []string) *Confusion {
	c := &Confusion{Classes: classes, Counts: make([][]int, len(classes))}
	for i := range c.Counts {
		c.Counts[i] = make([]int, len(classes))
	}
	return c
}

// Add counts one prediction.
func (c *Confusion) Add(truth, predicted int) { c.Counts[truth][predicted]++ }

// Merge adds another matrix of the same classes.
func (c *Confusion) Merge(o *Confusion) {
	for i := range c.Counts {
		for j := range c.Counts[i] {
			c.Counts[i][j] += o.Counts[i][j]
		}
	}
}

// Total is the number of predictions counted.
func (c *Confusion) Total() int {
	n := 0
	for _, row := range c.Counts {
		for _, v := range row {
			n += v
		}
	}
	return n
}

// Accuracy is the share of correct predictions.
func (c *Confusion) Accuracy() float64 {
	correct := 0
	for i := range c.Counts {
		correct += c.Counts[i][i]
	}
	return ratio(correct, c.Total())
}

// Binary is the two-by-two view of one class against the rest.
type Binary struct{ TP, FN, FP, TN int }

// OneVsRest returns the binary counts for class k.
func (c *Confusion) OneVsRest(k int) Binary {
	var b Binary
	for i, row := range c.Counts {
		for j, v := range row {
			switch {
			case i == k && j == k:
				b.TP += v
			case i == k:
				b.FN += v
			case j == k:
				b.FP += v
			default:
				b.TN += v
			}
		}
	}
	return b
}

// The measures of seed 004's §3.5 (Eq. 8–13). A measure whose denominator is zero is 0.

// Accuracy is (TP + TN)/(TP + FP + TN + FN).
func (b Binary) Accuracy() float64 { return ratio(b.TP+b.TN, b.TP+b.FP+b.TN+b.FN) }

// Recall (sensitivity) is TP/(TP + FN).
func (b Binary) Recall() float64 { return ratio(b.TP, b.TP+b.FN) }

// Specificity is TN/(TN + FP).
func (b Binary) Specificity() float64 { return ratio(b.TN, b.TN+b.FP) }

// Precision is TP/(TP + FP).
func (b Binary) Precision() float64 { return ratio(b.TP, b.TP+b.FP) }

// NPV, the negative predictive value, is TN/(TN + FN).
func (b Binary) NPV() float64 { return ratio(b.TN, b.TN+b.FN) }

// FMeasure is 2TP/(2TP + FP + FN), the harmonic mean of precision and recall.
func (b Binary) FMeasure() float64 { return ratio(2*b.TP, 2*b.TP+b.FP+b.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// MacroF is the mean F-measure over classes.
func (c *Confusion) MacroF() float64 {
	var s float64
	for k := range c.Classes {
		s += c.OneVsRest(k).FMeasure()
	}
	return s / float64(len(c.Classes))
}

// String renders the matrix and the per-class measures as a text table.
func (c *Confusion) String() string {
	var b strings.Builder
	w := 8
	for _, n := range c.Classes {
		w = max(w, len(n)+1)
	}
	fmt.Fprintf(&b, "%-*s", w+7, "true \\ predicted")
	for _, n := range c.Classes {
		fmt.Fprintf(&b, " %*s", w, n)
	}
	b.WriteString("\n")
	for i, row := range c.Counts {
		fmt.Fprintf(&b, "%-*s", w+7, c.Classes[i])
		for _, v := range row {
			fmt.Fprintf(&b, " %*d", w, v)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "accuracy %.4f over %d instances\n", c.Accuracy(), c.Total())
	fmt.Fprintf(&b, "%-*s %9s %9s %9s %9s %9s\n", w, "class", "precision", "recall", "specific.", "NPV", "F")
	for k, n := range c.Classes {
		o := c.OneVsRest(k)
		fmt.Fprintf(&b, "%-*s %9.3f %9.3f %9.3f %9.3f %9.3f\n", w, n, o.Precision(), o.Recall(), o.Specificity(), o.NPV(), o.FMeasure())
	}
	return b.String()
}
