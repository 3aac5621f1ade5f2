package crawl

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// keySeeds holds every seed the crawl was ever given: scope.follow is relative to all of
// them, so a resumed crawl started without --seed keeps its scope.
var keySeeds = []byte("kseeds")

// StoredSeeds lists every seed the crawl in db was ever given, normalized, in the order
// they were first given (none for a crawl never run).
func StoredSeeds(db *store.DB) ([]string, error) {
	var stored []string
	v, closer, err := db.Pebble().Get(keySeeds)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("crawl: read seeds: %w", err)
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &stored); err != nil {
		return nil, fmt.Errorf("crawl: stored seeds are corrupt: %w", err)
	}
	return stored, nil
}

// allSeeds merges the stored seeds with new ones, stores the union and returns it parsed,
// stored seeds first.
func (c *Crawler) allSeeds(fresh []string) ([]urlnorm.URL, error) {
	stored, err := StoredSeeds(c.db)
	if err != nil {
		return nil, err
	}
	var out []urlnorm.URL
	var all []string
	have := map[string]bool{}
	for i, s := range append(stored, fresh...) {
		u, err := c.norm.Parse(s)
		if err != nil {
			if i < len(stored) {
				continue // normalization rules changed since; the seed is queued already
			}
			return nil, fmt.Errorf("crawl: seed %q: %w", s, err)
		}
		if have[u.String()] {
			continue
		}
		have[u.String()] = true
		out = append(out, u)
		all = append(all, u.String())
	}
	if len(all) != len(stored) {
		b, _ := json.Marshal(all)
		if err := c.db.Pebble().Set(keySeeds, b, pebble.Sync); err != nil {
			return nil, fmt.Errorf("crawl: store seeds: %w", err)
		}
	}
	return out, nil
}
