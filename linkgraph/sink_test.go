package linkgraph

import (
	"context"
	"reflect"
	"testing"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
)

func TestDocumentLinks(t *testing.T) {
	page := &parse.Page{Links: []parse.Link{
		{URL: u("a"), Anchor: " A  "},
		{URL: u("b"), Anchor: "paid", Rel: []string{"sponsored"}},
		{URL: u("c"), Anchor: "comment", Rel: []string{"ugc", "nofollow"}},
	}}
	ok := &fetch.Result{}
	tests := []struct {
		name   string
		d      crawl.Document
		links  []Link
		update bool
	}{
		{"html page", crawl.Document{Fetch: ok, Page: page, Record: &store.Page{URL: u("s"), Status: 200}}, []Link{{u("a"), "A"}}, true},
		{"meta nofollow", crawl.Document{Fetch: ok, Page: page, Record: &store.Page{URL: u("s"), Status: 200, NoFollow: true}}, nil, true},
		{"not html", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Status: 200}}, nil, true},
		{"gone", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Status: 410}}, nil, true},
		{"not found", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Status: 404}}, nil, true},
		{"redirect", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), FinalURL: u("t"), Status: 301}}, []Link{{URL: u("t")}}, true},
		{"disallowed", crawl.Document{Record: &store.Page{URL: u("s"), Error: "robots-disallowed"}}, nil, true},
		{"not modified", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Status: 304}}, nil, false},
		{"server error", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Status: 503}}, nil, false},
		{"timeout", crawl.Document{Fetch: ok, Record: &store.Page{URL: u("s"), Error: "timeout-first-byte"}}, nil, false},
	}
	for _, tt := range tests {
		links, update := DocumentLinks(&tt.d)
		if update != tt.update || !reflect.DeepEqual(links, tt.links) && len(links)+len(tt.links) > 0 {
			t.Errorf("%s: %v %v, want %v %v", tt.name, links, update, tt.links, tt.update)
		}
	}
}

func TestSinkReportsChangedTargets(t *testing.T) {
	g := openMem(t, Options{})
	var got []string
	s := NewSink(g, func(targets []string) { got = append(got, targets...) })
	d := &crawl.Document{Fetch: &fetch.Result{}, Page: &parse.Page{Links: []parse.Link{{URL: u("a"), Anchor: "A"}}},
		Record: &store.Page{URL: u("s"), Status: 200}}
	if err := s.Consume(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d.Record = &store.Page{URL: u("s"), Status: 404}
	if err := s.Consume(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if want := []string{u("a"), u("a")}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed targets %v, want %v", got, want)
	}
	if n, _ := g.InLinks(u("a")); n != 0 {
		t.Errorf("a keeps %d in-links after its source went 404", n)
	}
}
