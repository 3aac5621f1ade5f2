package store

// Histories calls fn for every URL with a page record: its key, its record and its visit
// history (oldest first). It reads the history of one URL at a time, so memory stays at one
// URL's visits. Revisit policies that keep per-URL state in memory rebuild it this way when
// a crawl resumes. It stops at the first error fn returns.
func (db *DB) Histories(fn func(key URLKey, p *Page, visits []Visit) error) error {
	return EachRecord(db, prefixPage, "page record", func(key URLKey, p *Page) error {
		visits, err := db.Visits(key)
		if err != nil {
			return err
		}
		return fn(key, p, visits)
	})
}
