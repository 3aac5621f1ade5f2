// Package focuseval measures focused crawls: it turns a crawl into a trace (the fetched
// pages in fetch order, with the crawler's relevance and the ground truth where labels are
// known), computes harvest rates (cumulative and windowed), mean relevance and precision at
// N, writes comparison tables and plots, and runs strategy comparisons on the topical test
// web (Bench). `sonda eval focus` and the focus benchmark use it.
package focuseval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
)

// Fetch is one fetched page of a trace.
type Fetch struct {
	URL      string  `json:"url"`
	Score    float64 `json:"score"`    // the crawler's relevance
	Relevant bool    `json:"relevant"` // the crawler's verdict
	Judged   bool    `json:"judged"`   // the crawler judged it (an HTML or text page)
	Label    bool    `json:"label"`    // relevant according to the ground truth
	Labelled bool    `json:"labelled"` // the ground truth knows the page
}

// Trace is a crawl as a sequence of fetches.
type Trace struct {
	Strategy string        `json:"strategy"`
	Topic    string        `json:"topic"`
	Fetches  []Fetch       `json:"fetches"`
	Elapsed  time.Duration `json:"elapsed"`
	Note     string        `json:"note,omitempty"` // e.g. the MLP's training stage
}

// Labels is ground truth: whether a URL is relevant to the topic, and whether it is known.
type Labels interface {
	Relevant(url string) (relevant, known bool)
}

// LabelMap is Labels from a map: URLs present are known, relevant when true.
type LabelMap map[string]bool

// Relevant implements Labels.
func (m LabelMap) Relevant(url string) (bool, bool) {
	r, ok := m[url]
	return r, ok
}

// ReadLabels reads JSON lines of ground truth for topic. Each line has "url" and either
// "relevant" (a boolean), "theme" (relevant when it equals topic; the topical test web's
// format) or "topics" (relevant when it contains topic).
func ReadLabels(r io.Reader, topic string) (LabelMap, error) {
	m := LabelMap{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var l struct {
			URL      string   `json:"url"`
			Relevant *bool    `json:"relevant"`
			Theme    *string  `json:"theme"`
			Topics   []string `json:"topics"`
		}
		if err := json.Unmarshal([]byte(b), &l); err != nil {
			return nil, fmt.Errorf("labels line %d: %w", line, err)
		}
		if l.URL == "" {
			return nil, fmt.Errorf("labels line %d: no url", line)
		}
		switch {
		case l.Relevant != nil:
			m[l.URL] = *l.Relevant
		case l.Theme != nil:
			m[l.URL] = *l.Theme == topic
		case l.Topics != nil:
			m[l.URL] = slices.Contains(l.Topics, topic)
		default:
			return nil, fmt.Errorf("labels line %d: give relevant, theme or topics for %s", line, l.URL)
		}
	}
	return m, sc.Err()
}

// Recorder is a crawl.Sink that appends every fetched document to a trace, in the order
// the crawl completes them.
type Recorder struct {
	mu     sync.Mutex
	Trace  *Trace
	Labels Labels // nil: no ground truth
	Topic  string // when set, Relevant means relevant to this topic (Record.Topics)
}

// Name implements crawl.Sink.
func (r *Recorder) Name() string { return "focus-trace" }

// Consume implements crawl.Sink. Documents without a fetch (robots.txt forbade them) are
// not fetches and are left out.
func (r *Recorder) Consume(_ context.Context, d *crawl.Document) error {
	if d.Fetch == nil {
		return nil
	}
	f := r.fetch(d.Item.URL, d.Record)
	r.mu.Lock()
	r.Trace.Fetches = append(r.Trace.Fetches, f)
	r.mu.Unlock()
	return nil
}

func (r *Recorder) fetch(url string, rec *store.Page) Fetch {
	f := Fetch{URL: url}
	if rec.Relevance != nil {
		f.Score, f.Judged = *rec.Relevance, true
	}
	if rec.Relevant != nil {
		f.Relevant = *rec.Relevant
		if r.Topic != "" {
			f.Relevant = slices.Contains(rec.Topics, r.Topic)
		}
	}
	if r.Labels != nil {
		f.Label, f.Labelled = r.Labels.Relevant(url)
	}
	return f
}

// TraceFromStore rebuilds the trace of a finished crawl from its data directory: every
// fetched page in the order of its fetch time (a resumed crawl counts as one).
func TraceFromStore(data string, labels Labels, topic string) (*Trace, error) {
	db, err := store.Open(crawl.StateDir(data), store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	type stamped struct {
		at time.Time
		f  Fetch
	}
	var all []stamped
	r := &Recorder{Labels: labels, Topic: topic}
	err = db.Pages(func(p *store.Page) error {
		if p.FetchedAt.IsZero() {
			return nil // never fetched (robots.txt forbade it)
		}
		all = append(all, stamped{p.FetchedAt, r.fetch(p.URL, p)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, errors.New("focuseval: the crawl in " + data + " has no fetched pages")
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	t := &Trace{Strategy: data, Topic: topic}
	for _, s := range all {
		t.Fetches = append(t.Fetches, s.f)
	}
	return t, nil
}

// WriteJSON saves a trace.
func (t *Trace) WriteJSON(path string) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
