package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Progress is a snapshot of a running crawl.
type Progress struct {
	Elapsed     time.Duration
	Pages       int64
	PagesPerSec float64 // over the last interval
	Queued      int64
	InFlight    int
	Hosts       int
	Errors      int64
	Bytes       int64
	Judged      int64 // pages given a relevance verdict (when a topic is set)
	Relevant    int64 // judged pages found relevant
	// Freshness is the freshness the revisit policy's plan expects (0..1), when the policy
	// reports one (FreshnessReporter); nil otherwise.
	Freshness *float64
	// Render describes rendering (render.mode auto or always); nil when it is off.
	Render *RenderSummary
	// Backlogs are how far the sinks that work behind the crawl are (the search index), by
	// sink name.
	Backlogs map[string]Backlog
	// BudgetNote says why crawl.budget is not being spent, when politeness does not allow
	// it; "" otherwise.
	BudgetNote string
}

// String is the one-line form shown on a terminal. With a topic it ends with the running
// harvest rate: relevant pages / judged pages.
func (p Progress) String() string {
	s := fmt.Sprintf("%s  %d pages  %.0f pages/s  %d queued  %d in flight  %d hosts  %d errors  %s",
		p.Elapsed.Round(time.Second), p.Pages, p.PagesPerSec, p.Queued, p.InFlight, p.Hosts, p.Errors, FormatBytes(p.Bytes))
	if p.Judged > 0 {
		s += fmt.Sprintf("  harvest %.1f%% (%d/%d)", 100*float64(p.Relevant)/float64(p.Judged), p.Relevant, p.Judged)
	}
	if p.Freshness != nil {
		s += fmt.Sprintf("  expected freshness %.1f%%", 100**p.Freshness)
	}
	if r := p.Render; r != nil {
		s += fmt.Sprintf("  rendered %d (p50 %dms p99 %dms, +%d links, %d restarts, browser %s)",
			r.Renders, r.P50Ms, r.P99Ms, r.LinksAdded, r.Restarts, FormatBytes(r.MemoryBytes))
	}
	names := make([]string, 0, len(p.Backlogs))
	for name := range p.Backlogs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b := p.Backlogs[name]
		s += fmt.Sprintf("  %s lag %d docs %.1fs", name, b.Documents, b.Lag.Seconds())
	}
	if p.BudgetNote != "" {
		s += "  " + p.BudgetNote
	}
	return s
}

// FormatBytes writes a byte count with a binary unit.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Status is the content of DATA/status.json, which `sonda status` reads while a crawl
// runs (the database itself is locked by the running crawl).
type Status struct {
	State     string           `json:"state"` // "running" or "finished: REASON"
	PID       int              `json:"pid"`
	Started   time.Time        `json:"started"`
	Updated   time.Time        `json:"updated"`
	Pages     int64            `json:"pages"`
	RobotsTxt int64            `json:"robots_txt"`
	Bytes     int64            `json:"bytes"`
	Queued    int64            `json:"queued"`
	InFlight  int              `json:"in_flight"`
	Seen      int64            `json:"seen"`
	Hosts     int              `json:"hosts"`
	PagesPerS float64          `json:"pages_per_second"`
	Errors    map[string]int64 `json:"errors"`
	Statuses  map[string]int64 `json:"statuses"`
	Rejected  map[string]int64 `json:"rejected_links"`
	Judged    int64            `json:"judged_pages,omitempty"`   // with a topic: pages judged
	Relevant  int64            `json:"relevant_pages,omitempty"` // and found relevant
	// ExpectedFreshness is the freshness the revisit policy's plan expects (0..1), when it
	// reports one.
	ExpectedFreshness *float64 `json:"expected_freshness,omitempty"`
	// Render describes rendering, with its figures per host, when render.mode is not never.
	Render *RenderSummary `json:"render,omitempty"`
	// Waiting lists the hosts that wait for a retry with nothing else to do.
	Waiting []WaitingHost `json:"waiting_hosts,omitempty"`
	// Backlogs are how far the sinks that work behind the crawl (the search index) are
	// behind it, by sink name.
	Backlogs map[string]Backlog `json:"backlogs,omitempty"`
	// BudgetNote says why crawl.budget is not being spent (politeness does not allow it).
	BudgetNote string `json:"budget_note,omitempty"`
}

// WaitingHost is a host that waits for a retry, in status.json.
type WaitingHost struct {
	Host   string    `json:"host"`
	Until  time.Time `json:"until"`
	Reason string    `json:"reason"`
	Queued int64     `json:"queued"`
}

func statusFinished(reason string) string { return "finished: " + reason }

// expectedFreshness asks the revisit policy for the freshness its plan expects; nil when it
// does not report one or has no plan yet.
func (c *Crawler) expectedFreshness() *float64 {
	r, ok := c.revisit.(FreshnessReporter)
	if !ok {
		return nil
	}
	f, ok := r.ExpectedFreshness()
	if !ok {
		return nil
	}
	return &f
}

func (c *Crawler) progress(prevPages int64, interval time.Duration) Progress {
	s := c.stats
	fs := c.frontier.Stats()
	p := Progress{Elapsed: time.Since(s.started), Pages: s.pages.Load(), Queued: fs.Queued, InFlight: fs.InFlight,
		Hosts: fs.Hosts, Errors: s.errors.Load(), Bytes: s.bytes.Load(), Judged: s.judged.Load(), Relevant: s.relevant.Load(),
		Freshness: c.expectedFreshness(), Backlogs: c.sinkBacklogs()}
	if c.rs.r != nil {
		r := c.rs.summary()
		r.Hosts = nil // the line shows totals
		p.Render = &r
	}
	if interval > 0 {
		p.PagesPerSec = float64(p.Pages-prevPages) / interval.Seconds()
		p.BudgetNote = c.budgetNote(p.PagesPerSec)
	}
	return p
}

// writeStatus replaces status.json atomically (write, then rename).
func (c *Crawler) writeStatus(state string, sum Summary) {
	st := Status{State: state, PID: os.Getpid(), Started: c.stats.started.UTC(), Updated: time.Now().UTC(),
		Pages: sum.Pages, RobotsTxt: sum.RobotsTxt, Bytes: sum.Bytes, Queued: sum.Frontier.Queued, InFlight: sum.Frontier.InFlight,
		Seen: sum.Frontier.Seen, Hosts: sum.Frontier.Hosts, PagesPerS: sum.PagesPerSecond(), Errors: sum.Errors,
		Statuses: sum.Statuses, Rejected: sum.Rejected, Judged: sum.Judged, Relevant: sum.Relevant,
		ExpectedFreshness: sum.Freshness, Backlogs: sum.Backlogs, BudgetNote: sum.BudgetNote}
	if c.rs.r != nil {
		st.Render = &sum.Render
	}
	for _, w := range sum.Waiting {
		st.Waiting = append(st.Waiting, WaitingHost{Host: w.Host, Until: w.Until.UTC(), Reason: w.Reason, Queued: w.Queued})
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return
	}
	path := StatusFile(c.cfg.Data)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		c.log.Warn("cannot write status file", "error", err)
		return
	}
	_ = os.Rename(tmp, path)
}

// ReadStatus reads the status.json of a data directory.
func ReadStatus(data string) (Status, error) {
	var st Status
	b, err := os.ReadFile(StatusFile(data))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", StatusFile(data), err)
	}
	return st, nil
}

// reportLoop calls progress every second and rewrites status.json every two seconds, until
// the returned stop function is called.
func (c *Crawler) reportLoop(ctx context.Context, progress func(Progress)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last, lastAt := int64(0), time.Now()
		n := 0
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				p := c.progress(last, now.Sub(lastAt))
				last, lastAt = p.Pages, now
				if progress != nil {
					progress(p)
				}
				if n++; n%2 == 0 {
					c.writeStatus("running", c.summary("running"))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func promHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
