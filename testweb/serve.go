package testweb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

var (
	htmlType   = []string{"text/html; charset=utf-8"}
	textType   = []string{"text/plain; charset=utf-8"}
	xmlType    = []string{"application/xml; charset=utf-8"}
	gzipCoding = []string{"gzip"}
)

// bufPool recycles the buffers pages are rendered into: rendering happens
// on every request, and the throughput benchmarks make thousands a second.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		bufPool.Put(b)
	}
}

// ServeHTTP answers a request for any host of the web, chosen by the Host
// header, and logs it. Hosts the web does not serve get 421 Misdirected
// Request, except an IP address or "localhost", which get an index of the
// web for people exploring it with a browser or curl.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.handling.Add(1)
	defer w.handling.Add(-1) // after the request is logged
	start := time.Now()
	host := canonicalHost(r.Host)
	s := w.byName[host]
	status := w.answer(rw, r, s, host)
	e := entry{
		host:   host,
		target: r.RequestURI,
		path:   r.URL.Path,
		query:  r.URL.RawQuery,
		ua:     r.UserAgent(),
		status: status,
		start:  start,
	}
	if w.cfg.KeepHeaders {
		e.header = r.Header
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.retryAfter = w.retryAfterDur
	}
	e.end = time.Now()
	// The request's context is cancelled before the handler returns only when the
	// client has gone away.
	e.abandoned = r.Context().Err() != nil
	if s != nil {
		s.log.add(e)
	} else {
		w.unknown.add(e)
	}
}

func (w *Web) answer(rw http.ResponseWriter, r *http.Request, s *site, host string) int {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header()["Allow"] = []string{"GET, HEAD"}
		return writeBody(rw, r, http.StatusMethodNotAllowed, htmlType, tinyPage(nil, "405 Method Not Allowed", "Only GET and HEAD."))
	}
	if s == nil {
		if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil || host == "localhost" || host == "" {
			return writeBody(rw, r, http.StatusOK, htmlType, w.index())
		}
		return writeBody(rw, r, http.StatusMisdirectedRequest, htmlType,
			tinyPage(nil, "421 Misdirected Request", "This server does not serve "+host+"."))
	}
	res, route, query := s.lookup(r.URL.Path, r.URL.RawQuery)
	switch {
	case res != nil && res.serve != nil:
		return res.serve(w, rw, r, res)
	case route != nil:
		return w.serveTrap(rw, r, route, r.URL.Path, query)
	}
	return writeBody(rw, r, http.StatusNotFound, htmlType, tinyPage(nil, "404 Not Found", "No such page on "+s.name+"."))
}

// lookup finds what answers path and query on s. The query is looked up
// without utm_* parameters, as real sites ignore them.
func (s *site) lookup(path, query string) (*resource, *trapRoute, string) {
	query = stripTracking(query)
	key := path
	if query != "" {
		key = path + "?" + query
	}
	if res := s.res[key]; res != nil {
		return res, nil, query
	}
	for _, t := range s.traps {
		if t.match(path, query) {
			return nil, t, query
		}
	}
	return nil, nil, query
}

// stripTracking drops utm_* parameters from a raw query.
func stripTracking(query string) string {
	if !strings.Contains(query, "utm_") {
		return query
	}
	var kept []string
	for _, p := range strings.Split(query, "&") {
		if !strings.HasPrefix(p, "utm_") {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "&")
}

// canonicalHost is the host of a Host header: lowercase, without port or
// trailing dot.
func canonicalHost(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// writeBody writes a whole response with a Content-Length; a nil ctype
// sends no Content-Type at all (net/http would otherwise sniff one).
func writeBody(rw http.ResponseWriter, r *http.Request, status int, ctype []string, body []byte) int {
	h := rw.Header()
	h["Content-Type"] = ctype
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	rw.WriteHeader(status)
	if r.Method != http.MethodHead {
		rw.Write(body) // a failed write means the client left; the status is logged anyway
	}
	return status
}

// notModified answers conditional requests for generated pages.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return inm == "*" || strings.Contains(inm, etag)
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		t, err := http.ParseTime(ims)
		return err == nil && !modified.After(t)
	}
	return false
}

func servePage(w *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	h := rw.Header()
	h["Etag"] = res.etag
	h["Last-Modified"] = w.lastMod
	if res.xRobots != nil {
		h["X-Robots-Tag"] = res.xRobots
	}
	if notModified(r, res.etag[0], w.lastModT) {
		rw.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified
	}
	buf := getBuf()
	defer putBuf(buf)
	*buf = w.appendPage((*buf)[:0], res)
	return writeBody(rw, r, http.StatusOK, htmlType, *buf)
}

func serveRaw(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	rw.Header()["Etag"] = res.etag
	return writeBody(rw, r, http.StatusOK, res.ctype, res.raw)
}

func serveHandler(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	sw := &statusRecorder{ResponseWriter: rw}
	res.handler.ServeHTTP(sw, r)
	if sw.status == 0 && sw.wrote {
		return http.StatusOK
	}
	return sw.status
}

// statusRecorder notes the status an Extra page's handler writes, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Flush lets handlers stream.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func serveRobots(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	return writeBody(rw, r, http.StatusOK, textType, res.site.robots.body)
}

func serveSitemap(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"...)
	for _, list := range [][]*resource{res.site.pages, res.site.hidden} {
		for _, p := range list {
			b = append(b, "<url><loc>"...)
			b = appendEscaped(b, p.url)
			b = append(b, "</loc></url>\n"...)
		}
	}
	*buf = append(b, "</urlset>\n"...)
	return writeBody(rw, r, http.StatusOK, xmlType, *buf)
}

func serveRedirect(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	rw.Header()["Location"] = res.loc
	return writeBody(rw, r, res.status, htmlType, tinyPage(nil, "Moved", "This page has moved."))
}

func serveStatus(_ *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	return writeBody(rw, r, res.status, htmlType, tinyPage(nil, res.title, "Sorry."))
}

// serveTransient answers the first request with res.status and a
// Retry-After, later ones with the page.
func serveTransient(w *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	if res.hits.Add(1) == 1 {
		rw.Header()["Retry-After"] = w.retryAfter
		return writeBody(rw, r, res.status, htmlType, tinyPage(nil, http.StatusText(res.status), "Come back later."))
	}
	return servePage(w, rw, r, res)
}

// wait sleeps for d or until the client goes away; it reports whether the
// client is still there.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

func serveSlowFirstByte(w *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	if !wait(r, w.cfg.SlowDelay) {
		return 0
	}
	return servePage(w, rw, r, res)
}

const streamHead = "<!DOCTYPE html>\n<html><head><title>Stream</title></head>\n<body>\n"

// serveDrip sends the start of a page, then a word every SlowDelay/30
// (at least 5 ms, at most 200 ms) until the client goes away: only a body
// timeout stops it.
func serveDrip(w *Web, rw http.ResponseWriter, r *http.Request, _ *resource) int {
	rw.Header()["Content-Type"] = htmlType
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return http.StatusOK
	}
	rc := http.NewResponseController(rw)
	every := min(max(w.cfg.SlowDelay/30, 5*time.Millisecond), 200*time.Millisecond)
	for _, err := rw.Write([]byte(streamHead + "<p>")); err == nil && rc.Flush() == nil; _, err = rw.Write([]byte("drip ")) {
		if !wait(r, every) {
			break
		}
	}
	return http.StatusOK
}

// serveEndless streams page text without a length until the client goes
// away: only a body size or time limit stops it.
func serveEndless(w *Web, rw http.ResponseWriter, r *http.Request, _ *resource) int {
	rw.Header()["Content-Type"] = htmlType
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return http.StatusOK
	}
	done := r.Context().Done()
	for _, err := io.WriteString(rw, streamHead); err == nil; _, err = rw.Write(w.filler) {
		select {
		case <-done:
			return http.StatusOK
		default:
		}
	}
	return http.StatusOK
}

// serveHuge sends a HugeSize page, generated as it is written.
func serveHuge(w *Web, rw http.ResponseWriter, r *http.Request, _ *resource) int {
	h := rw.Header()
	h["Content-Type"] = htmlType
	h["Content-Length"] = []string{strconv.FormatInt(w.cfg.HugeSize, 10)}
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return http.StatusOK
	}
	left := w.cfg.HugeSize
	chunk := []byte(streamHead)
	for left > 0 {
		n := int(min(left, int64(len(chunk))))
		if _, err := rw.Write(chunk[:n]); err != nil {
			break
		}
		left -= int64(n)
		chunk = w.filler
	}
	return http.StatusOK
}

// bombChunk is the decoded size of one gzip member of the bomb.
const bombChunk = 1 << 20

// serveBomb sends BombSize zero bytes gzipped: about a thousandth of that on
// the wire, as back-to-back gzip members (a valid multi-member stream, RFC
// 1952 §2.2) of bombChunk bytes each, so nothing large is ever built.
func serveBomb(w *Web, rw http.ResponseWriter, r *http.Request, _ *resource) int {
	w.bombOnce.Do(func() {
		var b bytes.Buffer
		z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // the level is valid
		z.Write(make([]byte, bombChunk))                      // writes to a bytes.Buffer do not fail
		z.Close()
		w.bombMember = b.Bytes()
	})
	members := (w.cfg.BombSize + bombChunk - 1) / bombChunk
	h := rw.Header()
	h["Content-Type"] = htmlType
	h["Content-Encoding"] = gzipCoding
	h["Content-Length"] = []string{strconv.FormatInt(members*int64(len(w.bombMember)), 10)}
	rw.WriteHeader(http.StatusOK)
	for i := int64(0); i < members && r.Method != http.MethodHead; i++ {
		if _, err := rw.Write(w.bombMember); err != nil {
			break
		}
	}
	return http.StatusOK
}

// corruptGzip has a valid gzip header followed by a deflate block of the
// reserved type 3, which every decoder must reject.
var corruptGzip = []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07this is not deflate data at all")

func serveBadGzip(_ *Web, rw http.ResponseWriter, r *http.Request, _ *resource) int {
	rw.Header()["Content-Encoding"] = gzipCoding
	return writeBody(rw, r, http.StatusOK, htmlType, corruptGzip)
}

// serveEncoded sends the page compressed with res.encoding whatever the
// request's Accept-Encoding says, as misconfigured servers do; a crawler
// advertises all three anyway.
func serveEncoded(w *Web, rw http.ResponseWriter, r *http.Request, res *resource) int {
	page, out := getBuf(), getBuf()
	defer putBuf(page)
	defer putBuf(out)
	*page = w.appendPage((*page)[:0], res)
	b := bytes.NewBuffer((*out)[:0])
	var z io.WriteCloser
	switch res.encoding {
	case "gzip":
		z = gzip.NewWriter(b)
	case "deflate": // HTTP's "deflate" is the zlib format (RFC 9110 §8.4.1.2)
		z = zlib.NewWriter(b)
	default:
		z = brotli.NewWriter(b)
	}
	z.Write(*page) // writes to a bytes.Buffer do not fail
	z.Close()
	*out = b.Bytes()
	rw.Header()["Content-Encoding"] = []string{res.encoding}
	return writeBody(rw, r, http.StatusOK, htmlType, *out)
}

// index is the page served to an IP address or localhost: how to reach the
// web and where to start.
func (w *Web) index() []byte {
	hrefs := make([]string, 0, 2*len(w.seeds))
	for _, s := range w.seeds {
		hrefs = append(hrefs, s.url, s.url)
	}
	return tinyPage(nil, "sonda test web",
		fmt.Sprintf("%d hosts served by Host header; map *.test to this address (%s) and start from the seeds below, e.g. curl -H 'Host: %s' http://%s/",
			len(w.sites), w.Resolve(), w.sites[0].name, w.Addr()), hrefs...)
}

// Start serves the web on a new loopback listener (127.0.0.1, a free port)
// in the background and returns its address.
func (w *Web) Start() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testweb: listen on 127.0.0.1:0: %w", err)
	}
	srv, err := w.use(l)
	if err != nil {
		l.Close()
		return "", err
	}
	go srv.Serve(l)
	return l.Addr().String(), nil
}

// Serve serves the web on l until Close; it returns nil after Close.
func (w *Web) Serve(l net.Listener) error {
	srv, err := w.use(l)
	if err != nil {
		return err
	}
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("testweb: serve on %s: %w", l.Addr(), err)
	}
	return nil
}

func (w *Web) use(l net.Listener) (*http.Server, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv != nil {
		return nil, fmt.Errorf("testweb: already serving on %s", w.addr)
	}
	w.srv = &http.Server{
		Handler:           w,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // clients hanging up on endless bodies are expected
	}
	w.addr = l.Addr().String()
	return w.srv, nil
}

// Close stops serving and drops open connections, which ends endless and
// slow answers. The web keeps its log and may be started again.
func (w *Web) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return nil
	}
	err := w.srv.Close()
	w.srv, w.addr = nil, ""
	return err
}

// Addr is the address the web listens on ("" before Start or Serve).
func (w *Web) Addr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addr
}

// Resolve is the dial mapping that sends every .test host to the web, in the
// fetcher's "PATTERN=ADDR" form, e.g. "*.test=127.0.0.1:41234".
func (w *Web) Resolve() string { return "*.test=" + w.Addr() }
