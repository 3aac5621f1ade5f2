package testweb

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// unknownHost is linked from the web but not served by it: requests for it
// get 421 Misdirected Request.
const unknownHost = "www.nosuchsite.test"

// features lists the builders of the optional cases, in the order New runs
// them; each places its pages on the next ordinary host.
var features = []struct {
	flag Feature
	add  func(*builder)
}{
	{PageRobots, (*builder).pageRobots},
	{Redirects, (*builder).redirects},
	{Errors, (*builder).errors},
	{Slow, (*builder).slow},
	{Traps, (*builder).traps},
	{Charsets, (*builder).charsets},
	{Compression, (*builder).compression},
	{Duplicates, (*builder).duplicates},
	{NonHTML, (*builder).nonHTML},
}

// addCase records res as a case fetched once.
func (b *builder) addCase(res *resource, kind, want string) *Case {
	b.cases = append(b.cases, Case{URL: res.url, Kind: kind, Want: want, Fetches: 1})
	return &b.cases[len(b.cases)-1]
}

// homeOnly makes res link to its host's home page and nowhere else, so it
// adds nothing to the ground truth.
func homeOnly(res *resource) *resource {
	res.links = []link{{to: res.site.home, form: formRootRelative}}
	return res
}

// exclusive adds a page linked only by whoever gets it: whether it is
// fetched tells whether that link (or redirect) was followed.
func (b *builder) exclusive(s *site, dir string) *resource {
	return homeOnly(b.page(s, dir+b.slug()+".html"))
}

func (b *builder) ordinary(s *site) *resource {
	if len(s.pages) == 1 {
		return s.home
	}
	return s.pages[1+b.rng.IntN(len(s.pages)-1)]
}

// status adds an answer with an error status and no links.
func (b *builder) status(s *site, uri string, code int) *resource {
	r := b.add(s, uri, fmt.Sprintf("%d %s", code, http.StatusText(code)), serveStatus)
	r.status = code
	return r
}

// redirect adds a redirect from uri to target. Same-host Locations are
// root-relative, so the crawler must resolve them.
func (b *builder) redirect(s *site, uri string, code int, target *resource) *resource {
	r := b.add(s, uri, "moved", serveRedirect)
	r.status, r.location = code, target
	loc := target.url
	if target.site == s && b.rng.IntN(2) == 0 {
		loc = target.uri
	}
	r.loc = []string{loc}
	return r
}

func (b *builder) pageRobots() {
	s := b.featureSite()
	for _, c := range []struct {
		kind, want  string
		meta        [2]string
		header      string
		nofollowing bool
	}{
		{"meta-noindex", "noindex", [2]string{"robots", "noindex"}, "", false},
		{"meta-nofollow", "nofollow", [2]string{"robots", "nofollow"}, "", true},
		{"meta-none", "noindex,nofollow", [2]string{"robots", "none"}, "", true},
		{"meta-sonda-nofollow", "nofollow", [2]string{"sonda", "noindex, nofollow"}, "", true},
		{"meta-otherbot-nofollow", "ok", [2]string{"otherbot", "nofollow"}, "", false},
		{"x-robots-noindex", "noindex", [2]string{}, "noindex", false},
		{"x-robots-nofollow", "nofollow", [2]string{}, "nofollow", true},
	} {
		p := b.page(s, "/policy/"+b.slug()+".html")
		p.meta, p.nofollow = c.meta, c.nofollowing
		if c.header != "" {
			p.xRobots = []string{c.header}
		}
		homeOnly(p)
		only := b.exclusive(s, "/policy/linked/")
		p.links = append(p.links, link{to: only, form: b.form(p, only)})
		b.linkFrom(s, p)
		if c.meta[0] == "sonda" {
			c.want = "noindex,nofollow"
		}
		b.addCase(p, c.kind, c.want)
	}
}

func (b *builder) redirects() {
	s := b.featureSite()
	for _, c := range []struct {
		code   int
		dir    string
		target *resource
	}{
		{301, "/old/", b.ordinary(s)},
		{302, "/tmp/", b.exclusive(s, "/moved-here/")},
		{307, "/r307/", b.ordinary(s)},
		{308, "/r308/", b.exclusive(s, "/moved-here/")},
	} {
		r := b.redirect(s, c.dir+b.slug()+".html", c.code, c.target)
		b.linkFrom(s, r)
		b.addCase(r, fmt.Sprintf("redirect-%d", c.code), "redirect").Other = c.target.url
	}

	chain := func(dir string, hops int, end *resource) *resource {
		stem := dir + b.slug() + "-"
		for i := hops; i >= 1; i-- {
			end = b.redirect(s, fmt.Sprintf("%s%d", stem, i), 301+i%2, end)
		}
		b.linkFrom(s, end)
		return end
	}
	final := b.exclusive(s, "/arrived/")
	b.addCase(chain("/chain/", 3, final), "redirect-chain", "redirect").Other = final.url
	long := chain("/hops/", b.w.cfg.MaxRedirects+2, b.exclusive(s, "/too-far/"))
	b.addCase(long, "too-many-redirects", "too-many-redirects")

	ping := b.redirect(s, "/loop/ping-"+b.slug(), 302, s.home) // retargeted below
	pong := b.redirect(s, "/loop/pong-"+b.slug(), 302, ping)
	ping.location, ping.loc = pong, []string{pong.uri}
	b.linkFrom(s, ping)
	b.addCase(ping, "redirect-loop", "redirect-loop")

	if o := b.otherSite(s); o != nil {
		t := b.ordinary(o)
		r := b.redirect(s, "/go/"+b.slug(), 302, t)
		b.linkFrom(s, r)
		b.addCase(r, "redirect-cross-host", "redirect").Other = t.url
		for _, p := range o.pool {
			if strings.HasPrefix(p.uri, "/private/") && !o.robots.allows(p.uri) {
				r := b.redirect(s, "/go/"+b.slug(), 302, p)
				b.linkFrom(s, r)
				b.addCase(r, "redirect-to-disallowed", "redirect").Other = p.url
				break
			}
		}
	}
}

func (b *builder) errors() {
	s := b.featureSite()
	for _, c := range []struct {
		dir  string
		code int
	}{{"/missing/", 404}, {"/removed/", 410}, {"/broken/", 500}} {
		r := b.status(s, c.dir+b.slug()+".html", c.code)
		b.linkFrom(s, r)
		bc := b.addCase(r, fmt.Sprintf("http-%d", c.code), fmt.Sprintf("http-%d", c.code))
		if c.code >= 500 {
			bc.Fetches += b.w.cfg.Retries
		}
	}
	for _, c := range []struct {
		dir  string
		code int
	}{{"/limited/", 429}, {"/busy/", 503}} {
		r := homeOnly(b.page(s, c.dir+b.slug()+".html"))
		r.serve, r.status = serveTransient, c.code
		b.w.transient = append(b.w.transient, r)
		b.linkFrom(s, r)
		b.addCase(r, fmt.Sprintf("%d-retry-after", c.code), "ok").Fetches = 2
	}
	gone := b.w.byURL["http://"+unknownHost+"/"]
	if gone == nil {
		gone = b.detached(nil, "/", "A site that is not there", nil)
	}
	b.linkFrom(s, gone)
	b.addCase(gone, "unknown-host", "http-421")
}

func (b *builder) slow() {
	s := b.featureSite()
	for _, c := range []struct {
		uri, kind, want string
		serve           serveFunc
	}{
		{"/slow/first-byte-", "slow-first-byte", "timeout-first-byte", serveSlowFirstByte},
		{"/slow/drip-", "slow-drip", "truncated", serveDrip},
		{"/stream/endless-", "endless-body", "truncated", serveEndless},
		{"/big/huge-", "huge-body", "truncated", serveHuge},
	} {
		if b.w.cfg.HostileHosts && c.kind != "slow-first-byte" {
			s = b.featureSite()
		}
		r := b.add(s, c.uri+b.slug()+".html", c.kind, c.serve)
		b.linkFrom(s, r)
		bc := b.addCase(r, c.kind, c.want)
		if c.want == "timeout-first-byte" {
			bc.Fetches += b.w.cfg.Retries
		}
	}
}

func (b *builder) traps() {
	for _, t := range trapKinds {
		s := b.featureSite()
		route := &trapRoute{kind: t.kind, match: t.match, serve: t.serve}
		s.traps = append(s.traps, route)
		entry := b.detached(s, t.entry(b.w.seed), t.kind+" trap", nil)
		entry.trap = &Trap{Kind: t.kind, Entry: entry.url, MaxFetches: b.w.cfg.TrapLimit}
		route.trap = entry.trap
		b.linkFrom(s, entry)
	}
}

func (b *builder) charsets() {
	s := b.featureSite()
	latin1, win1252 := charmap.ISO8859_1.NewEncoder(), charmap.Windows1252.NewEncoder()
	for _, c := range []struct {
		kind, title, ctype, meta string
		encode                   func(string) (string, error)
	}{
		{"charset-meta-only", "Café com açúcar em São Paulo", "text/html", `<meta charset="iso-8859-1">`, latin1.String},
		{"charset-undeclared-windows-1252", "“Smart” quotes cost 5 € – naïve façade", "text/html", "", win1252.String},
		{"charset-latin1-labelled-utf8", "Coração de pinhão e maçã", "text/html; charset=utf-8", "", latin1.String},
		{"charset-utf8-labelled-latin1", "Über naïve crème brûlée", "text/html; charset=iso-8859-1", "", nil},
	} {
		r := homeOnly(b.add(s, "/intl/"+b.slug()+".html", c.title, serveRaw))
		page := "<!DOCTYPE html>\n<html><head>" + c.meta + "<title>" + c.title + "</title></head>\n<body><h1>" +
			c.title + "</h1>\n<p>Ação, coração, café, déjà vu, naïveté, smörgåsbord, piñata, Ærø, façade.</p>\n" +
			"<p><a href=\"/\">Início</a></p>\n</body></html>\n"
		if c.encode != nil {
			enc, err := c.encode(page)
			if err != nil { // only if a title above were not encodable: a bug in this table
				panic("testweb: " + c.kind + ": " + err.Error())
			}
			page = enc
		}
		r.raw, r.ctype = []byte(page), []string{c.ctype}
		b.linkFrom(s, r)
		b.addCase(r, c.kind, "ok").Title = c.title
	}
}

func (b *builder) compression() {
	s := b.featureSite()
	for _, enc := range []string{"gzip", "deflate", "br"} {
		r := homeOnly(b.page(s, "/z/"+b.slug()+"-"+enc+".html"))
		r.serve, r.encoding = serveEncoded, enc
		b.linkFrom(s, r)
		b.addCase(r, "compressed-"+enc, "ok").Title = r.title
	}
	bomb := b.add(s, "/z/bomb-"+b.slug()+".html", "bomb", serveBomb)
	b.linkFrom(s, bomb)
	b.addCase(bomb, "gzip-bomb", "decompression-bomb")
	bad := b.add(s, "/z/corrupt-"+b.slug()+".html", "corrupt", serveBadGzip)
	b.linkFrom(s, bad)
	b.addCase(bad, "corrupt-gzip", "decompress")
}

func (b *builder) duplicates() {
	s := b.featureSite()
	orig := b.page(s, "/articles/"+b.slug()+".html")
	orig.absOnly, orig.paragraphs = true, 10
	homeOnly(orig)
	for range 3 {
		t := b.ordinary(s)
		orig.links = append(orig.links, link{to: t, form: b.form(orig, t)})
	}
	b.linkFrom(s, orig)
	copyAt := func(on *site, uri string) *resource {
		r := b.add(on, uri, orig.title, servePage)
		r.copyOf, r.links, r.etag = orig, orig.links, orig.etag
		b.linkFrom(on, r)
		return r
	}
	stem := strings.TrimSuffix(strings.TrimPrefix(orig.uri, "/articles/"), ".html")
	b.addCase(copyAt(s, "/print/"+stem+".html"), "exact-duplicate", "duplicate").Other = orig.url
	if o := b.otherSite(s); o != nil {
		b.addCase(copyAt(o, "/mirror/"+stem+".html"), "exact-duplicate-cross-host", "duplicate").Other = orig.url
	}
	near := copyAt(s, "/articles/"+stem+"-revised.html")
	near.swapAt, near.etag = 60, []string{fmt.Sprintf(`"%016x"`, near.seed)}
	b.addCase(near, "near-duplicate", "near-duplicate").Other = orig.url
}

func (b *builder) nonHTML() {
	s := b.featureSite()
	files := []struct {
		ext, ctype string
		body       []byte
	}{
		{".pdf", "application/pdf", pdfFile(s.name)},
		{".zip", "application/zip", zipFile(s.name)},
		{".png", "image/png", pngFile(b.w.seed)},
	}
	for _, f := range files {
		r := b.add(s, "/files/"+b.slug()+f.ext, "file "+f.ext, serveRaw)
		r.raw, r.ctype = f.body, []string{f.ctype}
		b.linkFrom(s, r)
		b.addCase(r, "file-"+f.ext[1:], "skipped")
		if f.ext == ".png" {
			s.home.img = r
		}
	}
	for _, c := range []struct {
		kind, title string
		ctype       []string
	}{
		{"missing-content-type", "Page served without a content type", nil},
		{"generic-content-type", "Page served as octet-stream", []string{"application/octet-stream"}},
	} {
		r := homeOnly(b.add(s, "/raw/"+b.slug(), c.title, serveRaw))
		r.raw, r.ctype = tinyPage(nil, c.title, "Sniff me: this is HTML.", "/", "Home"), c.ctype
		b.linkFrom(s, r)
		b.addCase(r, c.kind, "ok").Title = c.title
	}
	t := b.ordinary(s)
	r := b.add(s, "/broken-markup-"+b.slug()+".html", "Broken markup & co", serveRaw)
	r.links = []link{{to: s.home}, {to: t}}
	r.raw, r.ctype = []byte(malformedHTML(t.uri)), []string{"text/html; charset=utf-8"}
	b.linkFrom(s, r)
	b.addCase(r, "malformed-html", "ok").Title = r.title
}

// malformedHTML is tag soup an HTML5 parser still gets a title and two links
// out of: unclosed and misnested elements, unquoted attributes, stray end
// tags, a bare ampersand.
func malformedHTML(other string) string {
	return "<html><head><title>Broken markup &amp; co</title>\n" +
		"<body><div><p>Unclosed paragraph <b>bold <i>misnested</b> text</i>\n" +
		"<p>Stray &amp entity <unknown-tag attr>and an <a href=/ class=nav>unquoted home link</a>\n" +
		"<table><tr><td>cell<td>another cell</table></div></div></span>\n" +
		"<p>A <a href='" + other + "'>single-quoted link</a> in a paragraph that never closes\n" +
		"<li>list item without a list</ul></body>"
}

// pdfFile is a one-page PDF with correct cross-reference offsets.
func pdfFile(host string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		"", // content stream, below
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	text := "BT /F1 18 Tf 20 70 Td (Report from " + host + ") Tj ET"
	objs[3] = fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(text), text)
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// zipFile is a ZIP archive with a README and a CSV; fixed timestamps keep
// its bytes deterministic.
func zipFile(host string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	when := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, f := range []struct{ name, body string }{
		{"README.txt", "Data published by " + host + "\n"},
		{"stations.csv", "id,name,lat,lon\n1,North,-23.55,-46.63\n2,South,-30.03,-51.23\n"},
	} {
		fw, err := z.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: when})
		if err == nil {
			_, err = fw.Write([]byte(f.body))
		}
		if err != nil { // writes to a bytes.Buffer do not fail
			panic("testweb: zip: " + err.Error())
		}
	}
	if err := z.Close(); err != nil {
		panic("testweb: zip: " + err.Error())
	}
	return b.Bytes()
}

// pngFile is a 16×16 PNG whose colours depend on seed.
func pngFile(seed uint64) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			img.Set(x, y, color.RGBA{uint8(seed) + uint8(x*16), uint8(seed>>8) + uint8(y*16), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("testweb: png: " + err.Error())
	}
	return b.Bytes()
}
