package feeds

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

const rss = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Daily Planet</title><link>https://planet.example/</link>
<item><title>Storm hits the coast</title><link>https://planet.example/news/storm.html</link>
<pubDate>Sat, 12 May 2018 08:00:00 GMT</pubDate></item>
<item><title>Relative link</title><link>/news/relative.html</link></item>
<item><title>GUID only</title><guid isPermaLink="true">https://planet.example/news/guid.html</guid></item>
<item><title>No link at all</title></item>
</channel></rss>`

const atom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom News</title>
<entry><title>First</title><link href="https://ex.example/a/1" rel="alternate"/><updated>2020-01-02T03:04:05Z</updated></entry>
<entry><title>Second</title><link href="https://ex.example/a/2"/><published>2020-01-03T00:00:00+01:00</published></entry>
</feed>`

const jsonFeed = `{"version":"https://jsonfeed.org/version/1.1","title":"JSON News","items":[
{"id":"1","url":"https://ex.example/j/1","title":"One","date_published":"2021-05-01T10:00:00Z"}]}`

const newsSitemap = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
 <url>
  <loc>https://news.example/2018/05/12/storm.html</loc>
  <lastmod>2018-05-12T08:03:49-03:00</lastmod>
  <changefreq>Hourly</changefreq>
  <news:news>
   <news:publication><news:name>The Example Times</news:name><news:language>pt</news:language></news:publication>
   <news:publication_date>2018-05-12T05:00:00-03:00</news:publication_date>
   <news:title>Tempestade atinge a costa</news:title>
   <news:keywords>tempo, chuva , costa</news:keywords>
  </news:news>
  <image:image><image:loc>https://news.example/img/storm.jpg</image:loc></image:image>
 </url>
 <url><loc>/relative/page.html</loc></url>
 <url><loc>ftp://news.example/file</loc></url>
 <url><lastmod>2018-01-01</lastmod></url>
</urlset>`

const sitemapIndex = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://news.example/sitemap-1.xml.gz</loc><lastmod>2024-01-01</lastmod></sitemap>
<sitemap><loc>https://news.example/sitemap-news.xml</loc></sitemap>
</sitemapindex>`

// gz compresses s (writing to a buffer cannot fail).
func gz(_ testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func urls(d *Document) []string {
	if d == nil {
		return nil
	}
	return d.URLs()
}

func TestParseFeeds(t *testing.T) {
	tests := []struct {
		name, body, mediaType, url string
		title                      string
		want                       []string
	}{
		{"rss", rss, "application/rss+xml", "https://planet.example/feed.xml", "Daily Planet",
			[]string{"https://planet.example/news/storm.html", "https://planet.example/news/relative.html", "https://planet.example/news/guid.html"}},
		{"atom served as text/xml", atom, "text/xml", "https://ex.example/atom", "Atom News", []string{"https://ex.example/a/1", "https://ex.example/a/2"}},
		{"json feed", jsonFeed, "application/feed+json", "https://ex.example/feed.json", "JSON News", []string{"https://ex.example/j/1"}},
		{"rss without media type", rss, "", "https://planet.example/feed", "Daily Planet", nil},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.body), tt.mediaType, tt.url, Limits{})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d.Kind != KindFeed || d.Title != tt.title {
			t.Errorf("%s: kind %q title %q", tt.name, d.Kind, d.Title)
		}
		if tt.want != nil && !reflect.DeepEqual(urls(d), tt.want) {
			t.Errorf("%s: urls %q, want %q", tt.name, urls(d), tt.want)
		}
	}
	d, _ := Parse([]byte(rss), "", "https://planet.example/feed", Limits{})
	if got := d.Entries[0]; got.Title != "Storm hits the coast" || !got.Published.Equal(time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("rss entry %+v", got)
	}
}

func TestParseSitemaps(t *testing.T) {
	d, err := Parse([]byte(newsSitemap), "application/xml", "https://news.example/sitemap-news.xml", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	brt := time.FixedZone("", -3*3600)
	want := []Entry{{
		URL: "https://news.example/2018/05/12/storm.html", Title: "Tempestade atinge a costa",
		Published: time.Date(2018, 5, 12, 5, 0, 0, 0, brt), Modified: time.Date(2018, 5, 12, 8, 3, 49, 0, brt),
		Source: "The Example Times", Language: "pt", Keywords: []string{"tempo", "chuva", "costa"},
		Images: []string{"https://news.example/img/storm.jpg"}, Frequency: "hourly",
	}, {URL: "https://news.example/relative/page.html"}}
	if d.Kind != KindSitemap || len(d.Entries) != 2 {
		t.Fatalf("kind %q, %d entries: %+v", d.Kind, len(d.Entries), d.Entries)
	}
	for i := range want {
		g, w := d.Entries[i], want[i]
		if g.URL != w.URL || g.Title != w.Title || !g.Published.Equal(w.Published) || !g.Modified.Equal(w.Modified) ||
			g.Source != w.Source || g.Language != w.Language || !reflect.DeepEqual(g.Keywords, w.Keywords) ||
			!reflect.DeepEqual(g.Images, w.Images) || g.Frequency != w.Frequency {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}

	idx, err := Parse([]byte(sitemapIndex), "text/xml", "https://news.example/sitemap.xml", Limits{})
	if err != nil || idx.Kind != KindSitemapIndex || len(idx.Sitemaps) != 2 || len(idx.Entries) != 0 {
		t.Fatalf("index: %v %+v", err, idx)
	}
	if idx.Sitemaps[0].URL != "https://news.example/sitemap-1.xml.gz" || idx.Sitemaps[0].Modified.IsZero() {
		t.Errorf("index entry %+v", idx.Sitemaps[0])
	}
}

func TestParseGzipAndText(t *testing.T) {
	// sitemap.xml.gz arrives compressed, served as application/gzip or octet-stream.
	d, err := Parse(gz(t, newsSitemap), "application/gzip", "https://news.example/s.xml.gz", Limits{})
	if err != nil || d.Kind != KindSitemap || len(d.Entries) != 2 {
		t.Fatalf("gzip sitemap: %v %+v", err, d)
	}
	text := "https://ex.example/a\n\n  https://ex.example/b  \nnot a url\nmailto:x@y\n"
	d, err = Parse([]byte(text), "text/plain", "https://ex.example/sitemap.txt", Limits{})
	if err != nil || !reflect.DeepEqual(urls(d), []string{"https://ex.example/a", "https://ex.example/b"}) {
		t.Errorf("text sitemap: %v %q", err, urls(d))
	}
	d, err = Parse(gz(t, text), "application/octet-stream", "https://ex.example/sitemap.txt.gz", Limits{})
	if err != nil || len(urls(d)) != 2 {
		t.Errorf("gzipped text sitemap: %v %q", err, urls(d))
	}
}

func TestParseLatin1Sitemap(t *testing.T) {
	body := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://ex.example/p</loc>" +
		"<news:news><news:title>Ca\xe7a \xe0s bruxas</news:title></news:news></url></urlset>"
	d, err := Parse([]byte(body), "application/xml", "https://ex.example/s.xml", Limits{})
	if err != nil || len(d.Entries) != 1 || d.Entries[0].Title != "Caça às bruxas" {
		t.Fatalf("ISO-8859-1 sitemap: %v %+v", err, d)
	}
}

func TestParseErrors(t *testing.T) {
	// Malformed XML: the entries before the error are kept, the error names the place.
	bad := `<urlset><url><loc>https://ex.example/1</loc></url><url><loc>https://ex.example/2</loc></url><url><loc>broken</url></urlset>`
	d, err := Parse([]byte(bad), "application/xml", "https://ex.example/s.xml", Limits{})
	if err == nil || !strings.Contains(err.Error(), "https://ex.example/s.xml") || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed sitemap error = %v", err)
	}
	if got := urls(d); !reflect.DeepEqual(got, []string{"https://ex.example/1", "https://ex.example/2"}) {
		t.Errorf("entries before the error: %q", got)
	}
	for name, body := range map[string]string{
		"html page":    "<!DOCTYPE html><html><body>hello</body></html>",
		"empty":        "",
		"binary":       "\x00\x01\x02",
		"json":         `{"a":1}`,
		"text in html": "<p>https://ex.example/</p>",
	} {
		if _, err := Parse([]byte(body), "", "https://ex.example/x", Limits{}); !errors.Is(err, ErrNotFeed) {
			t.Errorf("%s: error %v, want ErrNotFeed", name, err)
		}
	}
	if _, err := Parse([]byte("\x1f\x8bnot gzip at all"), "application/gzip", "https://ex.example/x.gz", Limits{}); err == nil {
		t.Error("corrupt gzip must be an error")
	}
	if _, err := Parse([]byte(`<rss><channel><item><link>x`), "application/rss+xml", "https://ex.example/f", Limits{}); err == nil {
		t.Error("malformed feed must be an error")
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<urlset>`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "<url><loc>https://ex.example/p%d</loc></url>", i)
	}
	b.WriteString(`</urlset>`)
	d, err := Parse([]byte(b.String()), "", "https://ex.example/s.xml", Limits{MaxEntries: 10})
	if err != nil || len(d.Entries) != 10 || !d.Truncated {
		t.Errorf("MaxEntries: %v, %d entries, truncated %v", err, len(d.Entries), d.Truncated)
	}
	// A gzip bomb: a megabyte of spaces inside the XML decompresses within MaxBytes only.
	head := `<urlset><url><loc>https://ex.example/first</loc></url>`
	bomb := gz(t, head+strings.Repeat(" ", 4<<20)+`<url><loc>https://ex.example/last</loc></url></urlset>`)
	d, err = Parse(bomb, "application/gzip", "https://ex.example/s.xml.gz", Limits{MaxBytes: 1 << 20})
	if d == nil || !d.Truncated || !reflect.DeepEqual(urls(d), []string{"https://ex.example/first"}) {
		t.Errorf("MaxBytes: err %v doc %+v", err, d)
	}
	if err == nil {
		t.Error("a sitemap cut by MaxBytes ends in the middle of its XML: an error is expected")
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		mediaType, body string
		want            Kind
	}{
		{"", "\xef\xbb\xbf<?xml version='1.0'?>\n<!-- generator -->\n<rss version='2.0'>", KindFeed},
		{"", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">`, KindFeed},
		{"", `<?xml version="1.0"?><?xml-stylesheet href="s.xsl"?><feed xmlns="http://www.w3.org/2005/Atom">`, KindFeed},
		{"", `<!DOCTYPE urlset><urlset>`, KindSitemap},
		{"", `<sitemapindex xmlns="...">`, KindSitemapIndex},
		{"application/json", `{"version": "https://jsonfeed.org/version/1", "items": []}`, KindFeed},
		{"text/plain", "https://ex.example/a\nhttps://ex.example/b", KindSitemap},
		{"text/html", "https://ex.example/a", KindNone},
		{"", `<html><head>`, KindNone},
		{"", ``, KindNone},
	}
	for _, tt := range tests {
		if got := Detect(tt.mediaType, []byte(tt.body)); got != tt.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", tt.mediaType, tt.body, got, tt.want)
		}
	}
	if Detect("application/gzip", gz(t, sitemapIndex)) != KindSitemapIndex {
		t.Error("a gzipped body must be looked into")
	}
}

func TestLooksLikeFeedURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://ex.example/sitemap.xml":         true,
		"https://ex.example/sitemap_index.xml":   true,
		"https://ex.example/news-sitemap":        true,
		"https://ex.example/s/pages.xml.gz":      true,
		"https://ex.example/feed/":               true,
		"https://ex.example/category/world/rss":  true,
		"https://ex.example/index.atom":          true,
		"https://ex.example/news/storm.html":     false,
		"https://ex.example/feedback":            false,
		"https://ex.example/":                    false,
		"https://ex.example/rss-news-about-this": false,
	} {
		if got := LooksLikeFeedURL(u); got != want {
			t.Errorf("LooksLikeFeedURL(%q) = %v", u, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{rss, atom, jsonFeed, newsSitemap, sitemapIndex, "https://a.example/\n", "<urlset><url><loc>x"} {
		f.Add([]byte(s), "")
	}
	f.Add(gz(f, newsSitemap), "application/gzip")
	f.Fuzz(func(t *testing.T, body []byte, mediaType string) {
		d, _ := Parse(body, mediaType, "https://ex.example/s.xml", Limits{MaxEntries: 100, MaxBytes: 1 << 20})
		if d == nil {
			return
		}
		if len(d.Entries) > 100 || len(d.Sitemaps) > 100 {
			t.Fatalf("limit broken: %d entries, %d sitemaps", len(d.Entries), len(d.Sitemaps))
		}
		for _, u := range d.URLs() {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("non-http URL %q kept", u)
			}
		}
	})
}

func BenchmarkParseSitemap(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "<url><loc>https://news.example/2024/01/%02d/story-%d.html</loc><lastmod>2024-01-01T10:00:00Z</lastmod></url>\n", i%28+1, i)
	}
	sb.WriteString("</urlset>")
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Parse(body, "application/xml", "https://news.example/sitemap.xml", Limits{})
		if err != nil || len(d.Entries) != 10000 {
			b.Fatal(err)
		}
	}
}
