package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCrawlRefusesUnrevisitedTopicSources: a negative news.source-interval leaves topic
// sources to the revisit policy, so `sonda crawl` without one stops at start and names both
// settings; the same configuration with --revisit given on the command line crawls.
func TestCrawlRefusesUnrevisitedTopicSources(t *testing.T) {
	env := []string{"SONDA_NEWS_ENABLED=true", "SONDA_NEWS_SOURCE_INTERVAL=-1s"}
	seed := []string{"crawl", "--seed", "http://127.0.0.1:9/", "--max-pages", "1", "--duration", "2s"} // bounded even if it did start
	_, stderr, code := run(t, env, append(seed, "--data", filepath.Join(t.TempDir(), "d"))...)
	if code == 0 {
		t.Fatal("the crawl started with topic sources that nothing would revisit")
	}
	for _, want := range []string{"news.source-interval", "revisit.policy", "never be fetched again"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not mention %q", stderr, want)
		}
	}
	// It crawls: nothing at the seed answers, so it ends with that error, not a refusal.
	_, stderr, code = run(t, env, append(seed, "--data", filepath.Join(t.TempDir(), "d"), "--revisit", "adaptive")...)
	if strings.Contains(stderr, "news.source-interval") || code != 0 && !strings.Contains(stderr, "no request got an answer") {
		t.Errorf("with --revisit adaptive: exit %d: %s", code, stderr)
	}
}
