package crawl

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// planFreshness is a revisit policy that never revisits and reports a fixed expected
// freshness once it has seen a page.
type planFreshness struct{ seen atomic.Bool }

func (p *planFreshness) NextVisit(*Document, time.Time) time.Time {
	p.seen.Store(true)
	return time.Time{}
}

func (p *planFreshness) ExpectedFreshness() (float64, bool) { return 0.625, p.seen.Load() }

// TestExpectedFreshnessReported: a revisit policy that reports the freshness of its plan has
// it in the progress line, the summary, status.json and the sonda_expected_freshness
// gauge; a policy that does not has none of them.
func TestExpectedFreshnessReported(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 3, Disable: testweb.AllFeatures &^ testweb.Robots})
	cfg := testConfig(t, web)
	cfg.Politeness.MinDelay = 0

	c, err := New(cfg, WithRevisitPolicy(&planFreshness{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, err := c.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Freshness == nil || *sum.Freshness != 0.625 {
		t.Fatalf("summary freshness %v, want 0.625", sum.Freshness)
	}
	if line := c.progress(0, 0).String(); !strings.HasSuffix(line, "expected freshness 62.5%") {
		t.Errorf("progress line %q lacks the expected freshness", line)
	}
	st, err := ReadStatus(cfg.Data)
	if err != nil || st.ExpectedFreshness == nil || *st.ExpectedFreshness != 0.625 {
		t.Errorf("status.json expected freshness %v (%v)", st.ExpectedFreshness, err)
	}
	if v, ok := gaugeValue(t, c, "sonda_expected_freshness"); !ok || v != 0.625 {
		t.Errorf("sonda_expected_freshness = %v (present %v)", v, ok)
	}

	// Without a reporting policy: nothing.
	cfg.Data = t.TempDir()
	plain, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if sum, err = plain.Run(context.Background(), nil, nil); err != nil || sum.Freshness != nil {
		t.Errorf("a crawl without a revisit policy reports freshness %v (%v)", sum.Freshness, err)
	}
	if strings.Contains(plain.progress(0, 0).String(), "freshness") {
		t.Error("the progress line shows a freshness without a policy that reports one")
	}
	if _, ok := gaugeValue(t, plain, "sonda_expected_freshness"); ok {
		t.Error("sonda_expected_freshness exported without a policy that reports it")
	}
}

func gaugeValue(t *testing.T, c *Crawler, name string) (float64, bool) {
	t.Helper()
	mfs, err := c.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}
