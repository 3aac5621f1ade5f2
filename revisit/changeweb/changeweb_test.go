package changeweb

import (
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestFreshnessArithmetic checks Freshness on a hand-made history: a page changes at 2 s
// and 3 s and is fetched at 1 s, 2.5 s and 4 s; measured over [0, 5].
func TestFreshnessArithmetic(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(x float64) time.Time { return t0.Add(time.Duration(x * float64(time.Second))) }
	s := &Set{start: t0, pages: map[string]*page{}, cfg: Config{Mixture: []Component{{0, 0.5}, {time.Second, 0.5}}}}
	p := &page{url: "u", rate: 1, comp: 1, validators: true, horizon: sec(100), changes: []time.Time{sec(2), sec(3)},
		served: []Serve{{sec(1), 0, 200}, {sec(2.5), 1, 200}, {sec(4), 2, 304}}}
	never := &page{url: "v", served: []Serve{{sec(3), 0, 200}}}
	s.order = []*page{p, never}
	rep := s.Freshness(sec(0), sec(5))
	// Stale [0,1) (no copy), fresh [1,2), stale [2,2.5), fresh [2.5,3), stale [3,4),
	// fresh [4,5): 2.5 s of 5. The page that never changes is stale until its fetch at
	// 3 s: 2 s fresh of 5. Together 4.5 s of 10.
	if math.Abs(rep.Freshness-0.45) > 1e-9 {
		t.Errorf("freshness %v, want 0.45", rep.Freshness)
	}
	// Age: ∫[0,1) s ds = 0.5, ∫[2,2.5) (s−2) = 0.125, ∫[3,4) (s−3) = 0.5; the other
	// page ∫[0,3) s ds = 4.5: 5.625 over 10 page-seconds.
	if want := 5.625 / 10; math.Abs(rep.Age.Seconds()-want) > 1e-6 {
		t.Errorf("age %v, want %vs", rep.Age, want)
	}
	if rep.Fetches != 4 || rep.NotMod != 1 || rep.Changes != 2 || math.Abs(rep.Changed-2.0/4) > 1e-9 {
		t.Errorf("report %+v", rep)
	}
	// By component, in the mixture's order: where the fetches went, and the freshness.
	want := []ComponentReport{
		{MeanInterval: 0, Pages: 1, Freshness: 0.4, Fetches: 1},
		{MeanInterval: time.Second, Pages: 1, Freshness: 0.5, Fetches: 3, Validated: 3},
	}
	if len(rep.Components) != len(want) {
		t.Fatalf("components %+v, want %+v", rep.Components, want)
	}
	for i, c := range rep.Components {
		w := want[i]
		if c.MeanInterval != w.MeanInterval || c.Pages != w.Pages || c.Fetches != w.Fetches || c.Validated != w.Validated || math.Abs(c.Freshness-w.Freshness) > 1e-9 {
			t.Errorf("component %d: %+v, want %+v", i, c, w)
		}
	}
}

// TestPagesChangeAndAnswerConditionally serves the pages over real HTTP: they change at
// about their rate, volatile fragments differ on every response, and validators answer 304
// until the next change.
func TestPagesChangeAndAnswerConditionally(t *testing.T) {
	set := New(Config{PagesPerHost: 4, Mixture: []Component{{50 * time.Millisecond, 1}}, Validators: 1, Seed: 2})
	pages := set.Extra("www.example.test", rand.New(rand.NewPCG(1, 1)))
	if len(pages) != 4 || len(set.URLs()) != 4 {
		t.Fatalf("%d pages", len(pages))
	}
	start := time.Now()
	set.Start(start)
	srv := httptest.NewServer(pages[0].Handler)
	defer srv.Close()
	get := func(etag string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	r1, b1 := get("")
	r2, b2 := get(r1.Header.Get("ETag"))
	if r1.Header.Get("ETag") == "" || r1.Header.Get("Last-Modified") == "" {
		t.Fatal("validators missing")
	}
	if r2.StatusCode == http.StatusNotModified && b2 != "" {
		t.Error("a 304 with a body")
	}
	if b1 == b2 && r2.StatusCode == http.StatusOK {
		t.Error("two responses are byte-identical: the volatile fragments are missing")
	}
	if !strings.Contains(b1, "views") || !strings.Contains(b1, "session") {
		t.Errorf("page lacks its volatile fragments:\n%s", b1)
	}
	time.Sleep(500 * time.Millisecond)
	r3, _ := get(r1.Header.Get("ETag"))
	if r3.StatusCode != http.StatusOK {
		t.Errorf("after ~10 expected changes the old ETag still answers %d", r3.StatusCode)
	}
	changes := set.Changes(time.Now())
	n := 0
	for _, c := range changes {
		if c.URL == set.URLs()[0] {
			n++
		}
	}
	if elapsed := time.Since(start).Seconds(); n < int(elapsed/0.05/3) || n > int(elapsed/0.05*3)+3 {
		t.Errorf("%d changes in %.2fs at a 50ms mean interval", n, elapsed)
	}
	if _, ok := set.AllFetched(); ok {
		t.Error("AllFetched with three pages never fetched")
	}
	if set.Rate(set.URLs()[1]) != 20 || set.Rate("http://nowhere/") != 0 {
		t.Error("Rate")
	}
}

// TestSameSeedSameHistory: two sets from one config, started together, change together.
func TestSameSeedSameHistory(t *testing.T) {
	cfg := Config{PagesPerHost: 3, Mixture: []Component{{10 * time.Millisecond, 1}}, Seed: 5}
	a, b := New(cfg), New(cfg)
	a.Extra("h.test", nil)
	b.Extra("h.test", nil)
	start := time.Now()
	a.Start(start)
	b.Start(start)
	end := start.Add(time.Second)
	ca, cb := a.Changes(end), b.Changes(end)
	if len(ca) == 0 || len(ca) != len(cb) || !ca[len(ca)-1].At.Equal(cb[len(cb)-1].At) {
		t.Errorf("histories differ: %d vs %d changes", len(ca), len(cb))
	}
}

// TestKinds: with page kinds, a page's URL section and dateline follow its change rate as
// the mapping says, with the noise fidelity allows; "shuffled" is never the natural
// mapping; the pages' rates and change times do not depend on the kinds.
func TestKinds(t *testing.T) {
	mix := []Component{{5 * time.Second, 0.25}, {time.Minute, 0.25}, {10 * time.Minute, 0.25}, {0, 0.25}}
	sectionOf := func(u string) string {
		path := strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 3)
		return path[1]
	}
	// agreement is the share of pages whose section is the one the mapping gives their rate.
	agreement := func(k *Kinds, want map[float64]string) (float64, *Set) {
		set := New(Config{PagesPerHost: 200, Mixture: mix, Seed: 3, Kinds: k})
		set.Extra("h.test", nil)
		n := 0
		for _, u := range set.URLs() {
			if sectionOf(u) == want[set.Rate(u)] {
				n++
			}
		}
		return float64(n) / 200, set
	}
	natural := map[float64]string{0.2: "news", 1.0 / 60: "blog", 1.0 / 600: "docs", 0: "about"}
	for _, tc := range []struct {
		kinds  *Kinds
		lo, hi float64
	}{
		{&Kinds{Mapping: "natural", Fidelity: 1}, 1, 1},
		{&Kinds{Mapping: "natural"}, 0.75, 0.95},         // 0.8 + 0.2/4
		{&Kinds{Mapping: "random"}, 0.12, 0.40},          // 1/4
		{&Kinds{Mapping: "shuffled", Fidelity: 1}, 0, 0}, // a derangement of natural
	} {
		got, set := agreement(tc.kinds, natural)
		if got < tc.lo || got > tc.hi {
			t.Errorf("%+v: %.2f of the pages in their natural section, want [%.2f, %.2f]", *tc.kinds, got, tc.lo, tc.hi)
		}
		plain := New(Config{PagesPerHost: 200, Mixture: mix, Seed: 3})
		plain.Extra("h.test", nil)
		for i, u := range set.URLs() {
			if set.Rate(u) != plain.Rate(plain.URLs()[i]) {
				t.Fatalf("%+v: page %d's rate depends on the kinds", *tc.kinds, i)
			}
		}
	}
	// News pages show their last update; about pages (at full fidelity) do not.
	set := New(Config{PagesPerHost: 8, Mixture: mix, Seed: 3, Kinds: &Kinds{Mapping: "natural", Fidelity: 1}})
	pages := set.Extra("h.test", nil)
	set.Start(time.Now())
	for _, pg := range pages {
		rec := httptest.NewRecorder()
		pg.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "http://h.test"+pg.Path, nil))
		dated := strings.Contains(rec.Body.String(), `class="dateline">Updated `)
		if kind := sectionOf("http://h.test" + pg.Path); dated != (kind == "news" || kind == "blog") {
			t.Errorf("%s: dateline %v", pg.Path, dated)
		}
	}
}

func TestParseKinds(t *testing.T) {
	for in, want := range map[string]*Kinds{
		"none": nil, "": nil, "natural": {Mapping: "natural"}, "shuffled:0.5": {Mapping: "shuffled", Fidelity: 0.5},
	} {
		got, err := ParseKinds(in)
		if err != nil || (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("ParseKinds(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"natural:2", "natural:x", "tree", "none:0.5"} {
		if _, err := ParseKinds(bad); err == nil {
			t.Errorf("ParseKinds(%q) gave no error", bad)
		}
	}
}
