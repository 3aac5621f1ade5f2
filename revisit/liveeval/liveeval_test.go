package liveeval

import (
	"context"
	"testing"
	"time"

	"github.com/sonda-search/sonda/revisit/changeweb"
)

// TestEvaluate runs a short live evaluation end to end: four real crawls of changing test
// webs at once (default policy, the same without its feature prior, uniform, the oracle)
// on pages whose URL sections follow their rates through a shuffled mapping, scored from
// the webs' logs over the windows and the series, at the budget, beside the simulator's
// figure for the same rates.
func TestEvaluate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real crawls for 12 seconds; skipped with -short")
	}
	mix, err := changeweb.ParseMixture("3s:0.5,never:0.5")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Mixture: mix, Kinds: &changeweb.Kinds{Mapping: "shuffled"}, Hosts: 2, Pages: 20, Budget: 10, Duration: 12 * time.Second,
		Policies: []string{"optimal", NoFeatures, "uniform", Oracle},
		Windows:  []Window{{0, 6 * time.Second}, {6 * time.Second, 12 * time.Second}}, Step: 2 * time.Second, Seed: 3,
	}
	res, err := Evaluate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 || len(res.Sim) != 4 {
		t.Fatalf("%d live runs and %d simulated, want 4 each", len(res.Runs), len(res.Sim))
	}
	for _, r := range append(res.Runs, res.Sim...) {
		if len(r.Windows) != 2 || len(r.Series) != 6 {
			t.Errorf("%s: %d windows and %d series points, want 2 and 6", r.Policy, len(r.Windows), len(r.Series))
		}
		if !(r.Freshness > 0 && r.Freshness <= 1) {
			t.Errorf("%s: freshness %v", r.Policy, r.Freshness)
		}
	}
	for _, r := range res.Runs {
		if r.Reason != "duration" {
			t.Errorf("%s crawl ended by %q, want its duration", r.Policy, r.Reason)
		}
		if r.Requests > 10*1.05 {
			t.Errorf("%s crawl made %.1f requests/s, over the budget of 10/s", r.Policy, r.Requests)
		}
		if r.Fetches < 20 {
			t.Errorf("%s crawl: %d responses of the 20 changing pages", r.Policy, r.Fetches)
		}
		if r.Discovered <= 0 || r.Discovered > cfg.Duration {
			t.Errorf("%s crawl: every changing page fetched by %v, want within the %v crawl", r.Policy, r.Discovered, cfg.Duration)
		}
	}
	if _, err := Evaluate(context.Background(), Config{Mixture: mix, Hosts: 2, Pages: 20, Budget: 10, Duration: time.Second,
		Policies: []string{"optimal"}, Windows: []Window{{0, time.Minute}}}); err == nil {
		t.Error("a window past the crawl's end was accepted")
	}
}
