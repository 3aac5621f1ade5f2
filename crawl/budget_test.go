package crawl

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/testweb"
)

// TestPacer: workers sharing a pacer start fetches no closer than its interval, a nil
// pacer does not wait, and a canceled context stops a wait.
func TestPacer(t *testing.T) {
	p := newPacer(50) // 20 ms apart
	var mu sync.Mutex
	var times []time.Time
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if err := p.acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
				p.release(true)
			}
		}()
	}
	wg.Wait()
	first, last := times[0], times[0]
	for _, x := range times {
		if x.Before(first) {
			first = x
		}
		if x.After(last) {
			last = x
		}
	}
	if got, want := last.Sub(first), 19*20*time.Millisecond; got < want-5*time.Millisecond {
		t.Errorf("20 slots at 50/s took %v, want at least %v", got, want)
	}
	if newPacer(0) != nil {
		t.Error("a zero budget made a pacer")
	}
	var none *pacer
	if err := none.acquire(context.Background()); err != nil {
		t.Error(err)
	}
	none.release(true)
	slow := newPacer(0.1) // 10 s apart
	if err := slow.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	slow.release(true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := slow.acquire(ctx); err == nil {
		t.Error("a canceled wait returned no error")
	}
}

// TestPacerSpendsIdleSlots is issue 13's stall: 64 workers at 2/s, and work that comes
// only now and then (every host resting for politeness). Once work is there, a fetch must
// start at once, not behind slots the other workers reserved while there was none.
func TestPacerSpendsIdleSlots(t *testing.T) {
	p := newPacer(2)
	work := make(chan time.Time)
	started := make(chan time.Duration, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if p.acquire(ctx) != nil {
					return
				}
				var ready time.Time
				select {
				case ready = <-work: // the frontier's Next, blocking until a host is ready
				case <-ctx.Done():
					p.release(false)
					return
				}
				p.release(true)
				started <- time.Since(ready)
			}
		}()
	}
	// Work appears 1.5 s apart, slower than the budget: each item must start at once.
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(1500 * time.Millisecond) // the gap between items is the scenario, not synchronisation
		}
		work <- time.Now()
		if d := <-started; d > 250*time.Millisecond {
			t.Errorf("item %d waited %v for a slot although the budget had slots to spare", i, d)
		}
	}
	cancel()
	wg.Wait()
}

func TestChangeNormalizer(t *testing.T) {
	cfg := config.Default()
	n, md5, err := ChangeNormalizer(cfg)
	if err != nil || md5 || n.Volatile == nil {
		t.Fatalf("default: %+v, md5 %v, %v", n, md5, err)
	}
	if n.Exact("Updated 5 minutes ago. Rain.") != n.Exact("Updated 2 hours ago. Rain.") {
		t.Error("the default change detection counts a relative time as a change")
	}
	cfg.Revisit.Fingerprint = "md5"
	if _, md5, _ := ChangeNormalizer(cfg); !md5 {
		t.Error("revisit.fingerprint md5 not honoured")
	}
	cfg.Revisit.Fingerprint = "text"
	cfg.Revisit.Ignore = []string{"weather"}
	if _, _, err := ChangeNormalizer(cfg); err == nil {
		t.Error("an unknown volatile kind was accepted")
	}
	cfg.Revisit.Ignore = nil
	if n, _, _ := ChangeNormalizer(cfg); n != (fingerprint.Normalizer{}) {
		t.Errorf("no ignored kinds: %+v, want the plain normalizer", n)
	}
}

func TestBudgetNote(t *testing.T) {
	for _, tt := range []struct {
		budget, rate, achievable float64
		hosts, delayed           int
		want                     string
	}{
		{2, 1.9, 4, 4, 0, ""},   // spent
		{2, 1.1, 4, 4, 0, ""},   // politeness allows it: not politeness's doing
		{0, 0.5, 0.8, 4, 0, ""}, // no budget
		{2, 0.8, 0.8, 4, 4, "budget 2/s, achievable 0.8/s: 4 hosts × Crawl-delay (robots.txt)"},
		{2, 0.8, 0.8, 4, 0, "budget 2/s, achievable 0.8/s: 4 hosts × politeness.min-delay 1s (or delay-factor × response time)"},
	} {
		if got := budgetNote(tt.budget, tt.rate, tt.achievable, tt.hosts, tt.delayed, time.Second); got != tt.want {
			t.Errorf("budgetNote(%v, %v, %v, %d, %d) = %q, want %q", tt.budget, tt.rate, tt.achievable, tt.hosts, tt.delayed, got, tt.want)
		}
	}
}

// TestBudgetNoteLive: a budget politeness cannot allow (2 hosts resting half a second, at
// most about 4/s, for a budget of 40/s) is explained in the summary.
func TestBudgetNoteLive(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 2, Hosts: 2, PagesPerHost: 20, Disable: testweb.AllFeatures})
	cfg := testConfig(t, web)
	cfg.Crawl.Budget = 40
	cfg.Crawl.MaxPages = 10
	cfg.Politeness.MinDelay = 500 * time.Millisecond
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, err := c.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.BudgetNote, "budget 40/s, achievable") || !strings.Contains(sum.BudgetNote, "hosts × politeness.min-delay 500ms") {
		t.Errorf("budget note %q, want why 40/s cannot be spent", sum.BudgetNote)
	}
}
