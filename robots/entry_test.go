package robots

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestFromFetchStatus(t *testing.T) {
	body := []byte("user-agent: *\ndisallow: /private\n")
	errDial := errors.New("dial tcp 127.0.0.1:80: connect: connection refused")
	tests := []struct {
		name        string
		resp        Response
		outcome     Outcome
		status      int
		privateOK   bool // Allowed("/private")
		publicOK    bool // Allowed("/public")
		expiresIn   time.Duration
		errContains string
	}{
		{"200 parses the body", Response{Status: 200, Body: body}, Fetched, 200, false, true, 24 * time.Hour, ""},
		{"204 empty body allows all", Response{Status: 204}, Fetched, 204, true, true, 24 * time.Hour, ""},
		{"301 not resolved in 5 hops", Response{Status: 301, Body: body}, Unavailable, 301, true, true, 24 * time.Hour, ""},
		{"304 without a cached copy", Response{Status: 304}, Unavailable, 304, true, true, 24 * time.Hour, ""},
		{"400", Response{Status: 400, Body: body}, Unavailable, 400, true, true, 24 * time.Hour, ""},
		{"401", Response{Status: 401}, Unavailable, 401, true, true, 24 * time.Hour, ""},
		{"403", Response{Status: 403}, Unavailable, 403, true, true, 24 * time.Hour, ""},
		{"404", Response{Status: 404}, Unavailable, 404, true, true, 24 * time.Hour, ""},
		{"410", Response{Status: 410}, Unavailable, 410, true, true, 24 * time.Hour, ""},
		{"429 is not permission", Response{Status: 429}, Unreachable, 429, false, false, time.Minute, "HTTP 429"},
		{"500", Response{Status: 500, Body: body}, Unreachable, 500, false, false, time.Minute, "HTTP 500"},
		{"503", Response{Status: 503}, Unreachable, 503, false, false, time.Minute, "HTTP 503"},
		{"599", Response{Status: 599}, Unreachable, 599, false, false, time.Minute, "HTTP 599"},
		{"1xx is not an answer", Response{Status: 100}, Unreachable, 100, false, false, time.Minute, "HTTP 100"},
		{"status 0", Response{}, Unreachable, 0, false, false, time.Minute, "HTTP 0"},
		{"network error", Response{Err: errDial}, Unreachable, 0, false, false, time.Minute, "connection refused"},
		{"error wins over a 200", Response{Status: 200, Body: body, Err: errors.New("read: timeout")}, Unreachable, 0, false, false, time.Minute, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := FromFetch(tt.resp, t0, nil, Policy{})
			if e.Outcome != tt.outcome || e.Status != tt.status {
				t.Errorf("Outcome, Status = %v, %d; want %v, %d", e.Outcome, e.Status, tt.outcome, tt.status)
			}
			r := e.Rules()
			if got := r.Allowed("sonda", "/private"); got != tt.privateOK {
				t.Errorf("Allowed(/private) = %v, want %v", got, tt.privateOK)
			}
			if got := r.Allowed("sonda", "/public"); got != tt.publicOK {
				t.Errorf("Allowed(/public) = %v, want %v", got, tt.publicOK)
			}
			if !r.Allowed("sonda", "/robots.txt") {
				t.Error("/robots.txt disallowed")
			}
			if got := e.Expires.Sub(t0); got != tt.expiresIn {
				t.Errorf("expires in %v, want %v", got, tt.expiresIn)
			}
			if !strings.Contains(e.Err, tt.errContains) || (tt.errContains == "" && e.Err != "") {
				t.Errorf("Err = %q, want it to contain %q", e.Err, tt.errContains)
			}
			if !e.FetchedAt.Equal(t0) {
				t.Errorf("FetchedAt = %v", e.FetchedAt)
			}
		})
	}
}

func TestFromFetchRetries(t *testing.T) {
	p := Policy{RetryMin: time.Minute, RetryMax: 10 * time.Minute, MaxFailures: 6}
	var prev *Entry
	now := t0
	wantWaits := []time.Duration{1, 2, 4, 8, 10, 10}
	for i, w := range wantWaits {
		e := FromFetch(Response{Status: 503}, now, prev, p)
		if e.Failures != i+1 {
			t.Fatalf("fetch %d: Failures = %d", i+1, e.Failures)
		}
		if got := e.Expires.Sub(now); got != w*time.Minute {
			t.Errorf("fetch %d: retry after %v, want %v", i+1, got, w*time.Minute)
		}
		if got, want := e.GiveUp(p), i+1 >= 6; got != want {
			t.Errorf("fetch %d: GiveUp = %v, want %v", i+1, got, want)
		}
		prev, now = e, e.Expires
	}

	// Any other outcome resets the count.
	ok := FromFetch(Response{Status: 404}, now, prev, p)
	if ok.Failures != 0 || ok.GiveUp(p) {
		t.Errorf("after a 404: Failures %d, GiveUp %v", ok.Failures, ok.GiveUp(p))
	}
	again := FromFetch(Response{Err: errors.New("timeout")}, now, ok, p)
	if again.Failures != 1 {
		t.Errorf("failure after a success: Failures = %d, want 1", again.Failures)
	}

	never := Policy{MaxFailures: -1}
	if (&Entry{Outcome: Unreachable, Failures: 1000}).GiveUp(never) {
		t.Error("MaxFailures < 0 must never give up")
	}
	if !(&Entry{Outcome: Unreachable, Failures: 5}).GiveUp(Policy{}) {
		t.Error("default policy should give up after 5 failures")
	}
	var nilEntry *Entry
	if nilEntry.GiveUp(Policy{}) {
		t.Error("nil entry gives up")
	}
}

func TestFromFetchBackoffDoesNotOverflow(t *testing.T) {
	prev := &Entry{Outcome: Unreachable, Failures: 1 << 20}
	e := FromFetch(Response{Status: 500}, t0, prev, Policy{RetryMax: 3 * time.Hour})
	if got := e.Expires.Sub(t0); got != 3*time.Hour {
		t.Errorf("retry after %v, want the 3h cap", got)
	}
}

func TestCacheControl(t *testing.T) {
	tests := []struct {
		cc     string
		policy Policy
		want   time.Duration
	}{
		{"", Policy{}, 24 * time.Hour},
		{"max-age=7200", Policy{}, 2 * time.Hour},
		{"public, max-age=7200", Policy{}, 2 * time.Hour},
		{`MAX-AGE="10800"`, Policy{}, 3 * time.Hour},
		{"max-age=600", Policy{}, time.Hour}, // floored at MinTTL
		{"max-age=600", Policy{MinTTL: time.Minute}, 10 * time.Minute},
		{"max-age=0", Policy{}, time.Hour},
		{"no-cache", Policy{}, time.Hour},
		{"no-store, max-age=9999", Policy{}, time.Hour},
		{"max-age=31536000", Policy{}, 24 * time.Hour}, // never beyond 24h
		{"max-age=-5", Policy{}, 24 * time.Hour},
		{"max-age=soon", Policy{}, 24 * time.Hour},
		{"max-age=99999999999999999999", Policy{}, 24 * time.Hour},
		{"", Policy{TTL: 6 * time.Hour}, 6 * time.Hour},
		{"", Policy{TTL: 48 * time.Hour}, 24 * time.Hour}, // TTL cannot exceed the RFC's 24h
		{"max-age=60", Policy{TTL: 30 * time.Minute}, 30 * time.Minute},
	}
	for _, tt := range tests {
		e := FromFetch(Response{Status: 200, CacheControl: tt.cc}, t0, nil, tt.policy)
		if got := e.Expires.Sub(t0); got != tt.want {
			t.Errorf("Cache-Control %q, %+v: expires in %v, want %v", tt.cc, tt.policy, got, tt.want)
		}
	}
}

func TestFromFetchNotModified(t *testing.T) {
	first := FromFetch(Response{Status: 200, Body: []byte("user-agent: *\ndisallow: /x\n")}, t0, nil, Policy{})
	later := t0.Add(25 * time.Hour)
	if !first.Expired(later) || first.Expired(t0.Add(time.Hour)) {
		t.Error("Expired() wrong around the 24h TTL")
	}
	e := FromFetch(Response{Status: 304}, later, first, Policy{})
	if e.Outcome != Fetched || e.Rules().Allowed("a", "/x") {
		t.Errorf("304 after a 200: Outcome %v, /x allowed %v; want the cached rules", e.Outcome, e.Rules().Allowed("a", "/x"))
	}
	if !e.Expires.Equal(later.Add(24 * time.Hour)) {
		t.Errorf("304 did not renew the cache: expires %v", e.Expires)
	}
}

// roundTrip encodes e and decodes the result, failing the test on error.
func roundTrip(tb testing.TB, e *Entry) *Entry {
	tb.Helper()
	data, err := e.MarshalBinary()
	if err != nil {
		tb.Fatalf("MarshalBinary: %v", err)
	}
	back := new(Entry)
	if err := back.UnmarshalBinary(data); err != nil {
		tb.Fatalf("UnmarshalBinary: %v", err)
	}
	return back
}

func TestFromFetchLargeBody(t *testing.T) {
	body := padTo("user-agent: *\ndisallow: /before\n", MaxSize+10) + "disallow: /after\n"
	e := FromFetch(Response{Status: 200, Body: []byte(body)}, t0, nil, Policy{})
	if len(e.Body()) > MaxSize || !e.Rules().Truncated() {
		t.Errorf("stored body %d octets, Truncated %v", len(e.Body()), e.Rules().Truncated())
	}
	back := roundTrip(t, e)
	if !back.Rules().Truncated() || back.Rules().Allowed("a", "/before") || !back.Rules().Allowed("a", "/after") {
		t.Error("reloaded truncated entry decides differently")
	}
}

func TestEntryRules(t *testing.T) {
	var nilEntry *Entry
	if nilEntry.Rules().Allowed("a", "/") || (&Entry{}).Rules().Allowed("a", "/") {
		t.Error("an entry not fetched yet must disallow")
	}
	if !nilEntry.Expired(t0) {
		t.Error("nil entry is not expired")
	}
	if nilEntry.Body() != nil {
		t.Error("nil entry has a body")
	}
	if (&Entry{Outcome: Fetched}).Rules().Allowed("a", "/") {
		t.Error("Fetched entry without parsed rules must disallow")
	}
}

func TestEntryMarshalRoundTrip(t *testing.T) {
	entries := []*Entry{
		FromFetch(Response{Status: 200, Body: []byte("\xEF\xBB\xBFuser-agent: sonda\r\ndisallow: /x\r\ncrawl-delay: 2.5\r\nsitemap: https://e.com/s.xml\r\n")}, t0, nil, Policy{}),
		FromFetch(Response{Status: 404}, t0, nil, Policy{}),
		FromFetch(Response{Err: errors.New("dial: no such host")}, t0, &Entry{Outcome: Unreachable, Failures: 3}, Policy{}),
		{Outcome: Unavailable}, // zero times
	}
	for _, e := range entries {
		back := roundTrip(t, e)
		if back.Outcome != e.Outcome || back.Status != e.Status || back.Failures != e.Failures || back.Err != e.Err ||
			!back.FetchedAt.Equal(e.FetchedAt) || !back.Expires.Equal(e.Expires) || !bytes.Equal(back.Body(), e.Body()) {
			t.Errorf("round trip changed the entry:\n got %+v\nwant %+v", back, *e)
		}
		for _, path := range []string{"/", "/x", "/y"} {
			if back.Rules().Allowed("sonda", path) != e.Rules().Allowed("sonda", path) {
				t.Errorf("%v: reloaded entry decides %s differently", e.Outcome, path)
			}
		}
		d1, _ := e.Rules().Group("sonda").CrawlDelay()
		d2, _ := back.Rules().Group("sonda").CrawlDelay()
		if d1 != d2 || len(back.Rules().Sitemaps()) != len(e.Rules().Sitemaps()) {
			t.Errorf("%v: crawl-delay or sitemaps lost", e.Outcome)
		}
	}
}

func TestEntryUnmarshalErrors(t *testing.T) {
	good, err := FromFetch(Response{Status: 200, Body: []byte("user-agent: *\ndisallow: /\n")}, t0, nil, Policy{}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"empty":         nil,
		"version":       append([]byte{9}, good[1:]...),
		"outcome":       append([]byte{good[0], 7}, good[2:]...),
		"short":         good[:len(good)-3],
		"trailing":      append(append([]byte{}, good...), 0),
		"bad time":      {entryVersion, byte(Fetched), 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0},
		"huge length":   {entryVersion, byte(Fetched), 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"huge status":   {entryVersion, byte(Fetched), 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"broken varint": {entryVersion, byte(Fetched), 0, 0xff},
	}
	for name, data := range bad {
		e := Entry{Outcome: Unavailable, Status: 404}
		err := e.UnmarshalBinary(data)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "robots: decode entry: ") {
			t.Errorf("%s: error %q does not say where", name, err)
		}
		if e.Outcome != Unavailable || e.Status != 404 {
			t.Errorf("%s: failed decode modified the entry", name)
		}
	}

	big := Entry{Outcome: Fetched, body: make([]byte, MaxSize+1)}
	data, _ := big.MarshalBinary()
	if err := new(Entry).UnmarshalBinary(data); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("oversized body: err = %v", err)
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{Fetched: "fetched", Unavailable: "unavailable", Unreachable: "unreachable", 0: "Outcome(0)", 42: "Outcome(42)"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", o, got, want)
		}
	}
}
