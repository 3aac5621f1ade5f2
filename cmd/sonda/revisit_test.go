package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/revisit"
	"github.com/sonda-search/sonda/revisit/sim"
	"github.com/sonda-search/sonda/testweb"
)

func TestSimFreshnessCommand(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "f.svg")
	traceFile := filepath.Join(dir, "monitor.txt")
	out, stderr, code := run(t, nil, "sim", "freshness", "--pages", "300", "--horizon", "60", "--plot", plot, "--write-trace", traceFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"oracle", "optimal", "uniform", "proportional", "classes-bayes", "adaptive", "100.0%", "90 visits/day"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot: %v", err)
	}
	// Replay the monitor's trace, as JSON.
	out, stderr, code = run(t, nil, "sim", "freshness", "--trace", traceFile, "--budget", "60", "--policies", "optimal,uniform,oracle", "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	var res struct {
		Results []struct {
			Policy    string  `json:"policy"`
			Freshness float64 `json:"freshness"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) != 3 {
		t.Fatalf("JSON output %q: %v", out, err)
	}
	for _, bad := range [][]string{
		{"sim", "freshness", "--policies", "sometimes"},
		{"sim", "freshness", "--mixture", "1"},
		{"sim", "freshness", "--trace", filepath.Join(dir, "missing.txt")},
	} {
		if _, _, code := run(t, nil, bad...); code == 0 {
			t.Errorf("%v succeeded", bad)
		}
	}
}

// TestTrainRevisitCommand runs seed 004's pipeline on a simulated 100-day daily monitor of
// pages whose features depend on their change class (synthetic: dynamic pages have more
// links and images and no Last-Modified, as the dissertation's sources report), writes a
// model and loads it the way the crawler does.
func TestTrainRevisitCommand(t *testing.T) {
	dir := t.TempDir()
	tr := sim.Generate(1200, 100, sim.DefaultMixture, 0, 3)
	traceFile := filepath.Join(dir, "monitor.txt")
	f, err := os.Create(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteMonitoring(f, 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	var csv strings.Builder
	csv.WriteString("id,links,images,last_modified,url_level,depth\n")
	for i, p := range tr.Pages {
		dyn := -math.Log10(p.Rate) // 0 for daily pages, about 2 for the slowest
		lm := 0
		if rng.Float64() < 0.2+0.3*dyn {
			lm = 1
		}
		fmt.Fprintf(&csv, "page%d,%.0f,%.0f,%d,%d,%d\n", i, 80-25*dyn+rng.NormFloat64()*10, 20-6*dyn+rng.NormFloat64()*4, lm, 1+rng.IntN(4), rng.IntN(5))
	}
	featFile := filepath.Join(dir, "features.csv")
	if err := os.WriteFile(featFile, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "classes.json")
	out, stderr, code := run(t, nil, "train", "revisit", "--trace", traceFile, "--features", featFile, "--out", model, "--sweep", "--folds", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{"k=6:", "change classes", "backward elimination", "naive Bayes", "2-NN", "random", "precision", "wrote " + model} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	m, err := revisit.LoadClassModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Classes() != 4 {
		t.Errorf("model has %d classes, want 4", m.Classes())
	}
	fast := revisit.Features{Links: 80, Images: 20}
	slow := revisit.Features{Links: 30, Images: 8, LastModified: 1, URLLevel: 2}
	if cf, cs := m.Class(revisit.Key{}, revisit.Observation{Features: &fast}), m.Class(revisit.Key{}, revisit.Observation{Features: &slow}); !(cf < cs) {
		t.Errorf("a dynamic-looking page got class %d, a static-looking one %d: want the first more frequent", cf, cs)
	}
	for _, bad := range [][]string{
		{"train", "revisit", "--trace", traceFile},
		{"train", "revisit", "--trace", traceFile, "--features", featFile, "--learner", "svm"},
	} {
		if _, _, code := run(t, nil, bad...); code == 0 {
			t.Errorf("%v succeeded", bad)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("id,colour\npage1,3\n"), 0o644)
	if _, stderr, code := run(t, nil, "train", "revisit", "--trace", traceFile, "--features", bad); code == 0 || !strings.Contains(stderr, "colour") {
		t.Errorf("unknown feature column: exit %d, %s", code, stderr)
	}
}

func TestCrawlRevisitFlags(t *testing.T) {
	_, stderr, code := run(t, nil, "crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--revisit", "optimal")
	if code == 0 || !strings.Contains(stderr, "budget") {
		t.Errorf("--revisit optimal without a budget: exit %d, %s", code, stderr)
	}
	_, stderr, code = run(t, nil, "crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--budget", "fast")
	if code == 0 || !strings.Contains(stderr, "rate") {
		t.Errorf("--budget fast: exit %d, %s", code, stderr)
	}
	_, stderr, code = run(t, nil, "crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--revisit", "sometimes", "--budget", "5/s")
	if code == 0 || !strings.Contains(stderr, "sometimes") {
		t.Errorf("--revisit sometimes: exit %d, %s", code, stderr)
	}
}

// TestCrawlRevisitCLI runs `sonda crawl --revisit optimal --budget` end to end: the flags
// reach the policy through the configuration, the crawl keeps revisiting instead of ending
// with the frontier, and the summary reports the plan's expected freshness.
//
// The crawl stops at a number of fetches that only revisits can reach (the web has fewer
// URLs), not at a duration: on a loaded machine a few seconds may not even finish
// discovering the web (it fetched 21 pages in 4 s once, at a load of 19). The duration only
// bounds the test.
func TestCrawlRevisitCLI(t *testing.T) {
	web, addr := serveWeb(t, testweb.Config{Seed: 7, Hosts: 3, PagesPerHost: 5, Disable: testweb.AllFeatures &^ testweb.Robots})
	data := t.TempDir()
	args := append(crawlArgs(web, addr, data), "--revisit", "optimal", "--budget", "30/s", "--max-pages", "60", "--duration", "90s")
	out, stderr, code := run(t, append(quickEnv, "SONDA_REVISIT_MIN_INTERVAL=200ms"), args...)
	if code != 0 {
		t.Fatalf("crawl: exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "crawl max-pages") || !strings.Contains(out, "expected freshness of the revisit plan") {
		t.Fatalf("a revisiting crawl should run until its page limit and report its plan's freshness:\n%s", out)
	}
	var fetched, seen int
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, " pages fetched"); i >= 0 {
			f := strings.Fields(line[:i])
			fmt.Sscan(f[len(f)-1], &fetched)
		}
		if strings.Contains(line, "frontier:") {
			fmt.Sscanf(line[strings.Index(line, ",")+1:], "%d seen", &seen)
		}
	}
	t.Logf("%d pages fetched, %d URLs seen", fetched, seen)
	if seen == 0 || fetched <= seen {
		t.Errorf("%d pages fetched for %d URLs seen: nothing was revisited\n%s", fetched, seen, out)
	}
}

// TestBudgetMeansDefaultPolicy: --budget without --revisit revisits with the default
// policy; --revisit none keeps a paced one-off crawl; a policy given wins.
func TestBudgetMeansDefaultPolicy(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "2/s"}, revisit.DefaultPolicy},
		{[]string{"--budget", "2/s", "--revisit", "none"}, "none"},
		{[]string{"--budget", "2/s", "--revisit", "uniform"}, "uniform"},
		{[]string{"--revisit", "uniform", "--budget", "2/s"}, "uniform"},
		{nil, "none"},
	} {
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		cmd.Flags().String("config", "", "")
		cmd.Flags().String("data", t.TempDir(), "")
		cmd.Flags().String("log-level", "", "")
		addCrawlFlags(cmd.Flags())
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig(cmd, crawlFlags...)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if cfg.Revisit.Policy != tt.want {
			t.Errorf("%v: revisit policy %q, want %q", tt.args, cfg.Revisit.Policy, tt.want)
		}
		if note := budgetNote(cfg); (note != "") != (tt.want == "none" && len(tt.args) > 0) {
			t.Errorf("%v: note %q", tt.args, note)
		}
	}
}

func TestBudgetNote(t *testing.T) {
	for _, tt := range []struct {
		budget float64
		policy string
		note   bool
	}{
		{0, "", false},
		{2, "", true},
		{2, "none", true},
		{2, "optimal", false},
		{0, "uniform", false},
	} {
		var cfg config.Config
		cfg.Crawl.Budget, cfg.Revisit.Policy = config.Rate(tt.budget), tt.policy
		note := budgetNote(cfg)
		if (note != "") != tt.note || tt.note && !strings.Contains(note, "--revisit") {
			t.Errorf("budget %v policy %q: note %q", tt.budget, tt.policy, note)
		}
	}
}

// TestEvalRevisitCLI runs `sonda eval revisit --json` for a few seconds with page kinds and
// the no-features ablation: the JSON decodes and has every policy's live and simulated run;
// --plot draws beside --json; a bad --page-kinds names the flag and the values it takes.
func TestEvalRevisitCLI(t *testing.T) {
	_, stderr, code := run(t, nil, "eval", "revisit", "--page-kinds", "tree")
	if code == 0 || !strings.Contains(stderr, "--page-kinds") || !strings.Contains(stderr, "shuffled") {
		t.Errorf("--page-kinds tree: exit %d, %s", code, stderr)
	}
	if testing.Short() {
		return
	}
	plot := filepath.Join(t.TempDir(), "fresh.svg")
	out, stderr, code := run(t, nil, "eval", "revisit", "--json", "--duration", "4s", "--windows", "0-2s,2s-4s", "--step", "1s",
		"--hosts", "2", "--pages", "10", "--budget", "10/s", "--page-kinds", "natural:0.9", "--policies", "optimal,optimal-nofeatures,oracle", "--plot", plot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Config struct{ Kinds struct{ Mapping string } }
		Runs   []struct{ Policy string }
		Sim    []struct{ Policy string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, out)
	}
	if res.Config.Kinds.Mapping != "natural" || len(res.Runs) != 3 || len(res.Sim) != 3 || res.Runs[1].Policy != "optimal-nofeatures" {
		t.Errorf("result %+v", res)
	}
	if fi, err := os.Stat(plot); err != nil || fi.Size() == 0 {
		t.Errorf("--plot with --json drew no plot: %v", err)
	}
}
