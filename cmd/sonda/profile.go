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

// cpuProfile profiles the CPU of a whole command (sonda crawl --profile FILE, sonda serve
// --profile FILE) and says where it went by stage.
type cpuProfile struct {
	path   string
	f      *os.File
	stages stageTable
}

func startCPUProfile(path string, stages stageTable) (*cpuProfile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--profile: %w", err)
	}
	return &cpuProfile{path: path, f: f, stages: stages}, nil
}

// stop ends the profile and writes the CPU per stage, per page when pages > 0.
func (p *cpuProfile) stop(w io.Writer, pages int64) error {
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		return err
	}
	// The allocations beside it: garbage collection is a stage of its own, and this says
	// which code made the garbage (go tool pprof -sample_index=alloc_space FILE.allocs).
	if err := writeAllocs(p.path + ".allocs"); err != nil {
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
	shares, total := p.stages.cpu(prof)
	fmt.Fprintf(w, "CPU profile in %s (go tool pprof -top %s): %s of CPU", p.path, p.path, total.Round(time.Millisecond))
	if pages > 0 {
		fmt.Fprintf(w, ", %.2f ms per page", float64(total.Microseconds())/1e3/float64(pages))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "allocations in %s.allocs (go tool pprof -sample_index=alloc_space -top %s.allocs)\n", p.path, p.path)
	for _, s := range shares {
		fmt.Fprintf(w, "  %-22s %5.1f%%", s.stage, 100*float64(s.cpu)/float64(max(total, 1)))
		if pages > 0 {
			fmt.Fprintf(w, "  %.3f ms/page", float64(s.cpu.Microseconds())/1e3/float64(pages))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeAllocs writes the process's allocation profile (every allocation since it
// started, sampled by the runtime) to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--profile: write %s: %w", path, err)
	}
	return f.Close()
}

// stageTable attributes a profile's samples to stages by the function names on their
// stacks.
type stageTable struct {
	rules []stageRule
	// byRule: a sample counts for the first rule that any frame of its stack matches, so
	// that the table, most specific first, decides (search: a snippet made under the API
	// handler counts for snippets, not for the handler). Otherwise it counts for the
	// matching frame nearest the root (crawl: the index's text analysis counts for the
	// index), and the stage named last only when no other matches (the loop every worker
	// starts in).
	byRule bool
}

type stageRule struct{ stage, prefix string }

const otherStage = "other (runtime, syscalls)"

// crawlStages attribute a sample to a stage of the crawl by the frame nearest the root
// that matches, so that work a stage delegates (the index's text analysis, the fetcher's
// gzip) counts for it. Order matters where prefixes overlap.
var crawlStages = stageTable{rules: []stageRule{
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
}}

// searchStages attribute a sample of a serving process to a step of answering a search,
// the most specific first: Bleve's reads under the stored-document lookup count for it,
// those under facets for facets, and so on; an allocation counts for the step that made
// it (its GC assist too), the background collector for itself.
var searchStages = stageTable{byRule: true, rules: []stageRule{
	{"snippets", "github.com/sonda-search/sonda/index.snippet"},
	{"snippets", "github.com/sonda-search/sonda/index.plainSnippet"},
	{"snippets", "github.com/sonda-search/sonda/web.SafeSnippet"},
	{"stored documents", "github.com/sonda-search/sonda/index.(*Index).Document"},
	{"stored documents", "github.com/sonda-search/sonda/index.(*Index).documentAt"},
	{"facets", "github.com/sonda-search/sonda/index.facetRowsOf"},
	{"facets", "github.com/sonda-search/sonda/index.countFacets"},
	{"facets", "github.com/sonda-search/sonda/index.(*Index).facetRows"},
	{"facets", "github.com/sonda-search/sonda/index.(*columnCache)"},
	{"facets", "github.com/sonda-search/sonda/index.(*facetTally)"},
	{"feedback (RM3)", "github.com/sonda-search/sonda/index.(*Index).feedback"},
	{"feedback (RM3)", "github.com/sonda-search/sonda/index.(*Index).rank.(*Index).feedback"}, // its closure, inlined
	{"feedback (RM3)", "github.com/sonda-search/sonda/index.(*Index).relevanceModel"},
	{"link signals", "github.com/sonda-search/sonda/index.(*Index).linkSignals"},
	{"link signals", "github.com/sonda-search/sonda/linkgraph."},
	{"query parsing, translation", "github.com/sonda-search/sonda/query."},
	{"query parsing, translation", "github.com/sonda-search/sonda/index.translate"},
	{"query parsing, translation", "github.com/sonda-search/sonda/index.(*Index).localView"},
	{"matching, scoring (Bleve)", "github.com/sonda-search/sonda/index.(*Index).collect"},
	{"search, other", "github.com/sonda-search/sonda/index."},
	{"JSON encoding", "encoding/json."},
	{"HTTP, API handler", "github.com/sonda-search/sonda/web."},
	{"HTTP, API handler", "net/http."},
	{"HTTP, API handler", "net."},
	{"garbage collection", "runtime.gcBgMarkWorker"},
	{"garbage collection", "runtime.bgsweep"},
	{"garbage collection", "runtime.bgscavenge"},
}}

type stageShare struct {
	stage string
	cpu   time.Duration
}

// stage is the stage of sample s (see stageTable.byRule).
func (t stageTable) stage(s *profile.Sample) string {
	match := func(name string) (string, bool) {
		for _, r := range t.rules {
			if strings.HasPrefix(name, r.prefix) {
				return r.stage, true
			}
		}
		return "", false
	}
	if t.byRule {
		for _, r := range t.rules {
			for _, loc := range s.Location {
				for _, ln := range loc.Line {
					if ln.Function != nil && strings.HasPrefix(ln.Function.Name, r.prefix) {
						return r.stage
					}
				}
			}
		}
		return otherStage
	}
	last := t.rules[len(t.rules)-1].stage
	stage := otherStage
	for i := len(s.Location) - 1; i >= 0; i-- { // root first
		for _, ln := range s.Location[i].Line {
			if ln.Function == nil {
				continue
			}
			st, ok := match(ln.Function.Name)
			if !ok {
				continue
			}
			if st != last {
				return st
			}
			stage = st
		}
	}
	return stage
}

// cpu sums the profile's CPU by stage, largest first; samples outside every stage are
// "other (runtime, syscalls)".
func (t stageTable) cpu(p *profile.Profile) ([]stageShare, time.Duration) {
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	by := map[string]time.Duration{}
	var total time.Duration
	for _, s := range p.Sample {
		d := time.Duration(s.Value[vi])
		total += d
		by[t.stage(s)] += d
	}
	var out []stageShare
	for st, d := range by {
		out = append(out, stageShare{st, d})
	}
	slices.SortFunc(out, func(a, b stageShare) int { return int(b.cpu - a.cpu) })
	return out, total
}
