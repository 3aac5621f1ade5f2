package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/testweb/topical"
)

// TestFocusedCrawl: `sonda crawl --topic` judges every page, exports relevance and the
// relevant flag, reports the harvest, and steers with the online learner by default.
func TestFocusedCrawl(t *testing.T) {
	web := topical.New(topical.Config{Seed: 2, Sites: 60, MeanPages: 15})
	addr, err := web.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := t.TempDir()
	args := []string{"crawl", "--data", data, "--allow-private", "--resolve", "*.test=" + addr, "--min-delay", "0",
		"--max-pages", "150", "--topic", filepath.Join("..", "..", "topics", "nuclear.yaml")}
	for _, s := range web.Seeds(topical.Nuclear) {
		args = append(args, "--seed", s)
	}
	out, stderr, code := run(t, quickEnv, args...)
	if code != 0 {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "harvest:") {
		t.Fatalf("the summary does not report the harvest:\n%s", out)
	}
	st, err := crawl.ReadStatus(data)
	if err != nil || st.Judged < 100 || st.Relevant == 0 {
		t.Fatalf("status.json judged %d relevant %d (%v)", st.Judged, st.Relevant, err)
	}
	out, _, _ = run(t, nil, "export", "--data", data, "--what", "pages")
	judged, relevant := 0, 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			URL         string   `json:"url"`
			ContentType string   `json:"content_type"`
			Relevance   *float64 `json:"relevance"`
			Relevant    *bool    `json:"relevant"`
			Topics      []string `json:"topics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ContentType != "text/html" {
			continue
		}
		if rec.Relevance == nil || rec.Relevant == nil || *rec.Relevance < 0 || *rec.Relevance > 1 {
			t.Fatalf("%s: exported without relevance: %s", rec.URL, sc.Text())
		}
		judged++
		if *rec.Relevant {
			relevant++
			if len(rec.Topics) != 1 || rec.Topics[0] != "nuclear" {
				t.Errorf("%s: topics %v", rec.URL, rec.Topics)
			}
		}
	}
	if int64(judged) != st.Judged || int64(relevant) != st.Relevant {
		t.Errorf("export has %d judged, %d relevant; status says %d, %d", judged, relevant, st.Judged, st.Relevant)
	}
}

func TestFocusFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--link-strategy", "shark"}, "give a topic"},
		{[]string{"crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--topic", "none.yaml"}, "none.yaml"},
		{[]string{"crawl", "--data", t.TempDir(), "--seed", "http://x.test/", "--topic", "../../topics/nuclear.yaml", "--link-strategy", "mlp"}, "sonda train links"},
	} {
		_, stderr, code := run(t, quickEnv, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("sonda %v: exit %d, stderr %q; want an error mentioning %q", c.args, code, stderr, c.want)
		}
	}
	out, _, _ := run(t, nil, "crawl", "--help")
	for _, want := range []string{"--topic", "--page-model", "--link-model", "online", "shark", "harvest"} {
		if !strings.Contains(out, want) {
			t.Errorf("crawl --help does not mention %q", want)
		}
	}
}
