package main

import (
	"testing"

	"github.com/google/pprof/profile"
)

// TestSampleStage: a sample counts for the stage of the frame nearest the root that names
// one; the crawl loop, where every worker starts, only when nothing else does.
func TestSampleStage(t *testing.T) {
	stack := func(names ...string) *profile.Sample { // leaf first, as pprof stores them
		s := &profile.Sample{}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	tests := []struct {
		s    *profile.Sample
		want string
	}{
		{stack("github.com/sonda-search/sonda/text.(*Analyzer).Tokens", "github.com/sonda-search/sonda/index.build",
			"github.com/sonda-search/sonda/index.(*Sink).loop"), "index (sonda+bleve)"},
		{stack("compress/flate.(*compressor).deflate", "github.com/sonda-search/sonda/warc.(*Writer).WriteCapture",
			"github.com/sonda-search/sonda/crawl.(*Crawler).process", "github.com/sonda-search/sonda/crawl.(*Crawler).worker"), "WARC"},
		{stack("github.com/sonda-search/sonda/crawl.(*Crawler).admit", "github.com/sonda-search/sonda/crawl.(*Crawler).worker"), "crawl loop"},
		{stack("runtime.scanobject", "runtime.gcBgMarkWorker"), "garbage collection"},
		{stack("runtime.futex", "runtime.mstart"), "other (runtime, syscalls)"},
	}
	for _, tt := range tests {
		if got := crawlStages.stage(tt.s); got != tt.want {
			t.Errorf("%s: stage %q, want %q", tt.s.Location[0].Line[0].Function.Name, got, tt.want)
		}
	}
}

// TestSearchStage: a sample of a serving process counts for the most specific step of a
// search on its stack, whatever calls it.
func TestSearchStage(t *testing.T) {
	stack := func(names ...string) *profile.Sample { // leaf first
		s := &profile.Sample{}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	const ix, web = "github.com/sonda-search/sonda/index.", "github.com/sonda-search/sonda/web."
	handler := []string{ix + "(*Index).Search", web + "(*Server).apiSearch", "net/http.(*conn).serve"}
	tests := []struct {
		s    *profile.Sample
		want string
	}{
		{stack(append([]string{"github.com/golang/snappy.decode", ix + "facetRowsOf", ix + "(*Index).collect", ix + "(*Index).rank"}, handler...)...), "facets"},
		{stack(append([]string{"github.com/blevesearch/zapx/v17.(*PostingsIterator).Advance", ix + "(*Index).rank.(*Index).feedback.func1", ix + "(*Index).collect"}, handler...)...), "feedback (RM3)"},
		{stack(append([]string{"github.com/blevesearch/zapx/v17.(*PostingsIterator).Next", ix + "(*Index).collect"}, handler...)...), "matching, scoring (Bleve)"},
		{stack(append([]string{"runtime.mallocgc", ix + "(*Index).Document", ix + "(*Index).hit"}, handler...)...), "stored documents"},
		{stack(append([]string{ix + "textAnalyzerFor", ix + "snippet", ix + "(*Index).hit"}, handler...)...), "snippets"},
		{stack("encoding/json.(*encodeState).marshal", web+"writeJSON", web+"(*Server).apiSearch", "net/http.(*conn).serve"), "JSON encoding"},
		{stack("runtime.scanobject", "runtime.gcBgMarkWorker"), "garbage collection"},
	}
	for _, tt := range tests {
		if got := searchStages.stage(tt.s); got != tt.want {
			t.Errorf("%s: stage %q, want %q", tt.s.Location[0].Line[0].Function.Name, got, tt.want)
		}
	}
}
