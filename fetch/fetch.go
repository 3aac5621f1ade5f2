// Package fetch owns the crawler's HTTP exchanges: it performs one GET
// safely and describes exactly what happened, down to the bytes on the wire.
//
// A Fetcher knows nothing of robots.txt, politeness or queues; the crawl loop
// decides what to fetch and when. What the Fetcher does guarantee:
//
//   - Bounded cost. Separate timeouts for connect, TLS handshake, first byte
//     and whole body; a body-size cap; a decompression-ratio cap. An endless
//     or slow-dripping body ends at the cap or the body timeout with the
//     partial content kept and Result.Truncated set — not as an error.
//   - Safety. An SSRF guard refuses loopback, private, link-local and other
//     non-public addresses at dial time, on the IP actually being connected
//     to, so DNS tricks and redirects cannot get around it.
//   - Fidelity. Result carries the request as written, the response head, and
//     the body as received (still content-encoded) for WARC records, next to
//     the decoded body and its UTF-8 text.
//   - Honest errors. Every failure is an *Error with a stable ErrorKind.
//
// Redirects are not followed unless a Request asks (robots.txt does): the
// crawler schedules each hop as a new URL, so 3xx responses come back as
// results with Result.Location resolved.
//
// The Fetcher speaks HTTP/1.1 only. Crawlers gain little from HTTP/2's
// multiplexing (one request per host at a time is the polite default), and
// HTTP/1.1 messages are what WARC request/response records hold.
// Content decoding and charset detection are done here rather than by
// net/http (see body.go and charset.go for why).
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Fetcher. The zero value is usable: every zero field
// takes the default given in its comment.
type Options struct {
	// UserAgent identifies the crawler; it should carry a contact URL.
	// Default: "sonda/VERSION (+https://github.com/sonda-search/sonda)".
	UserAgent string
	// Accept is the Accept header. Default: prefers HTML, accepts anything.
	Accept string
	// AcceptLanguage is sent as Accept-Language when non-empty.
	AcceptLanguage string

	ConnectTimeout   time.Duration // DNS + TCP connect. Default 10s.
	TLSTimeout       time.Duration // TLS handshake. Default 10s.
	FirstByteTimeout time.Duration // request written → response headers read. Default 20s.
	// BodyTimeout bounds reading the whole body; when it expires, the bytes
	// that arrived are kept and Result.Truncated is "time". Default 60s.
	BodyTimeout time.Duration
	// Timeout bounds the whole Fetch: every phase of every exchange, redirects the Fetcher
	// follows included. When it expires before the response headers the error is
	// KindTimeout; during the body, the bytes that arrived are kept and Result.Truncated
	// is "time", as with BodyTimeout. Default 60s.
	Timeout time.Duration

	// MaxBodyBytes caps the decoded body kept, and equally the wire bytes
	// read; more is cut off with Result.Truncated = "length". Default 10 MiB.
	MaxBodyBytes int64
	// MaxDecompressionRatio stops decoding with a "decompression-bomb"
	// error once the decoded body exceeds 1 MiB and this many times the
	// wire bytes read. Default 100.
	MaxDecompressionRatio int

	// AcceptTypes lists the media types worth downloading: "text/html",
	// "text/*" or "*/*". A response of another type (as declared, or as
	// sniffed when the declaration is missing or application/octet-stream)
	// is not downloaded: Result.Skipped says why. Empty accepts everything.
	AcceptTypes []string

	// AllowPrivate lets the Fetcher connect to loopback, private,
	// link-local and other non-public addresses. Off, such connections are
	// refused with a "blocked-address" error.
	AllowPrivate bool
	// AllowPrivateTo lets the Fetcher reach some non-public destinations while AllowPrivate
	// is off: CIDR ranges ("10.20.0.0/16"), addresses ("192.168.1.5", "::1") and host names
	// ("wiki.corp.example", or "*.corp.example" for its subdomains). A name is let through
	// whatever it resolves to; everything else is still judged by the address dialed.
	AllowPrivateTo []string
	// Resolve maps host names to fixed addresses (see Mapping); the first
	// matching mapping wins.
	Resolve []Mapping
	// TLSConfig, when set, is cloned for every TLS connection (e.g. to add
	// private roots for an intranet). Its NextProtos is replaced: HTTP/1.1
	// only. Default: system roots.
	TLSConfig *tls.Config

	// Connection pool. The crawl loop limits per-host concurrency itself;
	// these only keep idle connections to the hosts being crawled.
	MaxConnsPerHost     int           // 0 = unlimited (the default)
	MaxIdleConns        int           // across all hosts. Default 2048.
	MaxIdleConnsPerHost int           // Default 4.
	IdleConnTimeout     time.Duration // Default 30s.
}

// Defaults for the zero fields of Options.
const (
	DefaultConnectTimeout        = 10 * time.Second
	DefaultTLSTimeout            = 10 * time.Second
	DefaultFirstByteTimeout      = 20 * time.Second
	DefaultBodyTimeout           = 60 * time.Second
	DefaultTimeout               = 60 * time.Second
	DefaultMaxBodyBytes          = 10 << 20
	DefaultMaxDecompressionRatio = 100
	DefaultAccept                = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// DefaultUserAgent is the User-Agent sent when Options.UserAgent is empty.
// Its version comes from the build information of the binary.
var DefaultUserAgent = "sonda/" + buildVersion() + " (+https://github.com/sonda-search/sonda)"

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "dev"
}

// maxResponseHeaderBytes bounds the response head; real ones are a few KiB,
// with the odd cookie-laden one much bigger.
const maxResponseHeaderBytes = 256 << 10

// Fetcher performs HTTP exchanges. It is safe for concurrent use and keeps
// connections alive between requests to the same host.
type Fetcher struct {
	opts      Options
	transport *http.Transport
	dialer    *dialer
}

// New validates opts, fills in defaults and returns a Fetcher.
func New(opts Options) (*Fetcher, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	d, err := newDialer(&opts)
	if err != nil {
		return nil, err
	}
	t := &http.Transport{
		Proxy:                  nil, // never route through an environment proxy: the SSRF guard must see the real peer
		DialContext:            d.dialPlain,
		DialTLSContext:         d.dialTLS,
		DisableCompression:     true, // we decode ourselves, keeping the wire bytes
		MaxConnsPerHost:        opts.MaxConnsPerHost,
		MaxIdleConns:           opts.MaxIdleConns,
		MaxIdleConnsPerHost:    opts.MaxIdleConnsPerHost,
		IdleConnTimeout:        opts.IdleConnTimeout,
		ResponseHeaderTimeout:  opts.FirstByteTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return &Fetcher{opts: opts, transport: t, dialer: d}, nil
}

func (o *Options) normalize() error {
	durations := []struct {
		name string
		d    *time.Duration
		def  time.Duration
	}{
		{"ConnectTimeout", &o.ConnectTimeout, DefaultConnectTimeout},
		{"TLSTimeout", &o.TLSTimeout, DefaultTLSTimeout},
		{"FirstByteTimeout", &o.FirstByteTimeout, DefaultFirstByteTimeout},
		{"BodyTimeout", &o.BodyTimeout, DefaultBodyTimeout},
		{"Timeout", &o.Timeout, DefaultTimeout},
		{"IdleConnTimeout", &o.IdleConnTimeout, 30 * time.Second},
	}
	for _, d := range durations {
		if *d.d < 0 {
			return fmt.Errorf("fetch: %s %v is negative", d.name, *d.d)
		}
		if *d.d == 0 {
			*d.d = d.def
		}
	}
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxDecompressionRatio", &o.MaxDecompressionRatio, DefaultMaxDecompressionRatio},
		{"MaxIdleConns", &o.MaxIdleConns, 2048},
		{"MaxIdleConnsPerHost", &o.MaxIdleConnsPerHost, 4},
		{"MaxConnsPerHost", &o.MaxConnsPerHost, 0},
	}
	for _, n := range ints {
		if *n.v < 0 {
			return fmt.Errorf("fetch: %s %d is negative", n.name, *n.v)
		}
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	if o.MaxBodyBytes < 0 {
		return fmt.Errorf("fetch: MaxBodyBytes %d is negative", o.MaxBodyBytes)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Accept == "" {
		o.Accept = DefaultAccept
	}
	for name, v := range map[string]string{"UserAgent": o.UserAgent, "Accept": o.Accept, "AcceptLanguage": o.AcceptLanguage} {
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("fetch: %s %q contains a control character", name, v)
		}
	}
	types := make([]string, len(o.AcceptTypes))
	for i, p := range o.AcceptTypes {
		p = strings.ToLower(strings.TrimSpace(p))
		if err := validateAcceptType(p); err != nil {
			return err
		}
		types[i] = p
	}
	o.AcceptTypes = types
	o.Resolve = append([]Mapping(nil), o.Resolve...)
	for _, m := range o.Resolve {
		if err := m.validate(); err != nil {
			return err
		}
	}
	return nil
}

// Close drops idle connections. The Fetcher stays usable.
func (f *Fetcher) Close() error {
	f.transport.CloseIdleConnections()
	return nil
}

// Request is one fetch.
type Request struct {
	URL string // absolute http or https URL; any fragment is ignored

	// Validators from an earlier fetch, sent as If-None-Match and
	// If-Modified-Since. A 304 answer is a normal Result.
	ETag         string
	LastModified string

	// MaxRedirects > 0 follows up to that many redirects; 0 returns a 3xx
	// as the Result (with Location resolved).
	MaxRedirects int
	// AnyType downloads the body whatever its media type (robots.txt,
	// sitemaps), ignoring Options.AcceptTypes.
	AnyType bool
	// MaxBodyBytes overrides Options.MaxBodyBytes when > 0 (robots.txt:
	// 500 KiB).
	MaxBodyBytes int64
	// Admit, when set, is asked once before a body is read past LargeBody bytes (before
	// any of it is read when its Content-Length is larger), with the most bytes the body
	// may take (its limit). It may block until that much memory is free; the fetch's
	// body timeout stands still meanwhile (the whole fetch's does not). An error abandons the body (KindCanceled). The
	// crawl bounds the memory of the large bodies it holds at once with it, whatever
	// its concurrency and the sizes servers send.
	Admit func(ctx context.Context, maxBytes int64) error
}

// LargeBody is the size past which a body is read only once Request.Admit lets it:
// about 1 % of web pages are longer.
const LargeBody = 1 << 20

// Truncation reasons (Result.Truncated).
const (
	TruncatedLength = "length" // MaxBodyBytes reached
	TruncatedTime   = "time"   // BodyTimeout expired
)

// SkippedContentType is Result.Skipped for a response whose media type is
// not in Options.AcceptTypes.
const SkippedContentType = "content-type"

// Timing breaks a fetch down. Connection phases are zero when the
// connection was reused; with redirects they describe the last hop.
type Timing struct {
	DNS       time.Duration // name resolution
	Connect   time.Duration // TCP connect (after DNS)
	TLS       time.Duration // TLS handshake
	FirstByte time.Duration // request written → first response byte (server think time)
	Total     time.Duration // whole Fetch, all hops and the body included
	Waited    time.Duration // of Total, waiting for Request.Admit: this machine's memory, not the server
	Reused    bool          // the connection had served an earlier request
}

// Result describes one fetch. Only the fields that apply are set: a failed
// connection has just URL, FinalURL, StartedAt, Timing and Err.
type Result struct {
	URL      string // as requested
	FinalURL string // URL of the response described (differs from URL after followed redirects)
	// Redirects, when following, lists each URL that answered with a
	// followed redirect, in order, starting with URL. The other fields
	// describe only the last response (a 3xx one, without its body, if the
	// chain ended in an error).
	Redirects []string

	Status int
	Proto  string // "HTTP/1.1"
	Header http.Header

	// RawRequest is the request line and headers exactly as written to the
	// connection (for WARC request records).
	RawRequest []byte
	// RawResponseHeader is the status line and headers, reconstructed from
	// the parsed response: header names canonicalized and sorted, and
	// Transfer-Encoding dropped because Wire is already de-chunked. Content-
	// Encoding and Content-Length are kept, so the head matches Wire.
	RawResponseHeader []byte
	// Wire is the body as received after de-chunking, still content-encoded
	// (for WARC response records). At most MaxBodyBytes.
	Wire []byte
	// Body is Wire with the content codings (gzip, deflate, br) undone, at
	// most MaxBodyBytes. It is the same slice as Wire when there were none.
	Body []byte
	// UTF8 is Body transcoded to UTF-8 for text media types (HTML, XML,
	// plain text, JSON) and nil otherwise. Always valid UTF-8; may share
	// memory with Body.
	UTF8 []byte

	MediaType     string // lowercased type/subtype, sniffed when not declared usefully
	Charset       string // WHATWG name of the charset UTF8 was decoded from, e.g. "windows-1252"
	CharsetSource string // one of the Source* constants, possibly with an "-invalid" or "-utf8" suffix

	Truncated string // "" or TruncatedLength or TruncatedTime: Body is partial, but not an error
	Skipped   string // "" or SkippedContentType: headers only, body not downloaded

	Location   string        // absolute Location of a 3xx response
	RetryAfter time.Duration // from Retry-After on 429 and 503 (seconds or HTTP date)

	RemoteIP  string
	StartedAt time.Time
	Timing    Timing

	Err error // nil or *Error
}

type sendGuardKey struct{}

// WithSendGuard returns a context under which Fetch asks guard right before each write of
// a request to the connection (redirect hops included) and sends nothing once it returns
// an error: the fetch then fails with KindCanceled and that error. A cluster node uses it
// to stop a request that a paused or stalled process would otherwise send after its right
// to fetch from the host ran out.
func WithSendGuard(ctx context.Context, guard func() error) context.Context {
	return context.WithValue(ctx, sendGuardKey{}, guard)
}

func sendGuard(ctx context.Context) func() error {
	g, _ := ctx.Value(sendGuardKey{}).(func() error)
	return g
}

// Fetch performs the request. It never returns nil; failures are in
// Result.Err as an *Error, with whatever was received before the failure
// still in the Result.
func (f *Fetcher) Fetch(ctx context.Context, r Request) *Result {
	started := time.Now()
	u, err := parseTarget(r.URL)
	if err != nil {
		return &Result{URL: r.URL, StartedAt: started, Err: &Error{Kind: KindBadURL, URL: r.URL, Err: err}}
	}
	limit := f.opts.MaxBodyBytes
	if r.MaxBodyBytes > 0 {
		limit = r.MaxBodyBytes
	}

	follow := r.MaxRedirects > 0
	var chain []string // URLs that redirected, when following
	deadline := started.Add(f.opts.Timeout)
	for {
		res := f.exchange(ctx, u, &r, limit, follow, deadline)
		res.URL, res.StartedAt, res.Redirects = r.URL, started, chain
		if !follow || res.Err != nil || !isRedirect(res.Status) || res.Header.Get("Location") == "" {
			res.Timing.Total = time.Since(started)
			return res
		}
		next, err := parseTarget(res.Location) // Location is "" when unusable
		switch {
		case err != nil:
			res.Err = &Error{Kind: KindBadURL, URL: res.FinalURL, Err: fmt.Errorf("unusable redirect Location %q: %w", res.Header.Get("Location"), err)}
		case len(chain) >= r.MaxRedirects:
			res.Err = &Error{Kind: KindTooManyRedirects, URL: res.FinalURL, Err: fmt.Errorf("more than %d redirects (next: %s)", r.MaxRedirects, res.Location)}
		case next.String() == res.FinalURL || slices.Contains(chain, next.String()):
			res.Err = &Error{Kind: KindRedirectLoop, URL: res.FinalURL, Err: fmt.Errorf("redirect back to %s", next)}
		default:
			chain = append(chain, res.FinalURL)
			u = next
			continue
		}
		res.Timing.Total = time.Since(started)
		return res
	}
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// parseTarget accepts absolute http(s) URLs with a host, dropping the
// fragment (never sent).
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// errBodyTimeout and errTimeout are the cancellation causes when BodyTimeout and Timeout
// expire.
var (
	errBodyTimeout = errors.New("body timeout")
	errTimeout     = errors.New("total timeout")
)

// trace follows one round trip through net/http's hooks. The hooks run on
// transport goroutines, hence the lock.
type trace struct {
	guard       func() error // WithSendGuard's, or nil
	mu          sync.Mutex
	refused     error // the guard's first refusal (ask)
	conn        *conn
	reused      bool
	request     []byte
	wrote       bool
	wroteAt     time.Time
	firstByteAt time.Time
}

func (t *trace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			c, _ := info.Conn.(*conn)
			t.mu.Lock()
			t.conn, t.reused = c, info.Reused
			t.mu.Unlock()
			if c != nil {
				var guard func() error
				if t.guard != nil {
					guard = t.ask
				}
				c.startCapture(&t.request, guard)
			}
		},
		// WroteRequest fires once the request is in net/http's buffer, before
		// it is flushed to the connection, so the capture goes on until the
		// round trip is over (see finish); the connection cannot serve
		// another request before that.
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			t.mu.Lock()
			t.wrote, t.wroteAt = info.Err == nil, time.Now()
			t.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			t.firstByteAt = time.Now()
			t.mu.Unlock()
		},
	}
}

// ask asks the send guard, remembering a refusal. When the guard refuses, the write fails
// and net/http closes the connection; its reader and writer then race, and the round trip
// may fail with the reader's "use of closed network connection" instead of the write's
// error (TestFetchSendGuard saw it once in a full run), so exchange reports the refusal
// from here.
func (t *trace) ask() error {
	err := t.guard()
	if err != nil {
		t.mu.Lock()
		if t.refused == nil {
			t.refused = err
		}
		t.mu.Unlock()
	}
	return err
}

// finish copies what the trace saw into res.
func (t *trace) finish(res *Result) {
	t.mu.Lock()
	c, reused := t.conn, t.reused
	t.mu.Unlock()
	if c == nil {
		return
	}
	c.stopCapture() // also orders our read of t.request after the writer's appends
	res.RawRequest = t.request
	t.mu.Lock()
	defer t.mu.Unlock()
	if !reused {
		res.Timing.DNS, res.Timing.Connect, res.Timing.TLS = c.timing.dns, c.timing.connect, c.timing.tls
	}
	res.Timing.Reused = reused
	if !t.wroteAt.IsZero() && !t.firstByteAt.IsZero() {
		res.Timing.FirstByte = t.firstByteAt.Sub(t.wroteAt)
	}
	if host, _, err := net.SplitHostPort(c.RemoteAddr().String()); err == nil {
		res.RemoteIP = host
	}
}

// exchange performs one HTTP round trip and reads the body. When the
// response is a redirect that will be followed, its body is discarded.
func (f *Fetcher) exchange(ctx context.Context, u *url.URL, r *Request, limit int64, follow bool, deadline time.Time) *Result {
	target := u.String()
	res := &Result{FinalURL: target}

	xctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	total := time.AfterFunc(time.Until(deadline), func() { cancel(errTimeout) })
	defer total.Stop()
	tr := &trace{guard: sendGuard(ctx)}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(xctx, tr.clientTrace()), http.MethodGet, target, nil)
	if err != nil {
		res.Err = &Error{Kind: KindBadURL, URL: target, Err: err}
		return res
	}
	h := req.Header
	h["User-Agent"] = []string{f.opts.UserAgent}
	h["Accept"] = []string{f.opts.Accept}
	h["Accept-Encoding"] = []string{"gzip, deflate, br"}
	if f.opts.AcceptLanguage != "" {
		h["Accept-Language"] = []string{f.opts.AcceptLanguage}
	}
	if r.ETag != "" {
		h["If-None-Match"] = []string{r.ETag}
	}
	if r.LastModified != "" {
		h["If-Modified-Since"] = []string{r.LastModified}
	}
	if strings.ContainsAny(r.ETag+r.LastModified, "\r\n") {
		res.Err = &Error{Kind: KindBadURL, URL: target, Err: errors.New("conditional header value contains a line break")}
		return res
	}

	resp, err := f.transport.RoundTrip(req)
	tr.finish(res)
	if err != nil {
		tr.mu.Lock()
		wrote, refused := tr.wrote, tr.refused
		tr.mu.Unlock()
		kind := classifyRoundTrip(ctx, err, wrote)
		if refused != nil && kind != KindCanceled {
			kind, err = KindCanceled, refused
		}
		switch {
		case kind == KindCanceled && ctx.Err() != nil:
			err = context.Cause(ctx)
		case kind == KindCanceled: // the send guard refused: err carries its reason
		case ctx.Err() == nil && context.Cause(xctx) == errTimeout:
			kind, err = KindTimeout, fmt.Errorf("no response within fetch.timeout (%v): %w", f.opts.Timeout, err)
		}
		res.Err = newError(kind, target, err)
		return res
	}
	defer resp.Body.Close()

	res.Status, res.Proto, res.Header = resp.StatusCode, resp.Proto, resp.Header
	res.RawResponseHeader = responseHead(resp)
	if isRedirect(resp.StatusCode) {
		if loc := resp.Header.Get("Location"); loc != "" {
			if lu, err := u.Parse(loc); err == nil && (lu.Scheme == "http" || lu.Scheme == "https") {
				res.Location = lu.String()
			}
		}
		if follow && res.Location != "" {
			// Read a little so that the connection can be reused; a
			// redirect body is never interesting.
			drainBody(resp.Body)
			return res
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}

	mediaType, charset := parseContentType(resp.Header.Get("Content-Type"))
	res.MediaType = mediaType
	filter := !r.AnyType && len(f.opts.AcceptTypes) > 0
	if filter && !needsSniff(mediaType) && !acceptsType(f.opts.AcceptTypes, mediaType) {
		// Closing the body unread makes net/http drop the connection: the
		// server stops sending, and we pay for nothing but the headers.
		res.Skipped = SkippedContentType
		return res
	}
	var accept func([]byte) bool
	if needsSniff(mediaType) {
		accept = func(prefix []byte) bool {
			if len(prefix) == 0 {
				return true // nothing to sniff, nothing to save by skipping
			}
			res.MediaType = sniff(prefix)
			return !filter || acceptsType(f.opts.AcceptTypes, res.MediaType)
		}
	}

	bodyStart := time.Now()
	timer := time.AfterFunc(f.opts.BodyTimeout, func() { cancel(errBodyTimeout) })
	lim := bodyLimits{maxBytes: limit}
	if r.Admit != nil {
		// Waiting for memory is not the server's slowness: the body timeout stands still.
		// The whole fetch's (fetch.timeout) does not: every fetch must end within it, or a
		// web of endless bodies queued behind the memory budget takes their sum.
		lim.admit = func() error {
			paused := time.Now()
			bodyRunning := timer.Stop()
			err := r.Admit(xctx, limit)
			if bodyRunning {
				timer.Reset(f.opts.BodyTimeout - paused.Sub(bodyStart))
			}
			res.Timing.Waited += time.Since(paused)
			return err
		}
	}
	var o bodyOutcome
	encodings, encErr := parseEncodings(resp.Header.Values("Content-Encoding"))
	if encErr != nil {
		// Keep the raw bytes: a WARC record of them is still worth having.
		o = readBody(resp.Body, nil, resp.ContentLength, lim, nil)
		o.body = nil
	} else {
		lim.maxRatio = int64(f.opts.MaxDecompressionRatio)
		o = readBody(resp.Body, encodings, resp.ContentLength, lim, accept)
	}
	timer.Stop()
	if o.skipped {
		res.Skipped = SkippedContentType
		return res
	}
	res.Wire, res.Body = o.wire, o.body
	if o.truncated {
		res.Truncated = TruncatedLength
	}
	if o.err != nil {
		switch {
		case ctx.Err() != nil:
			res.Err = &Error{Kind: KindCanceled, URL: target, Err: context.Cause(ctx)}
		case (context.Cause(xctx) == errBodyTimeout || context.Cause(xctx) == errTimeout) && o.kind == KindBody:
			res.Truncated = TruncatedTime
		default:
			res.Err = &Error{Kind: o.kind, URL: target, Err: o.err}
		}
	}
	if encErr != nil && res.Err == nil {
		res.Err = &Error{Kind: KindUnsupportedEncoding, URL: target, Err: encErr}
	}
	if isText(res.MediaType) && res.Body != nil {
		res.UTF8, res.Charset, res.CharsetSource = toUTF8(res.Body, res.MediaType, charset)
	}
	return res
}

// drainBody reads and discards up to 64 KiB so that a small unwanted body
// does not cost its connection.
func drainBody(body io.Reader) {
	var buf [4096]byte
	for n := 0; n < 64<<10; {
		m, err := body.Read(buf[:])
		n += m
		if err != nil {
			return
		}
	}
}

// responseHead rebuilds the status line and header block of resp.
func responseHead(resp *http.Response) []byte {
	var b strings.Builder
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode)
	}
	b.WriteString(proto)
	b.WriteByte(' ')
	b.WriteString(status)
	b.WriteString("\r\n")
	// Header.Write sorts keys; net/http has already moved Transfer-Encoding
	// out of Header, and we exclude it in case a future version does not.
	resp.Header.WriteSubset(&b, map[string]bool{"Transfer-Encoding": true})
	b.WriteString("\r\n")
	return []byte(b.String())
}

// ParseRetryAfter reads a Retry-After value as Fetch does (Result.RetryAfter), for a
// response received elsewhere (a cluster's volunteer worker).
func ParseRetryAfter(v string, now time.Time) time.Duration { return parseRetryAfter(v, now) }

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
// Unparsable or past values give 0; huge ones saturate instead of
// overflowing.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return math.MaxInt64
			}
			return 0
		}
		if secs > uint64(math.MaxInt64/int64(time.Second)) {
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now)
}
