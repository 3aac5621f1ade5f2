package store

import (
	"testing"
	"time"
)

func TestHistories(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	b := db.Pebble().NewBatch()
	keys := []URLKey{{1}, {2}}
	for i, k := range keys {
		if err := PutPage(b, k, &Page{URL: "http://h/" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
		for v := 0; v <= i; v++ {
			if err := AddVisit(b, k, Visit{At: t0.Add(time.Duration(2-v) * time.Hour), Status: 200 + v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	got := map[URLKey][]Visit{}
	if err := db.Histories(func(k URLKey, p *Page, visits []Visit) error {
		if p.URL == "" {
			t.Errorf("page %x has no record", k)
		}
		got[k] = visits
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[keys[0]]) != 1 || len(got[keys[1]]) != 2 {
		t.Fatalf("histories %v", got)
	}
	if h := got[keys[1]]; !h[0].At.Before(h[1].At) {
		t.Errorf("visits not oldest first: %v", h)
	}
}
