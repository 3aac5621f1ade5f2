package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonda-search/sonda/internal/dirsnap"
)

// commonDocs are n documents that all contain the word "common".
func commonDocs(n int) []Doc {
	docs := make([]Doc, n)
	for i := range docs {
		u := fmt.Sprintf("http://h%d.test/p%d", i%50, i)
		docs[i] = Doc{ID: u, URL: u, Host: fmt.Sprintf("h%d.test", i%50), Lang: "en", Title: fmt.Sprintf("Page %d", i),
			Body: fmt.Sprintf("a common word and number w%d in a sentence of common text", i%97), Fetched: day("2024-01-01"), Relevance: -1}
	}
	return docs
}

func TestReadOnlyOpenChangesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrNoIndex) || !strings.Contains(err.Error(), "sonda index rebuild") {
		t.Fatalf("read-only open of a missing index: %v, want ErrNoIndex saying how to make one", err)
	}
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	load(t, ix, corpus...)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := dirsnap.Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Two readers at once, each searching from several goroutines.
	var readers []*Index
	for range 2 {
		ro, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, ro)
	}
	var wg sync.WaitGroup
	for _, ro := range readers {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := ro.Search(ctx, Request{Query: "reactor", Facets: true}); err != nil || r.Total == 0 {
					t.Errorf("read-only search: %v (%v hits)", err, r)
				}
			}()
		}
	}
	wg.Wait()
	ro := readers[0]
	if err := ro.Put(ctx, corpus[0]); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put on a read-only index: %v", err)
	}
	if err := ro.Delete(ctx, corpus[0].ID); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete on a read-only index: %v", err)
	}
	if err := ro.Sync(ctx); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Sync on a read-only index: %v", err)
	}
	if got := ro.Stats().Documents; got != int64(len(corpus)) {
		t.Errorf("read-only stats: %d documents, want %d", got, len(corpus))
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("open for writing while readers have it: %v, want ErrLocked", err)
	}
	for _, ro := range readers {
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := dirsnap.Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Diff(after); len(d) > 0 {
		t.Fatalf("read-only opens changed the index: %v", d)
	}
	// And a writer still opens it afterwards, clean.
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Stats().Unclean {
		t.Error("the index reads as not closed cleanly after read-only opens")
	}
}

func TestSearchBudgetReturnsPartial(t *testing.T) {
	const n = 3000
	ix := openTest(t, Options{CacheEntries: -1, Budget: time.Nanosecond})
	load(t, ix, commonDocs(n)...)
	r, err := ix.Search(ctx, Request{Query: "common", Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || len(r.Hits) != 10 || r.Total < 256 || r.Total >= n {
		t.Fatalf("over budget: partial %v, %d hits, total %d; want partial, a full page and a lower bound below %d", r.Partial, len(r.Hits), r.Total, n)
	}
	full := openTest(t, Options{CacheEntries: -1, Budget: time.Hour})
	load(t, full, commonDocs(n)...)
	r, err = full.Search(ctx, Request{Query: "common"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Partial || r.Total != n {
		t.Fatalf("within budget: partial %v, total %d, want %d", r.Partial, r.Total, n)
	}
}

func TestSearchTurnsAnswerBusy(t *testing.T) {
	ix := openTest(t, Options{MaxSearches: 1, QueueWait: 20 * time.Millisecond})
	load(t, ix, corpus...)
	if _, err := ix.Search(ctx, Request{Query: "fuel"}); err != nil {
		t.Fatal(err)
	}
	release, err := ix.takeTurn(ctx) // the one search allowed is running
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(ctx, Request{Query: "reactor"}); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "1 are running") {
		t.Errorf("a search with no turn free: %v, want ErrBusy naming the limit", err)
	}
	if r, err := ix.Search(ctx, Request{Query: "fuel"}); err != nil || !r.Cached {
		t.Errorf("a cached answer needs no turn: %v (cached %v)", err, r != nil && r.Cached)
	}
	// A search that waits gets the turn as soon as it is given back.
	done := make(chan error, 1)
	ix2 := openTest(t, Options{MaxSearches: 1, QueueWait: time.Minute})
	load(t, ix2, corpus...)
	release2, _ := ix2.takeTurn(ctx)
	go func() {
		_, err := ix2.Search(ctx, Request{Query: "reactor"})
		done <- err
	}()
	release2()
	if err := <-done; err != nil {
		t.Errorf("a queued search: %v", err)
	}
	release()
	if _, err := ix.Search(ctx, Request{Query: "reactor"}); err != nil {
		t.Errorf("after the turn is given back: %v", err)
	}
}
