package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// cpuProfile profiles the CPU of a whole command (sonda crawl --profile FILE) and says
// where it went by stage of the crawl.
type cpuProfile struct {
	path string
	f    *os.File
}

func startCPUProfile(path string) (*cpuProfile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--profile: %w", err)
	}
	return &cpuProfile{path: path, f: f}, nil
}

// stop ends the profile and writes the CPU per stage, per page when pages > 0.
func (p *cpuProfile) stop(w io.Writer, pages int64) error {
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		return err
	}
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		return fmt.Errorf("--profile: read %s: %w", p.path, err)
	}
	shares, total := stageCPU(prof)
	fmt.Fprintf(w, "CPU profile in %s (go tool pprof -top %s): %s of CPU", p.path, p.path, total.Round(time.Millisecond))
	if pages > 0 {
		fmt.Fprintf(w, ", %.2f ms per page", float64(total.Microseconds())/1e3/float64(pages))
	}
	fmt.Fprintln(w)
	for _, s := range shares {
		fmt.Fprintf(w, "  %-22s %5.1f%%", s.stage, 100*float64(s.cpu)/float64(max(total, 1)))
		if pages > 0 {
			fmt.Fprintf(w, "  %.3f ms/page", float64(s.cpu.Microseconds())/1e3/float64(pages))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// crawlStages attribute a sample to a stage by the function names on its stack: the
// stage of the frame nearest the root that matches, so that work a stage delegates (the
// index's text analysis, the fetcher's gzip) counts for it. Order matters where prefixes
// overlap.
var crawlStages = []struct{ stage, prefix string }{
	{"index (sonda+bleve)", "github.com/sonda-search/sonda/index."},
	{"index (sonda+bleve)", "github.com/blevesearch/"},
	{"link graph", "github.com/sonda-search/sonda/linkgraph."},
	{"parse", "github.com/sonda-search/sonda/parse."},
	{"fingerprint, dedup", "github.com/sonda-search/sonda/fingerprint."},
	{"analyzers (language...)", "github.com/sonda-search/sonda/focus."},
	{"analyzers (language...)", "github.com/sonda-search/sonda/text."},
	{"WARC", "github.com/sonda-search/sonda/warc."},
	{"store, frontier (pebble)", "github.com/sonda-search/sonda/store."},
	{"store, frontier (pebble)", "github.com/sonda-search/sonda/frontier."},
	{"store, frontier (pebble)", "github.com/cockroachdb/pebble"},
	{"cluster (routing, state)", "github.com/sonda-search/sonda/cluster."},
	{"NATS client", "github.com/nats-io/"},
	{"fetch (HTTP, decode)", "github.com/sonda-search/sonda/fetch."},
	{"fetch (HTTP, decode)", "net/http."},
	{"fetch (HTTP, decode)", "net."},
	{"robots, scope, urls", "github.com/sonda-search/sonda/robots."},
	{"robots, scope, urls", "github.com/sonda-search/sonda/scope."},
	{"robots, scope, urls", "github.com/sonda-search/sonda/urlnorm."},
	{"garbage collection", "runtime.gcBgMarkWorker"},
	{"garbage collection", "runtime.bgsweep"},
	{"garbage collection", "runtime.bgscavenge"},
	{"crawl loop", "github.com/sonda-search/sonda/crawl."},
}

type stageShare struct {
	stage string
	cpu   time.Duration
}

// sampleStage is the stage of the frame nearest the root that names one, the crawl loop
// only when no other does (every worker's stack starts in it).
func sampleStage(s *profile.Sample) string {
	stage := "other (runtime, syscalls)"
	for i := len(s.Location) - 1; i >= 0; i-- { // root first
		for _, ln := range s.Location[i].Line {
			if ln.Function == nil {
				continue
			}
			for _, cs := range crawlStages {
				if !strings.HasPrefix(ln.Function.Name, cs.prefix) {
					continue
				}
				if cs.stage != "crawl loop" {
					return cs.stage
				}
				stage = cs.stage
				break
			}
		}
	}
	return stage
}

// stageCPU sums the profile's CPU by stage, largest first; samples outside every stage
// are "other (runtime, syscalls)".
func stageCPU(p *profile.Profile) ([]stageShare, time.Duration) {
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	by := map[string]time.Duration{}
	var total time.Duration
	for _, s := range p.Sample {
		d := time.Duration(s.Value[vi])
		total += d
		by[sampleStage(s)] += d
	}
	var out []stageShare
	for st, d := range by {
		out = append(out, stageShare{st, d})
	}
	slices.SortFunc(out, func(a, b stageShare) int { return int(b.cpu - a.cpu) })
	return out, total
}
