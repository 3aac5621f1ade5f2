package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// newFetcher returns a Fetcher for loopback tests: private addresses
// allowed unless the test says otherwise.
func newFetcher(t testing.TB, o Options) *Fetcher {
	t.Helper()
	o.AllowPrivate = true
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func serve(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// serveStatic answers every request with body and the given header
// name/value pairs; an empty value suppresses the header (Content-Type
// would otherwise be sniffed by net/http).
func serveStatic(t testing.TB, body []byte, header ...string) *httptest.Server {
	t.Helper()
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			if header[i+1] == "" {
				w.Header()[header[i]] = nil
			} else {
				w.Header().Set(header[i], header[i+1])
			}
		}
		w.Write(body)
	})
}

func wantKind(t *testing.T, res *Result, kind ErrorKind) {
	t.Helper()
	if got := KindOf(res.Err); got != kind {
		t.Fatalf("error kind %q (%v), want %q", got, res.Err, kind)
	}
	if kind != "" && !strings.Contains(res.Err.Error(), string(kind)) {
		t.Errorf("error %q does not name its kind", res.Err)
	}
}

const page = `<!DOCTYPE html><html><head><title>Olá</title></head><body><p>café</p></body></html>`

func TestFetchBasics(t *testing.T) {
	var gotHeader http.Header
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Clone()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Test", "yes")
		w.(http.Flusher).Flush() // force chunked transfer encoding
		io.WriteString(w, page)
	})
	f := newFetcher(t, Options{UserAgent: "sonda-test/1 (+https://example.org/bot)", AcceptLanguage: "pt-BR"})
	res := f.Fetch(context.Background(), Request{URL: srv.URL + "/p?q=1#frag"})
	wantKind(t, res, "")
	if res.Status != 200 || res.Proto != "HTTP/1.1" || res.MediaType != "text/html" || res.FinalURL != srv.URL+"/p?q=1" {
		t.Errorf("status %d proto %q type %q final %q", res.Status, res.Proto, res.MediaType, res.FinalURL)
	}
	if string(res.Body) != page || string(res.UTF8) != page || string(res.Wire) != page {
		t.Errorf("body %q", res.Body)
	}
	if res.Charset != "utf-8" || res.CharsetSource != SourceHeader {
		t.Errorf("charset %q from %q", res.Charset, res.CharsetSource)
	}
	if gotHeader.Get("User-Agent") != "sonda-test/1 (+https://example.org/bot)" ||
		gotHeader.Get("Accept-Encoding") != "gzip, deflate, br" ||
		!strings.HasPrefix(gotHeader.Get("Accept"), "text/html") ||
		gotHeader.Get("Accept-Language") != "pt-BR" {
		t.Errorf("request headers %v", gotHeader)
	}
	raw := string(res.RawRequest)
	if !strings.HasPrefix(raw, "GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:") || !strings.HasSuffix(raw, "\r\n\r\n") ||
		!strings.Contains(raw, "\r\nUser-Agent: sonda-test/1") || strings.Contains(raw, "frag") {
		t.Errorf("raw request %q", raw)
	}
	head := string(res.RawResponseHeader)
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !strings.Contains(head, "\r\nX-Test: yes\r\n") ||
		!strings.HasSuffix(head, "\r\n\r\n") || strings.Contains(strings.ToLower(head), "transfer-encoding") {
		t.Errorf("raw response head %q", head)
	}
	if res.RemoteIP != "127.0.0.1" || res.Timing.Reused || res.Timing.Connect <= 0 || res.Timing.Total < res.Timing.FirstByte {
		t.Errorf("remote %q timing %+v", res.RemoteIP, res.Timing)
	}
	if res.StartedAt.IsZero() || time.Since(res.StartedAt) > time.Minute {
		t.Errorf("StartedAt %v", res.StartedAt)
	}

	// Keep-alive: the second request reuses the connection.
	res = f.Fetch(context.Background(), Request{URL: srv.URL + "/again"})
	wantKind(t, res, "")
	if !res.Timing.Reused || res.Timing.Connect != 0 || !strings.HasPrefix(string(res.RawRequest), "GET /again ") {
		t.Errorf("second fetch: timing %+v, raw %q", res.Timing, res.RawRequest)
	}
}

func TestFetchContentEncodings(t *testing.T) {
	body := []byte(strings.Repeat(page, 50))
	for _, coding := range []string{"gzip", "deflate", "deflate-raw", "br"} {
		t.Run(coding, func(t *testing.T) {
			wire := compress(t, coding, body)
			header := strings.TrimSuffix(coding, "-raw")
			srv := serveStatic(t, wire, "Content-Type", "text/html", "Content-Encoding", header)
			res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
			wantKind(t, res, "")
			if !bytes.Equal(res.Body, body) || !bytes.Equal(res.Wire, wire) {
				t.Errorf("body %d bytes (want %d), wire %d bytes (want %d)", len(res.Body), len(body), len(res.Wire), len(wire))
			}
			if !strings.Contains(string(res.RawResponseHeader), "Content-Encoding: "+header) {
				t.Errorf("head lost Content-Encoding: %q", res.RawResponseHeader)
			}
		})
	}
}

func TestFetchBadEncodings(t *testing.T) {
	tests := []struct {
		name     string
		encoding string
		body     []byte
		kind     ErrorKind
	}{
		{"invalid gzip", "gzip", []byte("this is not gzip at all"), KindDecompress},
		{"unknown coding", "compress", []byte("\x1f\x9d whatever"), KindUnsupportedEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveStatic(t, tt.body, "Content-Encoding", tt.encoding)
			res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
			wantKind(t, res, tt.kind)
			if res.Status != 200 || !bytes.Equal(res.Wire, tt.body) {
				t.Errorf("status %d, wire %q: the raw response should be kept", res.Status, res.Wire)
			}
		})
	}
}

// endless writes chunks until the client goes away and reports when it did.
func endless(chunk []byte, contentType string, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", contentType)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

func waitClosed(t *testing.T, gone <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: server still writing: the connection was not closed", what)
	}
}

func TestFetchTruncatesEndlessBody(t *testing.T) {
	gone := make(chan struct{})
	srv := serve(t, endless([]byte(strings.Repeat("<p>x</p>", 512)), "text/html", gone))
	f := newFetcher(t, Options{MaxBodyBytes: 1 << 20})
	res := f.Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, res, "")
	if res.Truncated != TruncatedLength || len(res.Body) != 1<<20 || len(res.UTF8) != 1<<20 {
		t.Fatalf("truncated %q with %d bytes, want length at 1 MiB", res.Truncated, len(res.Body))
	}
	waitClosed(t, gone, "endless body")

	// The per-request limit wins (robots.txt fetches use 500 KiB).
	gone2 := make(chan struct{})
	srv2 := serve(t, endless([]byte("User-agent: *\n"), "text/plain", gone2))
	res = f.Fetch(context.Background(), Request{URL: srv2.URL, MaxBodyBytes: 500 << 10})
	if res.Truncated != TruncatedLength || len(res.Body) != 500<<10 {
		t.Fatalf("per-request limit: truncated %q with %d bytes", res.Truncated, len(res.Body))
	}
	waitClosed(t, gone2, "endless robots.txt")
}

// dripLines sends a numbered line every 10ms until the client goes away.
func dripLines(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(w, "%d\n", i); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestFetchSlowDripStopsAtBodyTimeout(t *testing.T) {
	srv := serve(t, dripLines)
	f := newFetcher(t, Options{BodyTimeout: 200 * time.Millisecond})
	start := time.Now()
	res := f.Fetch(context.Background(), Request{URL: srv.URL})
	elapsed := time.Since(start)
	wantKind(t, res, "")
	if res.Truncated != TruncatedTime || !bytes.HasPrefix(res.Body, []byte("0\n1\n2\n")) {
		t.Fatalf("truncated %q, body %q: want partial body cut by time", res.Truncated, res.Body)
	}
	if elapsed > 2*time.Second {
		t.Errorf("took %v with a 200ms body timeout", elapsed)
	}
}

func TestFetchTimeouts(t *testing.T) {
	t.Run("first byte", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})
		f := newFetcher(t, Options{FirstByteTimeout: 100 * time.Millisecond})
		res := f.Fetch(context.Background(), Request{URL: srv.URL})
		wantKind(t, res, KindFirstByteTimeout)
	})
	t.Run("tls handshake", func(t *testing.T) {
		// A server that accepts and then says nothing.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		f := newFetcher(t, Options{TLSTimeout: 100 * time.Millisecond})
		res := f.Fetch(context.Background(), Request{URL: "https://" + ln.Addr().String() + "/"})
		wantKind(t, res, KindTLSTimeout)
	})
	t.Run("connect", func(t *testing.T) {
		f := newFetcher(t, Options{ConnectTimeout: 100 * time.Millisecond})
		// Stand in for a SYN that is never answered: net.Dialer.DialContext
		// blocks until its context expires, which is what this does.
		f.dialer.dialTCP = func(ctx context.Context, network, addr string) (net.Conn, error) {
			<-ctx.Done()
			return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
		}
		start := time.Now()
		res := f.Fetch(context.Background(), Request{URL: "http://192.0.2.1/"})
		wantKind(t, res, KindConnectTimeout)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
	})
}

func TestFetchConnectionFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	// rawServer answers every connection with fixed bytes, then closes.
	rawServer := func(reply string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					buf := make([]byte, 4096)
					c.Read(buf)
					io.WriteString(c, reply)
				}()
			}
		}()
		return ln.Addr().String()
	}

	tests := []struct {
		name string
		url  string
		kind ErrorKind
	}{
		{"refused", "http://" + closedAddr + "/", KindRefused},
		{"closed before response", "http://" + rawServer("") + "/", KindClosed},
		{"garbage response", "http://" + rawServer("SPEAK FRIEND\r\n\r\n") + "/", KindProtocol},
		{"short body", "http://" + rawServer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this") + "/", KindBody},
		{"not http", "ftp://example.org/", KindBadURL},
		{"no host", "http:///path", KindBadURL},
		{"unparsable", "http://[::1/", KindBadURL},
	}
	f := newFetcher(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.Fetch(context.Background(), Request{URL: tt.url})
			wantKind(t, res, tt.kind)
			if res.URL != tt.url {
				t.Errorf("URL %q", res.URL)
			}
		})
	}

	// A body cut short keeps what arrived.
	res := f.Fetch(context.Background(), Request{URL: "http://" + rawServer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this") + "/"})
	if string(res.Body) != "only this" {
		t.Errorf("partial body %q", res.Body)
	}

	// An HTTP/1.0 body delimited by the connection closing is complete.
	res = f.Fetch(context.Background(), Request{URL: "http://" + rawServer("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it") + "/"})
	wantKind(t, res, "")
	if string(res.Body) != "all of it" || res.Proto != "HTTP/1.0" {
		t.Errorf("HTTP/1.0 body %q proto %q", res.Body, res.Proto)
	}
}

func TestDialErrorKind(t *testing.T) {
	tests := []struct {
		err      error
		timedOut bool
		want     ErrorKind
	}{
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}, false, KindDNS},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}}, true, KindDNS},
		{&net.OpError{Op: "dial", Err: &BlockedAddressError{Reason: "loopback"}}, false, KindBlockedAddress},
		{&net.OpError{Op: "dial", Err: context.DeadlineExceeded}, true, KindConnectTimeout},
		{errors.New("network is unreachable"), false, KindConnect},
	}
	for _, tt := range tests {
		if got := dialErrorKind(tt.err, tt.timedOut); got != tt.want {
			t.Errorf("dialErrorKind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestFetchCanceled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	f := newFetcher(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := f.Fetch(ctx, Request{URL: srv.URL})
	wantKind(t, res, KindCanceled)
	if string(res.Body) != "start" {
		t.Errorf("partial body %q", res.Body)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	res = f.Fetch(ctx, Request{URL: srv.URL})
	wantKind(t, res, KindCanceled)
}

// TestFetchSendGuard: a guard that refuses keeps the request from reaching the server, on a
// new connection, on a kept-alive one and on a redirect hop, and the fetch fails as
// canceled with the guard's error.
func TestFetchSendGuard(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/target", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	})
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	f := newFetcher(t, Options{})
	fenced := errors.New("fenced")
	var allow atomic.Bool
	guard := func() error {
		if allow.Load() {
			return nil
		}
		return fenced
	}
	ctx := WithSendGuard(context.Background(), guard)

	res := f.Fetch(ctx, Request{URL: srv.URL + "/fresh"}) // no connection yet
	wantKind(t, res, KindCanceled)
	if !errors.Is(res.Err, fenced) {
		t.Errorf("error %v does not carry the guard's", res.Err)
	}
	allow.Store(true)
	if res := f.Fetch(ctx, Request{URL: srv.URL + "/open"}); res.Err != nil || res.Status != 200 {
		t.Fatalf("allowed fetch: %d %v", res.Status, res.Err)
	}
	allow.Store(false)
	res = f.Fetch(ctx, Request{URL: srv.URL + "/reused"}) // on the kept-alive connection
	wantKind(t, res, KindCanceled)

	// A redirect hop asks again: the first request goes, the second does not.
	var hops atomic.Int32
	hopGuard := WithSendGuard(context.Background(), func() error {
		if hops.Add(1) > 1 {
			return fenced
		}
		return nil
	})
	res = f.Fetch(hopGuard, Request{URL: srv.URL + "/hop", MaxRedirects: 3})
	wantKind(t, res, KindCanceled)
	if want := []string{"/open", "/hop"}; !slices.Equal(requests(), want) {
		t.Errorf("server saw %v, want %v", requests(), want)
	}
	// Without a guard nothing changes.
	if res := f.Fetch(context.Background(), Request{URL: srv.URL + "/plain"}); res.Err != nil {
		t.Errorf("unguarded fetch: %v", res.Err)
	}
}

func TestFetchGzipBomb(t *testing.T) {
	gone := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		io.Copy(w, gzipBombReader(1<<10)) // ~1 MiB on the wire, 1 GiB decoded
	})
	res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, res, KindDecompressionBomb)
	if len(res.Body) > 2*bombFloor || len(res.Wire) > 64<<10 {
		t.Errorf("read %d wire bytes, decoded %d before stopping", len(res.Wire), len(res.Body))
	}
	waitClosed(t, gone, "gzip bomb")
}

func TestFetchSniffsAndFilters(t *testing.T) {
	html := []byte("<html><head><title>x</title></head><body>" + strings.Repeat("word ", 200) + "</body></html>")
	pdf := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xde, 0xad}, 1000)...)
	tests := []struct {
		name        string
		contentType string // "" = no header
		body        []byte
		accept      []string
		anyType     bool
		wantType    string
		wantSkipped bool
	}{
		{"missing type sniffed as html", "", html, nil, false, "text/html", false},
		{"octet-stream sniffed as html", "application/octet-stream", html, []string{"text/html"}, false, "text/html", false},
		{"octet-stream sniffed as pdf, skipped", "application/octet-stream", pdf, []string{"text/html"}, false, "application/pdf", true},
		{"declared pdf skipped", "application/pdf", pdf, []string{"text/html", "text/*"}, false, "application/pdf", true},
		{"declared pdf accepted by */*", "application/pdf", pdf, []string{"*/*"}, false, "application/pdf", false},
		{"text/* accepts text/plain", "text/plain", []byte("hi"), []string{"text/*"}, false, "text/plain", false},
		{"AnyType ignores the filter", "image/png", []byte("\x89PNG\r\n\x1a\n"), []string{"text/html"}, true, "image/png", false},
		{"declared type is not second-guessed", "text/plain", html, []string{"text/html"}, false, "text/plain", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveStatic(t, tt.body, "Content-Type", tt.contentType)
			res := newFetcher(t, Options{AcceptTypes: tt.accept}).Fetch(context.Background(), Request{URL: srv.URL, AnyType: tt.anyType})
			wantKind(t, res, "")
			if res.MediaType != tt.wantType || (res.Skipped != "") != tt.wantSkipped {
				t.Fatalf("type %q skipped %q; want %q skipped=%v", res.MediaType, res.Skipped, tt.wantType, tt.wantSkipped)
			}
			if tt.wantSkipped && (res.Body != nil || res.Wire != nil || res.UTF8 != nil) {
				t.Errorf("skipped result carries a body")
			}
			if !tt.wantSkipped && !bytes.Equal(res.Body, tt.body) {
				t.Errorf("body %d bytes, want %d", len(res.Body), len(tt.body))
			}
			if (res.UTF8 != nil) != (isText(tt.wantType) && !tt.wantSkipped) {
				t.Errorf("UTF8 set = %v for %q", res.UTF8 != nil, tt.wantType)
			}
		})
	}
}

func TestFetchSkipDoesNotDownload(t *testing.T) {
	for _, contentType := range []string{"video/mp4", "application/octet-stream"} {
		gone := make(chan struct{})
		srv := serve(t, endless(bytes.Repeat([]byte{0, 1, 2, 3}, 8192), contentType, gone))
		res := newFetcher(t, Options{AcceptTypes: []string{"text/html"}}).Fetch(context.Background(), Request{URL: srv.URL})
		wantKind(t, res, "")
		if res.Skipped != SkippedContentType {
			t.Fatalf("%s: not skipped (type %q)", contentType, res.MediaType)
		}
		waitClosed(t, gone, contentType)
	}
}

func TestFetchCharsetOverHTTP(t *testing.T) {
	latin := latin1("<p>Informação é poder</p>")
	tests := []struct {
		name, contentType string
		body              []byte
		charset, source   string
	}{
		{"header lies: utf-8 but latin-1", "text/html; charset=UTF-8", latin, "windows-1252", "header-invalid"},
		{"header lies: latin-1 but utf-8", "text/html; charset=ISO-8859-1", []byte("<p>Informação é poder</p>"), "utf-8", "header-utf8"},
		{"meta", "text/html", append([]byte(`<meta charset="latin1">`), latin...), "windows-1252", "meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveStatic(t, tt.body, "Content-Type", tt.contentType)
			res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
			if res.Charset != tt.charset || res.CharsetSource != tt.source {
				t.Errorf("charset %q from %q, want %q from %q", res.Charset, res.CharsetSource, tt.charset, tt.source)
			}
			if !strings.Contains(string(res.UTF8), "Informação é poder") || !utf8.Valid(res.UTF8) {
				t.Errorf("UTF8 %q", res.UTF8)
			}
			if !bytes.Equal(res.Body, tt.body) {
				t.Errorf("Body must stay as received")
			}
		})
	}
}

// redirectServer serves /r/N as a redirect to Target(N), and /final as 200.
func redirectServer(t *testing.T, target func(n int) string) *httptest.Server {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			io.WriteString(w, "arrived")
			return
		}
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		w.Header().Set("Location", target(n))
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, "moved")
	})
}

func TestFetchRedirects(t *testing.T) {
	chain := redirectServer(t, func(n int) string {
		if n == 0 {
			return "/final"
		}
		return fmt.Sprintf("../r/%d#frag", n-1)
	})
	loop := redirectServer(t, func(n int) string { return fmt.Sprintf("/r/%d", (n+1)%3) })
	f := newFetcher(t, Options{})

	t.Run("not followed by default", func(t *testing.T) {
		res := f.Fetch(context.Background(), Request{URL: chain.URL + "/r/2"})
		wantKind(t, res, "")
		if res.Status != 302 || res.Location != chain.URL+"/r/1#frag" || res.FinalURL != chain.URL+"/r/2" || len(res.Redirects) != 0 {
			t.Errorf("status %d location %q final %q redirects %q", res.Status, res.Location, res.FinalURL, res.Redirects)
		}
		if string(res.Body) != "moved" {
			t.Errorf("3xx body %q", res.Body)
		}
	})
	t.Run("followed", func(t *testing.T) {
		res := f.Fetch(context.Background(), Request{URL: chain.URL + "/r/3", MaxRedirects: 5})
		wantKind(t, res, "")
		want := []string{chain.URL + "/r/3", chain.URL + "/r/2", chain.URL + "/r/1", chain.URL + "/r/0"}
		if res.Status != 200 || string(res.Body) != "arrived" || res.FinalURL != chain.URL+"/final" ||
			strings.Join(res.Redirects, " ") != strings.Join(want, " ") || res.URL != chain.URL+"/r/3" {
			t.Errorf("status %d body %q final %q redirects %q", res.Status, res.Body, res.FinalURL, res.Redirects)
		}
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		res := f.Fetch(context.Background(), Request{URL: chain.URL + "/r/4", MaxRedirects: 5})
		wantKind(t, res, "")
	})
	t.Run("over the limit", func(t *testing.T) {
		res := f.Fetch(context.Background(), Request{URL: chain.URL + "/r/9", MaxRedirects: 5})
		wantKind(t, res, KindTooManyRedirects)
		if res.Status != 302 || len(res.Redirects) != 5 {
			t.Errorf("status %d, %d redirects recorded", res.Status, len(res.Redirects))
		}
	})
	t.Run("loop", func(t *testing.T) {
		res := f.Fetch(context.Background(), Request{URL: loop.URL + "/r/0", MaxRedirects: 10})
		wantKind(t, res, KindRedirectLoop)
		if len(res.Redirects) != 2 || !strings.Contains(res.Err.Error(), loop.URL+"/r/0") {
			t.Errorf("redirects %q, err %v", res.Redirects, res.Err)
		}
	})
	t.Run("unusable location", func(t *testing.T) {
		bad := redirectServer(t, func(int) string { return "mailto:someone@example.org" })
		res := f.Fetch(context.Background(), Request{URL: bad.URL + "/r/0", MaxRedirects: 5})
		wantKind(t, res, KindBadURL)
		res = f.Fetch(context.Background(), Request{URL: bad.URL + "/r/0"})
		wantKind(t, res, "")
		if res.Location != "" {
			t.Errorf("Location %q for a non-http target", res.Location)
		}
	})
}

func TestFetchConditional(t *testing.T) {
	const etag = `"v1"`
	const lastMod = "Sat, 01 Mar 2025 12:00:00 GMT"
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag && r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		io.WriteString(w, page)
	})
	f := newFetcher(t, Options{})
	first := f.Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, first, "")
	if first.Status != 200 {
		t.Fatalf("status %d", first.Status)
	}
	again := f.Fetch(context.Background(), Request{URL: srv.URL, ETag: first.Header.Get("ETag"), LastModified: first.Header.Get("Last-Modified")})
	wantKind(t, again, "")
	if again.Status != 304 || len(again.Body) != 0 {
		t.Errorf("status %d body %q", again.Status, again.Body)
	}
	bad := f.Fetch(context.Background(), Request{URL: srv.URL, ETag: "x\r\nEvil: 1"})
	wantKind(t, bad, KindBadURL)
}

func TestFetchRetryAfter(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		status   int
		header   string
		min, max time.Duration
	}{
		{429, "120", 120 * time.Second, 120 * time.Second},
		{503, date, 85 * time.Second, 90 * time.Second},
		{503, "", 0, 0},
		{500, "120", 0, 0}, // only 429 and 503 carry it
	}
	for _, tt := range tests {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if tt.header != "" {
				w.Header().Set("Retry-After", tt.header)
			}
			w.WriteHeader(tt.status)
		})
		res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
		wantKind(t, res, "")
		if res.Status != tt.status || res.RetryAfter < tt.min || res.RetryAfter > tt.max {
			t.Errorf("%d Retry-After %q: got %v, want %v..%v", tt.status, tt.header, res.RetryAfter, tt.min, tt.max)
		}
	}
}

func TestFetchSSRFGuard(t *testing.T) {
	var hits atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	guarded, err := New(Options{Resolve: []Mapping{{Host: "intranet.test", Addr: "127.0.0.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Close()
	for _, url := range []string{
		srv.URL,
		fmt.Sprintf("http://localhost:%d/", port),          // a name that resolves to loopback
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), // IPv4-mapped
		fmt.Sprintf("http://intranet.test:%d/", port),      // a mapping does not bypass the guard
	} {
		res := guarded.Fetch(context.Background(), Request{URL: url})
		wantKind(t, res, KindBlockedAddress)
		if !strings.Contains(res.Err.Error(), "127.0.0.1") || !strings.Contains(res.Err.Error(), "loopback") {
			t.Errorf("%s: error %q should name the address and why", url, res.Err)
		}
		var blocked *BlockedAddressError
		if !errors.As(res.Err, &blocked) || blocked.Reason != "loopback" {
			t.Errorf("%s: cause is not a *BlockedAddressError: %#v", url, res.Err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("server was reached %d times", hits.Load())
	}

	res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, res, "")
	if hits.Load() != 1 {
		t.Errorf("AllowPrivate: server hits %d", hits.Load())
	}
}

func TestFetchResolveMapping(t *testing.T) {
	var hosts sync.Map
	h := func(w http.ResponseWriter, r *http.Request) {
		hosts.Store(r.Host, true)
		io.WriteString(w, r.Host)
	}
	plain := serve(t, h)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(h))
	defer tlsSrv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())

	f := newFetcher(t, Options{
		Resolve: []Mapping{
			{Host: "www.site.test", Addr: plain.Listener.Addr().String()},
			{Host: "*.example.com", Addr: tlsSrv.Listener.Addr().String()},
		},
		TLSConfig: &tls.Config{RootCAs: roots},
	})
	for _, tt := range []struct{ url, body string }{
		{"http://www.site.test/", "www.site.test"},
		{"http://WWW.SITE.TEST:8080/", "WWW.SITE.TEST:8080"}, // any port, any case
		{"https://news.example.com/", "news.example.com"},    // SNI and certificate check use the URL's host
	} {
		res := f.Fetch(context.Background(), Request{URL: tt.url})
		wantKind(t, res, "")
		if string(res.Body) != tt.body || res.RemoteIP != "127.0.0.1" {
			t.Errorf("%s: body %q remote %q", tt.url, res.Body, res.RemoteIP)
		}
	}
	res := f.Fetch(context.Background(), Request{URL: "https://news.example.com/"})
	if res.Timing.TLS != 0 || !res.Timing.Reused {
		t.Errorf("TLS connection not reused: %+v", res.Timing)
	}
}

func TestFetchResolvesNames(t *testing.T) {
	srv := serveStatic(t, []byte("ok"))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// The mapped address is itself a name: it is resolved (from /etc/hosts,
	// never the network) and timed.
	f := newFetcher(t, Options{Resolve: []Mapping{{Host: "*.test", Addr: fmt.Sprintf("localhost:%d", port)}}})
	res := f.Fetch(context.Background(), Request{URL: "http://www.site.test/"})
	wantKind(t, res, "")
	if string(res.Body) != "ok" || res.Timing.DNS <= 0 || res.RemoteIP != "127.0.0.1" {
		t.Errorf("body %q timing %+v remote %q", res.Body, res.Timing, res.RemoteIP)
	}
}

func TestFetchTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the rejected handshake is expected
	srv.StartTLS()
	defer srv.Close()

	// System roots do not trust the test certificate.
	res := newFetcher(t, Options{}).Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, res, KindTLS)

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	res = newFetcher(t, Options{TLSConfig: &tls.Config{RootCAs: roots}}).Fetch(context.Background(), Request{URL: srv.URL})
	wantKind(t, res, "")
	if string(res.Body) != "secret" || res.Timing.TLS <= 0 || res.Proto != "HTTP/1.1" {
		t.Errorf("body %q timing %+v proto %q", res.Body, res.Timing, res.Proto)
	}
	if !strings.HasPrefix(string(res.RawRequest), "GET / HTTP/1.1\r\n") {
		t.Errorf("raw request over TLS %q", res.RawRequest)
	}
}

func TestFetchConcurrent(t *testing.T) {
	var inFlight, peak atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>%s</p>", r.URL.Path)
	})
	f := newFetcher(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				path := fmt.Sprintf("/%d/%d", g, i)
				res := f.Fetch(context.Background(), Request{URL: srv.URL + path})
				if res.Err != nil || string(res.Body) != "<p>"+path+"</p>" || !strings.Contains(string(res.RawRequest), "GET "+path+" ") {
					errs <- fmt.Sprintf("%s: err %v body %q", path, res.Err, res.Body)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if peak.Load() < 2 {
		t.Errorf("requests never overlapped (peak %d): the Fetcher serialises", peak.Load())
	}
}

// TestFetchTotalTimeout: Options.Timeout bounds a whole fetch, redirects followed by the
// fetcher included, however long each phase's own timeout is.
func TestFetchTotalTimeout(t *testing.T) {
	slowHeaders := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	var hops atomic.Int64
	var chain *httptest.Server
	chain = serve(t, func(w http.ResponseWriter, r *http.Request) {
		// Each hop answers after 150ms: well within the first-byte timeout, but a chain
		// of them is not.
		n := hops.Add(1)
		time.Sleep(150 * time.Millisecond)
		http.Redirect(w, r, fmt.Sprintf("%s/%d", chain.URL, n), http.StatusFound)
	})
	drip := serve(t, dripLines)
	f := newFetcher(t, Options{FirstByteTimeout: 5 * time.Second, BodyTimeout: 5 * time.Second, Timeout: 400 * time.Millisecond})
	for _, c := range []struct {
		name string
		req  Request
		kind ErrorKind
	}{
		{"headers never come", Request{URL: slowHeaders.URL}, KindTimeout},
		{"redirect chain", Request{URL: chain.URL, MaxRedirects: 20}, KindTimeout},
		{"endless drip", Request{URL: drip.URL}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := f.Fetch(context.Background(), c.req)
			elapsed := time.Since(start)
			wantKind(t, res, c.kind)
			if c.kind == "" && (res.Truncated != TruncatedTime || len(res.Body) == 0) {
				t.Errorf("truncated %q with %d bytes: want the partial body cut by time", res.Truncated, len(res.Body))
			}
			if elapsed > 3*time.Second {
				t.Errorf("took %v with a 400ms total timeout", elapsed)
			}
		})
	}
}

// TestFetchAllowPrivateTo: specific ranges, addresses and host names can be let through the
// SSRF guard without opening it for everything.
func TestFetchAllowPrivateTo(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolve := []Mapping{{Host: "intranet.test", Addr: "127.0.0.1"}, {Host: "other.test", Addr: "127.0.0.1"}, {Host: "wiki.corp.test", Addr: "127.0.0.1"}}
	for _, c := range []struct {
		allow   []string
		url     string
		blocked bool
	}{
		{nil, srv.URL, true},
		{[]string{"127.0.0.0/8"}, srv.URL, false},
		{[]string{"127.0.0.1"}, srv.URL, false},
		{[]string{"10.0.0.0/8", "::1"}, srv.URL, true},
		{[]string{"intranet.test"}, fmt.Sprintf("http://intranet.test:%d/", port), false},
		{[]string{"intranet.test"}, fmt.Sprintf("http://other.test:%d/", port), true},
		{[]string{"*.corp.test"}, fmt.Sprintf("http://wiki.corp.test:%d/", port), false},
		{[]string{"*.corp.test"}, srv.URL, true},
	} {
		f, err := New(Options{Resolve: resolve, AllowPrivateTo: c.allow})
		if err != nil {
			t.Fatal(err)
		}
		res := f.Fetch(context.Background(), Request{URL: c.url})
		f.Close()
		if got := KindOf(res.Err) == KindBlockedAddress; got != c.blocked {
			t.Errorf("allow %v, %s: blocked = %v (%v), want %v", c.allow, c.url, got, res.Err, c.blocked)
		}
	}
	if _, err := New(Options{AllowPrivateTo: []string{"not a host/"}}); err == nil || !strings.Contains(err.Error(), "not a CIDR") {
		t.Errorf("a bad entry: %v", err)
	}
}
