package store

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

func openTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func key(s string) URLKey {
	sum := sha256.Sum256([]byte(s))
	return URLKey(sum[:16])
}

func TestPageRoundTrip(t *testing.T) {
	db := openTemp(t)
	rel := 0.75
	in := &Page{URL: "http://a/", FinalURL: "http://a/", Status: 200, FetchedAt: time.Unix(1_700_000_000, 0).UTC(),
		ContentType: "text/html", Title: "A", Depth: 1, Parent: "http://b/", Fingerprint: "ab", Relevance: &rel}
	b := db.Pebble().NewBatch()
	if err := PutPage(b, key(in.URL), in); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	out, ok, err := db.Page(key(in.URL))
	if err != nil || !ok {
		t.Fatalf("Page: ok=%v err=%v", ok, err)
	}
	if out.Title != "A" || out.Parent != "http://b/" || *out.Relevance != 0.75 || !out.FetchedAt.Equal(in.FetchedAt) {
		t.Fatalf("round trip: %+v", out)
	}
	if _, ok, _ := db.Page(key("http://missing/")); ok {
		t.Fatal("missing page reported present")
	}
	n := 0
	if err := db.Pages(func(*Page) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("Pages visited %d (err %v), want 1", n, err)
	}
}

func TestVisitsInOrder(t *testing.T) {
	db := openTemp(t)
	k := key("http://a/")
	b := db.Pebble().NewBatch()
	base := time.Unix(1_700_000_000, 0)
	for _, d := range []time.Duration{2 * time.Hour, 0, time.Hour} {
		if err := AddVisit(b, k, Visit{At: base.Add(d), Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	// Another URL's visits must not leak in.
	_ = AddVisit(b, key("http://b/"), Visit{At: base, Status: 404})
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	vs, err := db.Visits(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || !vs[0].At.Equal(base) || !vs[2].At.Equal(base.Add(2*time.Hour)) {
		t.Fatalf("visits = %+v, want 3 oldest first", vs)
	}
}

func TestDuplicates(t *testing.T) {
	db := openTemp(t)
	const h = uint64(0xF0F0_1234_5678_9ABC)
	cases := []struct {
		url       string
		fp        string
		simhash   uint64
		wantExact string
		wantNear  string
	}{
		{"http://a/1", "fp1", h, "", ""},
		{"http://a/1", "fp1", h, "", ""},                                 // the same URL again (refetch): not its own duplicate
		{"http://a/2", "fp1", h, "http://a/1", ""},                       // same text
		{"http://a/3", "fp3", h ^ 0b111, "", "http://a/1 or http://a/2"}, // 3 bits away: near
		{"http://a/4", "fp4", h ^ 0xF000_0F00_00F0_000F, "", ""},         // 16 bits away, one per band: not near
		{"http://a/5", "fp5", ^h, "", ""},
	}
	for _, c := range cases {
		d, err := db.CheckDuplicates(key(c.url), c.url, []byte(c.fp), c.simhash)
		if err != nil {
			t.Fatal(err)
		}
		nearOK := d.NearOf == c.wantNear || d.NearOf != "" && strings.Contains(c.wantNear, d.NearOf)
		if d.ExactOf != c.wantExact || !nearOK {
			t.Errorf("%s: got %+v, want exact %q near %q", c.url, d, c.wantExact, c.wantNear)
		}
	}
}

func TestOpenTwiceSaysLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
}
