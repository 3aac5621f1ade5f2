package crawl

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/fingerprint"
)

// TestPacer: workers sharing a pacer get slots no closer than its interval, a nil pacer
// does not wait, and a canceled context stops a wait.
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
				if err := p.wait(context.Background()); err != nil {
					t.Error(err)
				}
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
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
	if err := none.wait(context.Background()); err != nil {
		t.Error(err)
	}
	slow := newPacer(0.1) // 10 s apart
	_ = slow.wait(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := slow.wait(ctx); err == nil {
		t.Error("a canceled wait returned no error")
	}
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
