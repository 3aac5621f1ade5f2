package focuseval

import (
	"fmt"
	"sort"
	"strings"
)

// Judge selects whose verdict a metric counts.
type Judge int

const (
	ByLabels  Judge = iota // the ground truth (pages it does not know count as irrelevant)
	ByCrawler              // the crawler's own relevance analyzer
)

func (f Fetch) relevant(j Judge) bool {
	if j == ByCrawler {
		return f.Relevant
	}
	return f.Label
}

// Len is the number of fetches.
func (t *Trace) Len() int { return len(t.Fetches) }

// Harvest is the cumulative harvest rate after the first n fetches: relevant pages /
// fetched pages (n beyond the trace means all of it; 0 for an empty trace).
func (t *Trace) Harvest(n int, j Judge) float64 { return t.Windowed(n, n, j) }

// Windowed is the harvest rate of the w fetches ending at fetch n.
func (t *Trace) Windowed(n, w int, j Judge) float64 {
	n = min(n, len(t.Fetches))
	from := max(n-w, 0)
	if n <= from {
		return 0
	}
	rel := 0
	for _, f := range t.Fetches[from:n] {
		if f.relevant(j) {
			rel++
		}
	}
	return float64(rel) / float64(n-from)
}

// MeanRelevance is the mean relevance score of the first n fetches (the seed 001
// "average post-score"), over the pages the crawler judged.
func (t *Trace) MeanRelevance(n int) float64 {
	n = min(n, len(t.Fetches))
	var sum float64
	judged := 0
	for _, f := range t.Fetches[:n] {
		if f.Judged {
			sum += f.Score
			judged++
		}
	}
	if judged == 0 {
		return 0
	}
	return sum / float64(judged)
}

// PrecisionAt ranks the fetched pages by the crawler's relevance score and returns the
// share of the top n that the ground truth says are relevant: how well the crawler's
// relevance orders what it fetched.
func (t *Trace) PrecisionAt(n int) float64 {
	fs := append([]Fetch(nil), t.Fetches...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Score > fs[j].Score })
	n = min(n, len(fs))
	if n <= 0 {
		return 0
	}
	rel := 0
	for _, f := range fs[:n] {
		if f.Label {
			rel++
		}
	}
	return float64(rel) / float64(n)
}

// Agreement compares the crawler's verdicts with the labels over the labelled fetches:
// precision and recall of the crawler's "relevant".
func (t *Trace) Agreement() (precision, recall float64) {
	var tp, fp, fn int
	for _, f := range t.Fetches {
		if !f.Labelled {
			continue
		}
		switch {
		case f.Relevant && f.Label:
			tp++
		case f.Relevant:
			fp++
		case f.Label:
			fn++
		}
	}
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		recall = float64(tp) / float64(tp+fn)
	}
	return precision, recall
}

// Table writes a Markdown table comparing traces: the cumulative harvest by the ground
// truth at each checkpoint and over the last window fetches before the last checkpoint,
// the mean relevance score, the crawler's own harvest and the precision of its verdicts
// against the ground truth, and precision at 500 (see PrecisionAt).
func Table(traces []*Trace, checkpoints []int, window int) string {
	var b strings.Builder
	b.WriteString("| strategy |")
	for _, c := range checkpoints {
		fmt.Fprintf(&b, " harvest@%d |", c)
	}
	last := checkpoints[len(checkpoints)-1]
	fmt.Fprintf(&b, " last %d | mean relevance | crawler's harvest | crawler's precision | precision@500 |\n|---|", window)
	for range checkpoints {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|---|---|\n")
	for _, t := range traces {
		fmt.Fprintf(&b, "| %s |", t.Strategy)
		for _, c := range checkpoints {
			if c > t.Len() {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.3f |", t.Harvest(c, ByLabels))
		}
		precision, _ := t.Agreement()
		fmt.Fprintf(&b, " %.3f | %.3f | %.3f | %.2f | %.2f |\n", t.Windowed(last, window, ByLabels), t.MeanRelevance(last),
			t.Harvest(last, ByCrawler), precision, t.PrecisionAt(500))
	}
	return b.String()
}
