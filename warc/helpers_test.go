package warc

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// htmlPayload returns n bytes of deterministic HTML-like text: compressible
// the way real pages are, unlike zeros or random bytes, so that compression
// benchmarks mean something.
func htmlPayload(seed uint64, n int) []byte {
	words := strings.Fields(`the crawler archive river satellite map dataset news article
		energy nuclear reactor shapefile freshness index search page link anchor
		brazil paulo rio data science research university library report`)
	r := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><head><title>page</title></head><body>\n")
	for b.Len() < n {
		switch r.IntN(8) {
		case 0:
			fmt.Fprintf(&b, "<a href=\"/p/%d\">%s</a>\n", r.IntN(100000), words[r.IntN(len(words))])
		case 1:
			b.WriteString("</p>\n<p>")
		default:
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

// testCapture builds capture i with every optional part varied by i.
func testCapture(i int, payloadSize int) Capture {
	u := fmt.Sprintf("http://host%d.example/page/%d?q=%d", i%7, i, i*3)
	c := Capture{
		TargetURI:      u,
		Date:           time.Date(2024, 5, 6, 7, 8, 9, (i%3)*123456000, time.UTC),
		Request:        []byte(fmt.Sprintf("GET /page/%d HTTP/1.1\r\nHost: host%d.example\r\nUser-Agent: sonda-test\r\n\r\n", i, i%7)),
		ResponseHeader: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", payloadSize)),
		Payload:        htmlPayload(uint64(i), payloadSize),
		Metadata: []Field{
			{"outlink", fmt.Sprintf("http://host%d.example/next", i)},
			{"fetchTimeMs", fmt.Sprint(10 + i)},
		},
	}
	switch i % 4 {
	case 0:
		c.IP = "127.0.0.1"
	case 1:
		c.IP = "::1"
		c.Truncated = "length"
	case 2:
		c.Request = nil
	case 3:
		c.Metadata = nil
	}
	return c
}

// readAll reads every record of one file.
func readAll(t testing.TB, path string) []*Record {
	t.Helper()
	r, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []*Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, rec)
	}
}

// warcFiles lists the finished WARC files in dir in name order, which is
// creation order (timestamp, then serial).
func warcFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".open") {
			t.Errorf("file still open: %s", e.Name())
			continue
		}
		names = append(names, filepath.Join(dir, e.Name()))
	}
	sort.Strings(names)
	return names
}
