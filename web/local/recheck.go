package local

import (
	"context"
	"time"

	"github.com/sonda-search/sonda/geo/catalog"
	"github.com/sonda-search/sonda/geo/geosearch"
)

// RecheckDatasets runs the broken-link check over the datasets whose last check is older
// than geo.recheck-every (all of them when it is 0), as sonda geo recheck does: a link that
// answers 404 or 410 leaves search.
func (d *Data) RecheckDatasets(ctx context.Context) (geosearch.RecheckStats, error) {
	f, err := geosearch.NewRecheckFetcher(d.cfg)
	if err != nil {
		return geosearch.RecheckStats{}, err
	}
	defer f.Close()
	return geosearch.Recheck(ctx, catalog.New(d.DB), f, geosearch.RecheckOptionsFrom(d.cfg, d.cfg.Geo.RecheckEvery, d.log))
}

// recheckLoop keeps the dataset links checked while the server runs: it looks for links
// older than geo.recheck-every a few times per period (at least hourly), so each link is
// checked about once a period, spread out, rather than all at once.
func (d *Data) recheckLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	every := d.cfg.Geo.RecheckEvery
	tick := min(max(every/8, time.Second), time.Hour)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := d.RecheckDatasets(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			d.log.Error("dataset link check failed", "error", err)
		case st.Checked > 0:
			d.log.Info("dataset links checked", "checked", st.Checked, "gone", st.Gone, "restored", st.Restored, "no answer", st.Failed)
		}
	}
}
