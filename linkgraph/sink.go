package linkgraph

import (
	"context"
	"strings"

	"github.com/sonda-search/sonda/crawl"
)

// Sink keeps a Graph in step with a crawl: pass it to crawl.WithSinks and every committed
// document updates the out-links of its URL (see the package doc for what counts).
type Sink struct {
	g        *Graph
	onChange func(targets []string)
}

// NewSink returns a sink updating g. onChange, when not nil, receives the URLs whose
// in-links changed after each update (a search index refreshes their anchor text).
func NewSink(g *Graph, onChange func(targets []string)) *Sink {
	return &Sink{g: g, onChange: onChange}
}

// Name implements crawl.Sink.
func (s *Sink) Name() string { return "linkgraph" }

// Consume implements crawl.Sink.
func (s *Sink) Consume(_ context.Context, d *crawl.Document) error {
	links, update := DocumentLinks(d)
	if !update {
		return nil
	}
	src := d.Record.URL
	if !d.URL.IsZero() {
		src = d.URL.String()
	}
	changed, err := s.g.SetLinks(src, links)
	if err != nil {
		return err
	}
	if len(changed) > 0 && s.onChange != nil {
		s.onChange(changed)
	}
	return nil
}

// SetLinksWhere records src's links to the targets within accepts (Graph.SetLinksWhere)
// and tells onChange whose in-links changed.
func (s *Sink) SetLinksWhere(src string, links []Link, within func(dst string) bool) error {
	changed, err := s.g.SetLinksWhere(src, links, within)
	if err != nil {
		return err
	}
	if len(changed) > 0 && s.onChange != nil {
		s.onChange(changed)
	}
	return nil
}

// DocumentLinks returns the out-links a fetched document contributes to the graph, and
// whether the graph should be updated at all: failures that say nothing about the page
// (timeouts, 5xx, 304 Not Modified) leave its links as they were.
func DocumentLinks(d *crawl.Document) (links []Link, update bool) {
	rec := d.Record
	if rec == nil {
		return nil, false
	}
	switch {
	case rec.Error == "robots-disallowed":
		return nil, true // we may not look: keep nothing of what we saw before
	case d.Fetch == nil || rec.Status == 304 || rec.Status == 0:
		return nil, false
	case rec.Status == 404 || rec.Status == 410:
		return nil, true
	case rec.Status >= 300 && rec.Status < 400:
		if rec.FinalURL != "" && rec.FinalURL != rec.URL {
			return []Link{{URL: rec.FinalURL}}, true
		}
		return nil, true
	case rec.Status >= 200 && rec.Status < 300:
		if d.Page == nil || rec.NoFollow {
			return nil, true
		}
		links = make([]Link, 0, len(d.Page.Links))
		for i := range d.Page.Links {
			lk := &d.Page.Links[i]
			if lk.HasRel("nofollow") || lk.HasRel("sponsored") || lk.HasRel("ugc") {
				continue
			}
			links = append(links, Link{URL: lk.URL, Anchor: strings.TrimSpace(lk.Anchor)})
		}
		return links, true
	}
	return nil, false
}
