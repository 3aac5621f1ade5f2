package news

import (
	"context"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/store"
)

// Restorer gives a replayed page the article record the crawl stored for it, as the
// Analyzer gave it the article it extracted: it is the news vertical's analyzer for
// index.Replay (sonda index rebuild, the index's catch-up after a crash), so a rebuilt
// index keeps article pages as kind article without extracting them again. The record
// and the page's latest capture were committed together (see the package doc), so the
// record always describes the capture being replayed. It writes nothing.
type Restorer struct{ db *store.DB }

// NewRestorer returns the restorer reading the article records of db.
func NewRestorer(db *store.DB) *Restorer { return &Restorer{db: db} }

// Name implements crawl.Analyzer: the Analyzer's name, so the result has the same key.
func (*Restorer) Name() string { return "news" }

// Analyze implements crawl.Analyzer.
func (r *Restorer) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Page == nil || d.URL.IsZero() || d.Record == nil || d.Record.NoIndex {
		return nil
	}
	a, ok, err := Get(r.db, d.URL.Key())
	if err != nil || !ok {
		return err
	}
	if d.Results == nil {
		d.Results = map[string]any{}
	}
	d.Results[r.Name()] = a
	return nil
}

var _ crawl.Analyzer = (*Restorer)(nil)
