package feeds

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates (runtime.MemStats.TotalAlloc: deterministic,
// unlike the heap's size at a moment).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func gzipped(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		zw.Write(p)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// TestHostileXMLIsRefusedInBoundedMemory: shapes that made encoding/xml allocate many
// times their size (20 MiB of nested elements: 1.9 GB allocated, 1.2 GB of heap; one tag
// of 3.5 million attributes: 985 MB) are refused before any parser sees them, each with
// an error saying what it is; an ordinary sitemap of the same size is read as before.
// (Its size is the test's, not the limit: the shapes are refused whatever their size.)
func TestHostileXMLIsRefusedInBoundedMemory(t *testing.T) {
	const n = 4 << 20
	var normal bytes.Buffer
	normal.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; normal.Len() < n; i++ {
		fmt.Fprintf(&normal, "<url><loc>http://example.test/page/%d</loc><lastmod>2024-01-01</lastmod></url>\n", i)
	}
	normal.WriteString("</urlset>")
	for _, tc := range []struct {
		name, body, want string
		maxPerByte       float64 // bytes allocated per byte of body (0: any)
	}{
		{"nested elements", `<urlset>` + strings.Repeat("<a>", n/3), "nested more than 64 deep", 0.01},
		{"nested feed", `<rss><channel>` + strings.Repeat("<item>", n/6), "nested more than 64 deep", 0.01},
		{"attributes", `<urlset><url ` + strings.Repeat(`a="b" `, n/6) + `/></urlset>`, "a tag of 4096 KiB", 0.01},
		{"unclosed tag", `<urlset><url a="` + strings.Repeat("b", n), "runs on for more than 64 KiB", 0.01},
		{"endless loc", `<urlset><url><loc>http://x.test/` + strings.Repeat("a", n) + `</loc></url></urlset>`, "a text of more than 1024 KiB", 0.01},
		{"endless CDATA", `<urlset><url><loc><![CDATA[` + strings.Repeat("a", n) + `]]></loc></url></urlset>`, "a text of more than 1024 KiB", 0.01},
		// encoding/xml allocates about 24 bytes per byte of an ordinary sitemap, nearly all
		// short-lived tokens: not bounded here, only logged.
		{"ordinary sitemap", normal.String(), "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			var doc *Document
			var err error
			got := allocated(func() { doc, err = Parse(body, "application/xml", "http://x.test/sitemap.xml", Limits{}) })
			perByte := float64(got) / float64(len(body))
			t.Logf("%.1f MiB: %.0f MiB allocated (%.2f per byte); %v", float64(len(body))/(1<<20), float64(got)/(1<<20), perByte, err)
			if tc.want == "" {
				if err != nil || len(doc.Entries) != DefaultMaxEntries {
					t.Fatalf("ordinary sitemap: %v, %d entries", err, len(doc.Entries))
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.test/sitemap.xml") {
				t.Fatalf("error %v, want one naming the file and saying %q", err, tc.want)
			}
			if tc.maxPerByte > 0 && perByte > tc.maxPerByte {
				t.Errorf("%.2f bytes allocated per byte read, want at most %.2f", perByte, tc.maxPerByte)
			}
		})
	}
}

// TestGzipBombSitemap: a gzipped sitemap that expands without end is read in bounded
// memory whatever it expands to, and the error says it is a decompression bomb (it used
// to say "malformed sitemap XML").
func TestGzipBombSitemap(t *testing.T) {
	const limit = 2 << 20
	// Gzip members are read one after the other: one member of 1 MiB of "a" repeated is
	// a bomb of any size, made without compressing it all.
	head := gzipped(t, []byte(`<urlset><url><loc>http://x.test/a</loc></url><url><loc>http://x.test/`))
	member := gzipped(t, bytes.Repeat([]byte("a"), 1<<20))
	var sizes []uint64
	for _, expands := range []int{16, 256} { // MiB
		body := append(bytes.Clone(head), bytes.Repeat(member, expands)...)
		var doc *Document
		var err error
		got := allocated(func() {
			doc, err = Parse(body, "application/gzip", "http://x.test/sitemap.xml.gz", Limits{MaxBytes: limit})
		})
		t.Logf("%d KiB expanding to %d MiB: %.1f MiB allocated; %v", len(body)>>10, expands, float64(got)/(1<<20), err)
		if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "sitemap.xml.gz") {
			t.Errorf("error %v, want one naming the file as a decompression bomb", err)
		}
		if doc != nil && !doc.Truncated {
			t.Error("the document is not marked truncated")
		}
		// The bomb is stopped after expansionFloor bytes by its expansion (before, at the
		// limit, ≈ 3.1 MiB); what is allocated is then that MiB and the parse of it
		// (4.1 MiB, 6.1 MiB under -race, where sync.Pool keeps less).
		if got > 8<<20 {
			t.Errorf("%d MiB allocated reading a %d MiB limit", got>>20, limit>>20)
		}
		sizes = append(sizes, got)
	}
	if sizes[1] > sizes[0]+sizes[0]/4 {
		t.Errorf("memory grows with what the bomb expands to: %d then %d bytes", sizes[0], sizes[1])
	}
}

func TestCheckXMLShapeAcceptsRealFeeds(t *testing.T) {
	for _, body := range []string{
		`<?xml version="1.0"?><!DOCTYPE rss><rss version="2.0"><channel><title>a > b</title><item><description><![CDATA[<p>x</p><p>y</p>]]></description></item></channel></rss>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><!-- a <comment> --><entry><link href="/a?x=1&amp;y=>2" rel='alternate'/></entry></feed>`,
		`<urlset><url><loc>http://x.test/</loc><image:image><image:loc>http://x.test/i.png</image:loc></image:image></url></urlset>`,
	} {
		if err := checkXMLShape([]byte(body), maxSitemapText); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	deep := strings.Repeat("<a>", maxXMLDepth) + strings.Repeat("</a>", maxXMLDepth) + strings.Repeat("<b/>", 1000)
	if err := checkXMLShape([]byte(deep), 0); err != nil {
		t.Errorf("%d levels then siblings: %v", maxXMLDepth, err)
	}
	if err := checkXMLShape([]byte(strings.Repeat("<a>", maxXMLDepth+1)), 0); err == nil {
		t.Errorf("%d levels accepted", maxXMLDepth+1)
	}
}

// TestGzipBombStopsAtExpansion: with the protocol's 50 MiB limit a bomb is stopped by how
// much it expands, after about a MiB, not read up to the limit (which held 50 MiB of
// zeros while the crawl read a bomb, and up to 82 MB with the buffer's growth); a
// sitemap that compresses as well as real ones do is read whole.
func TestGzipBombStopsAtExpansion(t *testing.T) {
	head := gzipped(t, []byte(`<urlset><url><loc>http://x.test/a</loc></url><url><loc>http://x.test/`))
	bomb := append(head, bytes.Repeat(gzipped(t, make([]byte, 1<<20)), 256)...)
	var doc *Document
	var err error
	got := allocated(func() { doc, err = Parse(bomb, "application/gzip", "http://x.test/sitemap.xml.gz", Limits{}) })
	t.Logf("%d KiB expanding to 256 MiB: %.1f MiB allocated; %v", len(bomb)>>10, float64(got)/(1<<20), err)
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "sitemap.xml.gz") {
		t.Errorf("error %v, want one naming the file as a decompression bomb", err)
	}
	if doc == nil || !doc.Truncated || len(doc.Entries) != 1 {
		t.Errorf("want the entry read before the bomb, marked truncated: %+v", doc)
	}
	if got > 8<<20 {
		t.Errorf("%.1f MiB allocated reading a bomb: it was read toward the 50 MiB limit", float64(got)/(1<<20))
	}

	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range 50000 {
		fmt.Fprintf(&b, "<url>\n  <loc>https://www.example.com/products/item-%d</loc>\n  <lastmod>2024-01-01</lastmod>\n  <changefreq>daily</changefreq>\n  <priority>0.8</priority>\n</url>\n", i)
	}
	b.WriteString("</urlset>")
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(b.Bytes())
	zw.Close()
	doc, err = Parse(z.Bytes(), "application/gzip", "http://x.test/products.xml.gz", Limits{})
	if err != nil || doc == nil || len(doc.Entries) != 50000 || doc.Truncated {
		t.Errorf("a sitemap compressed %.0f times: err %v, %d entries", float64(b.Len())/float64(z.Len()), err, docEntries(doc))
	}
}
