package crawl

import (
	"context"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/testweb"
)

func TestProgressShowsHarvest(t *testing.T) {
	p := Progress{Pages: 10, Judged: 8, Relevant: 2}
	if s := p.String(); !strings.HasSuffix(s, "harvest 25.0% (2/8)") {
		t.Errorf("progress line %q does not end with the harvest", s)
	}
	if s := (Progress{Pages: 10}).String(); strings.Contains(s, "harvest") {
		t.Errorf("without a topic there is no harvest: %q", s)
	}
}

// everyOther judges pages relevant by a property of their URL, as a topic analyzer would.
type everyOther struct{}

func (everyOther) Name() string { return "every-other" }
func (everyOther) Analyze(_ context.Context, d *Document) error {
	rel := len(d.Item.URL)%2 == 0
	score := 0.0
	if rel {
		score = 1
	}
	d.Record.Relevance, d.Record.Relevant = &score, &rel
	return nil
}

// TestCrawlCountsHarvest: the summary (and so status.json and the progress line) counts
// every page an analyzer judged and those it found relevant.
func TestCrawlCountsHarvest(t *testing.T) {
	web := startWeb(t, testweb.Config{Seed: 3, Hosts: 4, PagesPerHost: 5, Disable: testweb.AllFeatures})
	cfg := testConfig(t, web)
	cfg.Politeness.MinDelay = 0
	c, err := New(cfg, WithAnalyzers(everyOther{}))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background(), nil, nil)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, rel := 0, 0
	for _, u := range web.Reachable() {
		if !strings.HasSuffix(u, "/robots.txt") {
			want++
			if len(u)%2 == 0 {
				rel++
			}
		}
	}
	if sum.Judged != int64(want) || sum.Relevant != int64(rel) {
		t.Errorf("judged %d, relevant %d; want %d and %d", sum.Judged, sum.Relevant, want, rel)
	}
	st, err := ReadStatus(cfg.Data)
	if err != nil || st.Judged != sum.Judged || st.Relevant != sum.Relevant {
		t.Errorf("status.json: %+v, %v", st, err)
	}
}
