package index

import (
	"testing"
	"time"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/store"
)

func TestDocFromCrawl(t *testing.T) {
	ok := &fetch.Result{}
	rel := 0.7
	yes := true
	page := &parse.Page{Description: "About reactors", Blocks: []parse.Block{{Text: "Reactors", Tag: "h1"}, {Text: "Body text", Tag: "p"}, {Text: "Fuel", Tag: "h2"}}}
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		d    crawl.Document
		want Action
	}{
		{"html page", crawl.Document{Fetch: ok, Page: page, Text: "Reactors\nBody text\nFuel", Record: &store.Page{URL: "http://a.test/", Status: 200, Title: "Reactors", Lang: "en", FetchedAt: at, Relevance: &rel, Relevant: &yes}}, Add},
		{"plain text", crawl.Document{Fetch: ok, Text: "just text", Record: &store.Page{URL: "http://a.test/t.txt", Status: 200}}, Add},
		{"noindex", crawl.Document{Fetch: ok, Page: page, Text: "x", Record: &store.Page{URL: "http://a.test/", Status: 200, NoIndex: true}}, Remove},
		{"duplicate", crawl.Document{Fetch: ok, Page: page, Text: "x", Record: &store.Page{URL: "http://a.test/", Status: 200, DuplicateOf: "http://b.test/"}}, Remove},
		{"404", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 404}}, Remove},
		{"410", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 410}}, Remove},
		{"redirect", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 301, FinalURL: "http://a.test/b"}}, Remove},
		{"robots", crawl.Document{Record: &store.Page{URL: "http://a.test/", Error: "robots-disallowed"}}, Remove},
		{"binary", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/f.pdf", Status: 200}}, Remove},
		{"not modified", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 304}}, Keep},
		{"server error", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Status: 503}}, Keep},
		{"timeout", crawl.Document{Fetch: ok, Record: &store.Page{URL: "http://a.test/", Error: "timeout-first-byte"}}, Keep},
	}
	for _, tt := range tests {
		doc, action := DocFromCrawl(&tt.d)
		if action != tt.want {
			t.Errorf("%s: action %v, want %v", tt.name, action, tt.want)
		}
		if tt.name == "html page" {
			if doc.Headings != "Reactors\nFuel" || doc.Description != "About reactors" || doc.Host != "a.test" || doc.Relevance != 0.7 ||
				!doc.Relevant || !doc.Fetched.Equal(at) || doc.Kind != KindPage || doc.Lang != "en" {
				t.Errorf("html page: %+v", doc)
			}
		}
		if tt.name == "plain text" && (doc.Relevance != -1 || doc.Body != "just text") {
			t.Errorf("plain text: %+v", doc)
		}
	}
}
