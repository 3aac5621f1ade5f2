package fetch

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFetchAdmitsLargeBodies: Request.Admit is asked once, with the body's limit, for a
// body that grows past LargeBody (chunked, of known length, or only once decoded), never
// for a small one; the body timeout stands still while it waits, fetch.timeout does not; its refusal abandons the body.
func TestFetchAdmitsLargeBodies(t *testing.T) {
	// 1.5 MiB of words that gzip to about a quarter: decoded past LargeBody, not on the wire.
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi")
	rng := rand.New(rand.NewSource(1))
	var b bytes.Buffer
	for b.Len() < 3<<19 {
		b.WriteString(words[rng.Intn(len(words))])
		b.WriteByte(' ')
	}
	large := b.Bytes()
	gzipped := compress(t, "gzip", large) // once: under -race it takes seconds
	if len(gzipped) > LargeBody {
		t.Fatalf("the gzipped body is %d bytes: it should pass LargeBody only once decoded", len(gzipped))
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body := large
		if r.URL.Path == "/small" {
			body = large[:100<<10]
		}
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Query().Get("as") {
		case "length":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			body = gzipped
		}
		for b := body; len(b) > 0; b = b[min(len(b), 64<<10):] { // chunked unless a length was set
			w.Write(b[:min(len(b), 64<<10)])
			w.(http.Flusher).Flush()
		}
	})
	const limit = 4 << 20
	tests := []struct {
		path    string
		wait    time.Duration
		refuse  bool
		asks    int64
		kind    ErrorKind
		cut     string // Result.Truncated wanted
		wantLen int
	}{
		{path: "/small", asks: 0, wantLen: 100 << 10},
		{path: "/small?as=length", asks: 0, wantLen: 100 << 10},
		{path: "/large", asks: 1, wantLen: len(large)},
		{path: "/large?as=length", asks: 1, wantLen: len(large)},
		{path: "/large?as=gzip", asks: 1, wantLen: len(large)},
		// Waiting longer than the body timeout is no body timeout; the whole fetch's
		// timeout still bounds the fetch.
		{path: "/large", wait: 4 * time.Second, asks: 1, wantLen: len(large)},
		{path: "/large?as=length", wait: 4 * time.Second, asks: 1, wantLen: len(large)},
		{path: "/large", wait: 11 * time.Second, asks: 1, cut: TruncatedTime},
		{path: "/large", refuse: true, asks: 1, kind: KindCanceled},
		{path: "/large?as=length", refuse: true, asks: 1, kind: KindCanceled},
		{path: "/large?as=gzip", refuse: true, asks: 1, kind: KindCanceled},
	}
	// The timeouts leave a loaded machine under -race time to read 1.5 MiB (200 ms did not
	// at a load of 26); the body timeout is shorter than the waits above.
	f := newFetcher(t, Options{BodyTimeout: 2 * time.Second, Timeout: 10 * time.Second, FirstByteTimeout: 3 * time.Second, MaxBodyBytes: limit})
	for _, tc := range tests {
		var asks atomic.Int64
		req := Request{URL: srv.URL + tc.path, Admit: func(ctx context.Context, maxBytes int64) error {
			asks.Add(1)
			if maxBytes != limit {
				t.Errorf("%s: admit asked for %d bytes, want the limit %d", tc.path, maxBytes, limit)
			}
			time.Sleep(tc.wait)
			if tc.refuse {
				return errors.New("no memory for you")
			}
			return nil
		}}
		res := f.Fetch(context.Background(), req)
		if got := asks.Load(); got != tc.asks {
			t.Errorf("%s (wait %v): admit asked %d times, want %d", tc.path, tc.wait, got, tc.asks)
		}
		if KindOf(res.Err) != tc.kind {
			t.Errorf("%s (wait %v, refuse %v): error %v, want kind %q", tc.path, tc.wait, tc.refuse, res.Err, tc.kind)
			continue
		}
		if res.Timing.Waited < tc.wait || res.Timing.Waited > res.Timing.Total {
			t.Errorf("%s (wait %v): Timing.Waited %v of Total %v", tc.path, tc.wait, res.Timing.Waited, res.Timing.Total)
		}
		if tc.cut != "" {
			if res.Truncated != tc.cut {
				t.Errorf("%s (wait %v): truncated %q, want %q: fetch.timeout bounds a fetch that waits", tc.path, tc.wait, res.Truncated, tc.cut)
			}
			continue
		}
		if tc.kind == "" && (len(res.Body) != tc.wantLen || res.Truncated != "") {
			t.Errorf("%s (wait %v): %d bytes, truncated %q; want %d whole", tc.path, tc.wait, len(res.Body), res.Truncated, tc.wantLen)
		}
	}
}
