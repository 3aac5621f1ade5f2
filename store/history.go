package store

import (
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Histories calls fn for every URL with a page record: its key, its record and its visit
// history (oldest first). It reads the history of one URL at a time, so memory stays at one
// URL's visits. Revisit policies that keep per-URL state in memory rebuild it this way when
// a crawl resumes. It stops at the first error fn returns.
func (db *DB) Histories(fn func(key URLKey, p *Page, visits []Visit) error) error {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPage}, UpperBound: []byte{prefixPage + 1}})
	if err != nil {
		return fmt.Errorf("store: iterate pages: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var key URLKey
		if len(it.Key()) != 1+len(key) {
			continue
		}
		copy(key[:], it.Key()[1:])
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("store: iterate pages: %w", err)
		}
		p := new(Page)
		if err := json.Unmarshal(v, p); err != nil {
			return fmt.Errorf("store: decode page record %x: %w", key, err)
		}
		visits, err := db.Visits(key)
		if err != nil {
			return err
		}
		if err := fn(key, p, visits); err != nil {
			return err
		}
	}
	return it.Error()
}
