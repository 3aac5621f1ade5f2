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
		if got := sampleStage(tt.s); got != tt.want {
			t.Errorf("%s: stage %q, want %q", tt.s.Location[0].Line[0].Function.Name, got, tt.want)
		}
	}
}
