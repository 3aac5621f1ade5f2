package focuseval

import (
	"context"
	"fmt"
	"strings"

	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/testweb/corpusweb"
)

// CorpusTopic is the evaluation of one topic on a corpus web: a page model trained on a few
// example documents kept out of the web, then one crawl per strategy from the same
// off-topic seeds, the perfect-classifier oracle among them.
type CorpusTopic struct {
	Topic    string
	Relevant int     // pages of the web about the topic
	Locality float64 // measured topical locality of its stories' links
	Pos, Neg int     // training examples
	CV       focus.CVResult
	Traces   []*Trace
}

// Examples per topic: the "small set" bounds.
const (
	ExamplePos = 50
	ExampleNeg = 200
)

// Trained is a page model trained on examples, with what self-training needs.
type Trained struct {
	Model    *focus.PageModel
	Examples []focus.Example
	Options  focus.TrainOptions // as tuned
	Pos, Neg int
	CV       focus.CVResult
}

// TrainOnExamples trains the page model for topic from up to ExamplePos documents about it
// and ExampleNeg others, drawn with seed from the web's example pool, as `sonda train page`
// would from files: the L2 strength and threshold are chosen by cross-validation first
// (focus.Tune; 5 folds, or fewer with few examples), for F1 at prior when it is set.
func TrainOnExamples(w *corpusweb.Web, topic string, seed uint64, prior float64) (*Trained, error) {
	pos, neg := w.Examples(topic, ExamplePos, ExampleNeg, seed)
	tr := &Trained{Pos: len(pos), Neg: len(neg)}
	for _, d := range pos {
		tr.Examples = append(tr.Examples, focus.Example{Page: focus.NewPageText("", d.Title, d.Text(), ""), Relevant: true})
	}
	for _, d := range neg {
		tr.Examples = append(tr.Examples, focus.Example{Page: focus.NewPageText("", d.Title, d.Text(), ""), Relevant: false})
	}
	tr.Options = focus.TrainOptions{Name: topic, Prior: prior}
	if k := min(5, len(pos)); k >= 2 {
		var err error
		if tr.Options, tr.CV, err = focus.Tune(tr.Examples, tr.Options, k, seed); err != nil {
			return nil, err
		}
	}
	m, err := focus.TrainPageModel(tr.Examples, tr.Options)
	if err != nil {
		return nil, fmt.Errorf("focuseval: topic %s: %w", topic, err)
	}
	m.CV = &tr.CV
	tr.Model = m
	return tr, nil
}

// CorpusRun is what RunCorpusTopic does for every topic.
type CorpusRun struct {
	Strategies []string // "bfs", Oracle, "oracle:S" or a focus strategy
	MaxPages   int64    // fetches per crawl
	Dir        string   // crawl data directories go there
	Seed       uint64   // examples, folds and strategies' random choices
	// SelfTrain: the model retrains on the pages it judges confidently during each crawl
	// (focus.Relevance.SelfTrain).
	SelfTrain bool
	Prior     float64 // focus.TrainOptions.Prior (0: none)
}

// RunCorpusTopic trains the model for topic and crawls w with each strategy.
func RunCorpusTopic(ctx context.Context, w *corpusweb.Web, topic string, r CorpusRun) (*CorpusTopic, error) {
	tr, err := TrainOnExamples(w, topic, r.Seed, r.Prior)
	if err != nil {
		return nil, err
	}
	ct := &CorpusTopic{Topic: topic, Relevant: w.Count(topic), Locality: w.Locality(topic), Pos: tr.Pos, Neg: tr.Neg, CV: tr.CV}
	b := &Bench{Web: w, Topics: []*focus.Topic{tr.Model.Topic()}, Model: tr.Model, MaxPages: r.MaxPages, Dir: r.Dir, Seed: r.Seed}
	if r.SelfTrain {
		b.SelfTrain = tr
	}
	for _, s := range r.Strategies {
		t, err := b.Run(ctx, s)
		if err != nil {
			return nil, err
		}
		ct.Traces = append(ct.Traces, t)
	}
	return ct, nil
}

// Trace returns the topic's trace of strategy, nil when it was not run.
func (c *CorpusTopic) Trace(strategy string) *Trace {
	for _, t := range c.Traces {
		if t.Strategy == strategy {
			return t
		}
	}
	return nil
}

// CorpusTable writes one row per topic: its size and locality, then the harvest of each
// strategy at fetch n, and each strategy's harvest as a share of the oracle's.
func CorpusTable(topics []*CorpusTopic, n int) string {
	if len(topics) == 0 {
		return ""
	}
	var names []string
	for _, t := range topics[0].Traces {
		names = append(names, t.Strategy)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| topic | pages | locality | examples | %s |\n|---|---|---|---|%s\n",
		strings.Join(names, fmt.Sprintf("@%d | ", n))+fmt.Sprintf("@%d", n), strings.Repeat("---|", len(names)))
	for _, ct := range topics {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %d+%d |", ct.Topic, ct.Relevant, ct.Locality, ct.Pos, ct.Neg)
		oracle := 0.0
		if o := ct.Trace(Oracle); o != nil {
			oracle = o.Harvest(n, ByLabels)
		}
		for _, s := range names {
			h := ct.Trace(s).Harvest(n, ByLabels)
			if oracle > 0 && s != Oracle {
				fmt.Fprintf(&b, " %.3f (%.2f) |", h, h/oracle)
			} else {
				fmt.Fprintf(&b, " %.3f |", h)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// JudgmentTable writes, per topic and strategy, the precision and recall of the crawler's
// own verdicts against the labels over the pages it fetched, and the model's
// cross-validated precision and recall on its examples.
func JudgmentTable(topics []*CorpusTopic, strategies []string) string {
	var b strings.Builder
	b.WriteString("| topic | examples CV precision / recall |")
	for _, s := range strategies {
		fmt.Fprintf(&b, " %s: precision / recall |", s)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(strategies)) + "\n")
	for _, ct := range topics {
		fmt.Fprintf(&b, "| %s | %.2f / %.2f |", ct.Topic, ct.CV.Precision, ct.CV.Recall)
		for _, s := range strategies {
			if t := ct.Trace(s); t != nil {
				p, r := t.Agreement()
				fmt.Fprintf(&b, " %.2f / %.2f |", p, r)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
