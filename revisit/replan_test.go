package revisit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// TestReplanDoesNotStallVisits: while the optimal policy re-plans 100,000 pages (EM over
// every history and the allocation solve: about a second, several under the race
// detector), crawl workers calling NextVisit, the one whose visit started the re-plan
// included, are served from the last plan instead of waiting for it, and what they observed meanwhile is in the policy once the new plan is
// installed: their pages are rescheduled from it with their newest evidence.
func TestReplanDoesNotStallVisits(t *testing.T) {
	const pages, workers, perWorker = 100000, 3, 200
	cp, err := NewCrawlPolicy("optimal", Options{Budget: 10}, false)
	if err != nil {
		t.Fatal(err)
	}
	op := cp.Policy().(*optimal)
	// Build the crawl without re-planning at every tenth of growth (as Restore does).
	op.mu.Lock()
	op.holdReplan = true
	op.mu.Unlock()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < pages; i++ {
		op.Visit(key(i), Observation{At: t0, First: true, Host: fmt.Sprint("h", i%50)})
	}
	for i := 0; i < pages; i++ {
		op.Visit(key(i), Observation{At: t0.Add(day), Changed: rng.IntN(4) == 0})
	}
	norm := urlnorm.New(urlnorm.Options{})
	docs := make([][]*crawl.Document, workers)
	for w := range docs {
		for i := 0; i < perWorker; i++ {
			u, err := norm.Parse(fmt.Sprintf("http://w%d.example.test/p%d", w, i))
			if err != nil {
				t.Fatal(err)
			}
			d := &crawl.Document{URL: u, Record: &store.Page{Status: 200, Fingerprint: "f", FetchedAt: t0}, Fetch: &fetch.Result{}}
			cp.NextVisit(d, t0)
			d.Prev = &store.Page{Fingerprint: "f"} // from now on, revisits
			docs[w] = append(docs[w], d)
		}
	}
	op.mu.Lock()
	// A crawl past its first re-plan: the prior is fitted, and re-plans refine it with three
	// rounds of EM (the first fit takes fifty).
	op.fitted = true
	op.holdReplan = false
	epoch := op.epoch
	op.mu.Unlock()
	op.setBudget(20) // the next visit re-plans

	// The visit that starts the re-plan is not held for it either (a crawl's policy
	// re-plans in the background once a plan exists): it is scheduled from the current plan.
	replanned := make(chan time.Duration)
	var trigger time.Duration
	var next time.Time
	go func() {
		start := time.Now()
		next = op.Visit(key(0), Observation{At: t0.Add(2 * day)})
		trigger = time.Since(start)
		op.waitReplan()
		replanned <- time.Since(start)
	}()
	for {
		op.mu.Lock()
		started, running := op.epoch > epoch, op.replanning
		op.mu.Unlock()
		if started && !running {
			t.Fatal("the re-plan of 100,000 pages ended before the workers could start: nothing measured")
		}
		if running {
			break
		}
		time.Sleep(time.Millisecond)
	}

	// Workers revisit their pages until the re-plan is installed, a visit a millisecond each
	// (far more than a crawl's fetch rate, so the re-plan keeps one of two cores).
	var done atomic.Bool
	var wg sync.WaitGroup
	latest := make([]time.Duration, workers)
	during := make([]int, workers)
	total := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := t0.Add(day)
			for i := 0; !done.Load(); i++ {
				d := docs[w][i%perWorker]
				if i%perWorker == 0 {
					at = at.Add(time.Hour)
				}
				d.Record = &store.Page{Status: 200, Fingerprint: "f", FetchedAt: at, Changed: (i/perWorker)%2 == 0}
				start := time.Now()
				cp.NextVisit(d, at)
				latest[w] = max(latest[w], time.Since(start))
				total[w]++
				if !done.Load() {
					during[w]++
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	replan := <-replanned
	done.Store(true)
	wg.Wait()

	var maxWait time.Duration
	served, visits := 0, 0
	for w := range latest {
		maxWait = max(maxWait, latest[w])
		served += during[w]
		visits += total[w]
	}
	t.Logf("re-plan of %d pages: %v; the visit that started it took %v; %d NextVisit calls from %d workers meanwhile, the longest %v",
		pages+workers*perWorker, replan, trigger, served, workers, maxWait)
	if trigger > replan/10 || !next.After(t0.Add(2*day)) {
		t.Errorf("the visit that started the re-plan took %v of its %v (scheduled at %v); want it served from the current plan", trigger, replan, next)
	}
	if served == 0 || maxWait > replan/10 {
		t.Errorf("crawl workers waited for the re-plan: the longest NextVisit took %v (%d calls served) while the re-plan took %v; want well under a tenth of it",
			maxWait, served, replan)
	}

	// What the workers saw is in the policy: every visit counts towards the next re-plan,
	// and their pages are scheduled from the new plan with their newest evidence.
	op.mu.Lock()
	if !op.solved || op.replanning || op.epoch != epoch+1 {
		t.Fatalf("after the re-plan: solved %v, replanning %v, %d re-plans started; want one, installed", op.solved, op.replanning, op.epoch-epoch)
	}
	if op.sinceReplan != visits {
		t.Errorf("%d visits counted since the re-plan's snapshot, want the workers' %d", op.sinceReplan, visits)
	}
	var planned float64
	for _, pg := range op.list {
		planned += rateOf(pg.interval)
	}
	if math.Abs(planned-op.planned) > 1e-9*planned {
		t.Errorf("planned revisits %v, but the pages' intervals add up to %v", op.planned, planned)
	}
	for w := range docs {
		for _, d := range docs[w][:min(total[w], perWorker)] {
			pg := op.pages[[16]byte(d.URL.Key())]
			if pg.hist.Empty() {
				t.Fatalf("%s: its revisits are not in its history", d.URL)
			}
			if want := op.sol.Interval(op.prob, op.item(pg)); pg.interval != want {
				t.Fatalf("%s: interval %v, want %v from the new plan and its newest evidence", d.URL, pg.interval, want)
			}
		}
	}
	op.mu.Unlock()
}
