package testweb

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// logged injects a request into the log of host: start and end in
// milliseconds after t0.
func logged(w *Web, t0 time.Time, host, path string, start, end int, status int) {
	e := entry{host: host, target: path, path: path, status: status,
		start: t0.Add(time.Duration(start) * time.Millisecond), end: t0.Add(time.Duration(end) * time.Millisecond)}
	if status == 429 || status == 503 {
		e.retryAfter = time.Second
	}
	if s := w.byName[host]; s != nil {
		s.log.add(e)
	} else {
		w.unknown.add(e)
	}
}

func TestCheckPoliteness(t *testing.T) {
	w := New(Config{Seed: 1})
	var slowHost, plain string
	for _, s := range w.sites {
		if s.robots.crawlDelay() > 0 && slowHost == "" {
			slowHost = s.name
		}
	}
	plain = w.sites[0].name
	type req struct {
		host       string
		start, end int
		status     int
	}
	for _, tc := range []struct {
		name     string
		minDelay time.Duration
		perHost  int
		reqs     []req
		want     []string // rules violated, in order
	}{
		{"polite", 50 * time.Millisecond, 1, []req{{plain, 0, 10, 200}, {plain, 60, 70, 200}, {plain, 120, 121, 200}}, nil},
		{"just within tolerance", 50 * time.Millisecond, 1, []req{{plain, 0, 10, 200}, {plain, 57, 70, 200}}, nil},
		{"too soon", 50 * time.Millisecond, 1, []req{{plain, 0, 10, 200}, {plain, 40, 50, 200}}, []string{"delay"}},
		{"overlap", 0, 1, []req{{plain, 0, 100, 200}, {plain, 50, 60, 200}}, []string{"concurrency"}},
		{"overlap within tolerance", 0, 1, []req{{plain, 0, 100, 200}, {plain, 97, 110, 200}}, nil},
		{"two allowed", 0, 2, []req{{plain, 0, 100, 200}, {plain, 50, 60, 200}}, nil},
		{"three with two allowed", 0, 2, []req{{plain, 0, 100, 200}, {plain, 10, 120, 200}, {plain, 50, 60, 200}}, []string{"concurrency"}},
		{"no limit", 0, 0, []req{{plain, 0, 100, 200}, {plain, 10, 120, 200}, {plain, 50, 60, 200}}, nil},
		{"other hosts overlap freely", 0, 1, []req{{plain, 0, 100, 200}, {slowHost, 10, 20, 200}, {"www.nosuchsite.test", 10, 20, 421}}, nil},
		{"crawl-delay beats minDelay", 10 * time.Millisecond, 1, []req{{slowHost, 0, 10, 200}, {slowHost, 110, 120, 200}}, []string{"delay"}},
		{"crawl-delay kept", 10 * time.Millisecond, 1, []req{{slowHost, 0, 10, 200}, {slowHost, 210, 220, 200}}, nil},
		{"retry-after", 0, 1, []req{{plain, 0, 10, 429}, {plain, 500, 510, 200}}, []string{"retry-after"}},
		{"retry-after waited", 0, 1, []req{{plain, 0, 10, 503}, {plain, 1010, 1020, 200}}, nil},
		{"retry-after outlives other requests", 0, 2, []req{{plain, 0, 10, 429}, {plain, 20, 30, 200}}, []string{"retry-after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.Reset()
			t0 := time.Now()
			for _, r := range tc.reqs {
				logged(w, t0, r.host, fmt.Sprintf("/p%d", r.start), r.start, r.end, r.status)
			}
			var got []string
			for _, v := range w.CheckPoliteness(tc.minDelay, tc.perHost) {
				got = append(got, v.Rule)
				if v.String() == "" || v.Host == "" {
					t.Errorf("violation without description: %+v", v)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("violations %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckPolitenessLoopback drives the real server: a polite client
// passes, two requests at once on one host are caught.
func TestCheckPolitenessLoopback(t *testing.T) {
	w, c := start(t, Config{Seed: 1, SlowDelay: 80 * time.Millisecond})
	host := w.sites[0]
	fetch := func(u string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	fetch(host.origin + "/robots.txt")
	for _, p := range host.pages[:4] {
		time.Sleep(20 * time.Millisecond)
		fetch(p.url)
	}
	if v := w.CheckPoliteness(10*time.Millisecond, 1); len(v) > 0 {
		t.Errorf("polite client: %v", v)
	}
	slow := caseOf(t, w, "slow-first-byte").URL
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fetch(slow)
	}()
	time.Sleep(30 * time.Millisecond) // the slow request is open now
	slowHost := strings.Split(strings.TrimPrefix(slow, "http://"), "/")[0]
	fetch("http://" + slowHost + "/")
	wg.Wait()
	found := false
	for _, v := range w.CheckPoliteness(0, 1) {
		if v.Rule == "concurrency" && v.Host == slowHost {
			found = true
		}
	}
	if !found {
		t.Errorf("overlapping requests on %s not reported: %v", slowHost, w.CheckPoliteness(0, 1))
	}
	for _, r := range w.Requests() {
		if r.UserAgent == "" || r.Start.After(r.End) {
			t.Errorf("odd log entry %+v", r)
		}
	}
}

func TestCheckFetchesFindsMistakes(t *testing.T) {
	w := New(fast(Config{Seed: 8, Hosts: 12}))
	var trap Trap
	for _, tr := range w.Traps() {
		if tr.Kind == "calendar" {
			trap = tr
		}
	}
	page := w.Reachable()[0]
	crawl(t, w)
	logs := map[*requestLog][]entry{}
	for _, l := range w.logs() {
		logs[l] = l.snapshot()
	}
	for _, tc := range []struct {
		name     string
		mess     func()
		timedOut map[string]int // the crawler's account of its timed-out attempts
		want     string
	}{
		{"correct", func() {}, nil, ""},
		{"disallowed", func() { refGet(w, w.Disallowed()[0], time.Second) }, nil, "robots.txt forbids it"},
		{"nofollow", func() { refGet(w, w.NofollowOnly()[0], time.Second) }, nil, "only nofollow pages link to it"},
		{"twice", func() { refGet(w, page, time.Second) }, nil, page + ": requested 2 times, want 1"},
		// A page fetched again after an attempt the crawler says timed out is right...
		{"again after a timeout", func() { refGet(w, page, time.Second) }, map[string]int{page: 1}, ""},
		// ...but the account must match the requests.
		{"fewer than the timeouts", func() { refGet(w, page, time.Second) }, map[string]int{page: 2}, page + ": requested 2 times, want 3"},
		{"unknown URL", func() { refGet(w, "http://www.site00.test/nope.html", time.Second) }, nil, "does not link to it"},
		{"trap", func() {
			for m := range 120 {
				refGet(w, fmt.Sprintf("http://%s/calendar?month=%04d-%02d", hostOf(trap.Entry), 1000+m/12, m%12+1), time.Second)
			}
		}, nil, "calendar trap explored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for l, entries := range logs {
				l.mu.Lock()
				l.entries = slices.Clone(entries)
				l.mu.Unlock()
			}
			tc.mess()
			problems := w.CheckFetchesAfterTimeouts(tc.timedOut)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Errorf("problems after a correct crawl: %v", problems)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
	t.Run("missed and out of order", func(t *testing.T) {
		w.Reset()
		refGet(w, page, time.Second)
		problems := strings.Join(w.CheckFetches(), "\n")
		for _, want := range []string{"requested 0 times, want 1", "requested before robots.txt"} {
			if !strings.Contains(problems, want) {
				t.Errorf("problems lack %q", want)
			}
		}
	})
}

func hostOf(u string) string {
	req, _ := http.NewRequest("GET", u, nil)
	return req.Host
}

// TestCheckPolitenessAbandoned: the end of a request the client abandoned is only known
// as when the server noticed, so the check allows AbandonedTolerance after it, and no
// more; a complete request gets no such slack.
func TestCheckPolitenessAbandoned(t *testing.T) {
	w := New(Config{Seed: 1})
	host := w.sites[0]
	const delay = 50 * time.Millisecond
	for _, tc := range []struct {
		name      string
		abandoned bool
		gap       time.Duration
		want      int
	}{
		{"abandoned, noticed late", true, 34 * time.Millisecond, 0},
		{"abandoned, far too soon", true, -20 * time.Millisecond, 1},
		{"complete, same gap", false, 34 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.Reset()
			t0 := time.Now()
			end := t0.Add(time.Second)
			host.log.add(entry{host: host.name, path: "/slow/drip", status: 200, start: t0, end: end, abandoned: tc.abandoned})
			host.log.add(entry{host: host.name, path: "/next", status: 200, start: end.Add(tc.gap), end: end.Add(tc.gap + time.Millisecond)})
			if got := w.CheckPoliteness(delay, 1); len(got) != tc.want {
				t.Errorf("violations %v, want %d", got, tc.want)
			}
		})
	}
}

// TestCheckFetchesSeesAbandonedRequests: a request the client gave up on (a first-byte
// timeout) is logged when its handler notices, which can be after the crawler is done;
// the checks that follow a crawl wait for it (settle), so it counts.
func TestCheckFetchesSeesAbandonedRequests(t *testing.T) {
	w, c := start(t, Config{Seed: 1, SlowDelay: time.Minute})
	slow := caseOf(t, w, "slow-first-byte").URL
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, slow, nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("%s answered within 20 ms, want a stall", slow)
		}
		cancel()
	}
	w.settle()
	if n := w.Counts()[slow]; n != 3 {
		t.Errorf("%s: %d requests logged once the server settled, want the 3 made", slow, n)
	}
}
