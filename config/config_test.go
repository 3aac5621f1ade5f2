package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTemplateIsTheDefault: the commented file users read is the source of the defaults.
func TestTemplateIsTheDefault(t *testing.T) {
	for _, p := range append([]string{""}, Profiles...) {
		b, err := Template(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := parse(b)
		if err != nil {
			t.Fatalf("profile %s: template does not parse: %v", p, err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		if !strings.Contains(string(b), "# ") {
			t.Fatalf("profile %s: template has no comments", p)
		}
	}
	for p, want := range map[string][]string{"": nil, "topic": {"nuclear"}, "geo": {"geo"}, "news": nil} {
		b, _ := Template(p)
		c, _ := parse(b)
		if !reflect.DeepEqual(c.Focus.Topics, want) && (len(want) > 0 || len(c.Focus.Topics) > 0) {
			t.Errorf("profile %q: focus.topics %v, want %v", p, c.Focus.Topics, want)
		}
	}
	d := Default()
	if d.Politeness.PerHost != 1 || d.Politeness.MinDelay != time.Second || d.Fetch.MaxBody != 10<<20 || d.Robots.CacheTTL != 24*time.Hour {
		t.Fatalf("defaults: %+v", d)
	}
	if _, err := Template("nope"); err == nil || !strings.Contains(err.Error(), "topic, news, geo") {
		t.Fatalf("unknown profile error should list the profiles, got %v", err)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sonda.yaml")
	if err := os.WriteFile(path, []byte("data: /x\npoliteness:\n  min-delay: 250ms\nfetch:\n  max-body: 2MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, []string{"HOME=/root", "SONDA_POLITENESS_PER_HOST=3", "SONDA_CRAWL_SEEDS=http://a/, http://b/", "SONDA_FETCH_ALLOW_PRIVATE=true"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"data": c.Data == "/x", "min-delay": c.Politeness.MinDelay == 250*time.Millisecond,
		"max-body": c.Fetch.MaxBody == 2<<20, "per-host": c.Politeness.PerHost == 3,
		"seeds": reflect.DeepEqual(c.Crawl.Seeds, []string{"http://a/", "http://b/"}), "allow-private": c.Fetch.AllowPrivate,
		"untouched default": c.Fetch.MaxRedirects == 5,
	}
	for k, ok := range want {
		if ok != true {
			t.Errorf("%s not applied: %+v", k, c)
		}
	}
}

func TestLoadErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"politeness:\n  per-hots: 2\n":     "per-hots",
		"politeness:\n  min-delay: soon\n": "line 2",
		"fetch:\n  max-body: lots\n":       "lots",
		"scope:\n  follow: everywhere\n":   "scope.follow",
		"crawl:\n  concurrency: 0\n":       "crawl.concurrency",
		"politeness:\n  max-delay: 1ms\n":  "politeness.max-delay",
		"robots:\n  agent: Sonda Bot\n":    "robots.agent",
		// Decoder errors speak of sections, lists and durations, never of Go types.
		"politeness: 5\n":                   "found the number `5` where a section of settings",
		"crawl:\n  seeds: x\n":              "found the text `x` where a list such as [a, b] belongs",
		"fetch:\n  connect-timeout: soon\n": "where a duration such as 30s",
		"warc:\n  enabled: maybe\n":         "where true or false belongs",
	}
	for body, want := range cases {
		path := filepath.Join(dir, "c.yaml")
		os.WriteFile(path, []byte(body), 0o644)
		_, err := Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v should mention %q", body, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "[]string") || strings.Contains(err.Error(), "time.Duration")) {
			t.Errorf("%q: error %v names a Go type", body, err)
		}
	}
	if _, err := Load("", []string{"SONDA_FETCH_USERAGENT=x"}); err == nil || !strings.Contains(err.Error(), "SONDA_FETCH_USERAGENT") {
		t.Errorf("a misspelt variable should be an error naming it, got %v", err)
	}
	if _, err := Load("", []string{"SONDA_POLITENESS_MIN_DELAY=5"}); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("a bad duration should say what is expected, got %v", err)
	}
}

func TestByteSize(t *testing.T) {
	cases := map[string]ByteSize{"10MiB": 10 << 20, "500KiB": 500 << 10, "1.5KB": 1500, "4096": 4096, "2 GiB": 2 << 30, "7b": 7}
	for in, want := range cases {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ten", "-1MiB", "MiB"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) should fail", bad)
		}
	}
	if s := ByteSize(10 << 20).String(); s != "10MiB" {
		t.Errorf("String = %s", s)
	}
}

// TestSearchMemoryLimit: a process that answers searches counts the search caches'
// bounds on top of memory-limit; no limit stays no limit.
func TestSearchMemoryLimit(t *testing.T) {
	c := Default()
	if got, want := c.SearchMemoryLimit(), ByteSize(384+128+256+128)<<20; got != want {
		t.Errorf("default: %s, want %s (memory-limit + facet-cache + forward-cache + postings-cache)", got, want)
	}
	c.MemoryLimit, c.Search.PostingsCache, c.Search.ForwardCache = 100<<20, 64<<20, 0
	if got, want := c.SearchMemoryLimit(), ByteSize(100+128+64)<<20; got != want {
		t.Errorf("postings-cache 64MiB, forward-cache 0: %s, want %s", got, want)
	}
	c.MemoryLimit = 0
	if got := c.SearchMemoryLimit(); got != 0 {
		t.Errorf("memory-limit 0: %s, want 0 (no limit)", got)
	}
}

// TestDataRelativeToFile: a relative data directory in a file is relative to the file's
// folder; an absolute one, or none, is kept.
func TestDataRelativeToFile(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"data: ./sonda-data\n":  filepath.Join(dir, "sonda-data"),
		"data: /abs/d\n":        "/abs/d",
		"crawl:\n  seeds: []\n": Default().Data,
	} {
		path := filepath.Join(dir, "sonda.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Data != want {
			t.Errorf("%q: data = %q, want %q", body, c.Data, want)
		}
	}
	// The environment is relative to the working directory, as flags are.
	c, err := Load(filepath.Join(dir, "sonda.yaml"), []string{"SONDA_DATA=rel"})
	if err != nil || c.Data != "rel" {
		t.Errorf("SONDA_DATA=rel: %q, %v", c.Data, err)
	}
}
