package index

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/sonda-search/sonda/internal/synthcorpus"
)

// TestForwardCache: the forward term lists and IDs copied out of the persisted segments
// (forwardcache.go) are the stored ones, document by document — documents stored without
// a list, or with a list of a later version, deleted documents — whether every segment
// is held, some (the bound), or none; segments no longer in the index are forgotten, and
// a closed cache copies nothing.
func TestForwardCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir, Options{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := synthcorpus.New(2)
	var gone []string
	for i := 0; i < 600; i += 150 {
		docs := make([]Doc, 0, 150)
		for j := i; j < i+150; j++ {
			docs = append(docs, synthDoc(c, j))
			if j%31 == 0 {
				gone = append(gone, docs[len(docs)-1].ID)
			}
		}
		switch i {
		case 150:
			putUnlisted(t, ix, false, docs[:20]...)
			docs = docs[20:]
		case 300:
			putUnlisted(t, ix, true, docs[:20]...)
			docs = docs[20:]
		}
		if err := ix.Put(ctx, docs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	// Opened again, every segment is persisted.
	ix, err = Open(dir, Options{CacheEntries: -1, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap := r.(*scorch.IndexSnapshot)
	segs := snap.Segments()
	if len(segs) < 2 {
		t.Fatalf("want several segments, have %d", len(segs))
	}
	var docs []collectedHit
	var total uint64
	for _, s := range segs {
		total += s.Segment().Count()
	}
	for d := range total {
		docs = append(docs, collectedHit{doc: d})
	}
	type read struct {
		Lang     string
		Sections []byte
		OK       bool
	}
	readAll := func(cache *forwardCache) []read {
		out := make([]read, len(docs))
		err := forwardLists(r, cache, docs, func(i int, l forwardList, ok bool) error {
			out[i] = read{l.lang, append([]byte(nil), l.sections...), ok}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	stored := readAll(nil)
	// IDs are the snapshot's (ExternalID), with any cache; asking for them starts no copy.
	storedIDs := make([]string, len(docs))
	for i, d := range docs {
		if storedIDs[i], err = r.ExternalID(d.iid()); err != nil || storedIDs[i] == "" {
			t.Fatalf("document %d: ID %q, %v", d.doc, storedIDs[i], err)
		}
	}
	checkIDs := func(cache *forwardCache) {
		t.Helper()
		got := make([]string, len(docs))
		if err := cache.externalIDs(r, docs, func(i int, id string) { got[i] = id }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, storedIDs) {
			t.Fatal("the IDs differ from the stored ones")
		}
	}
	checkIDs(nil)
	var listed, unlisted int
	for _, x := range stored {
		if x.OK {
			listed++
		} else {
			unlisted++
		}
	}
	if listed < 400 || unlisted < 40 {
		t.Fatalf("%d documents with lists, %d without: want both", listed, unlisted)
	}
	// held counts the segments whose lists the cache holds, checking its accounting.
	held := func(cache *forwardCache) int {
		cache.mu.Lock()
		defer cache.mu.Unlock()
		n, bytes := 0, int64(0)
		for _, sl := range cache.segs {
			if sl.ready.Load() {
				n++
			}
			bytes += sl.bytes
		}
		if bytes != cache.bytes || cache.bytes > cache.limit {
			t.Fatalf("the cache counts %d bytes, its segments %d, its limit %d", cache.bytes, bytes, cache.limit)
		}
		return n
	}

	// Unbounded: each read starts copying one segment; the reads are the stored lists
	// throughout.
	all := newForwardCache(1 << 30)
	if checkIDs(all); len(all.segs) != 0 {
		t.Fatal("asking for IDs started a copy")
	}
	for range len(segs) + 1 {
		if got := readAll(all); !reflect.DeepEqual(got, stored) {
			t.Fatalf("with %d segments held, the lists differ from the stored ones", held(all))
		}
		all.wait()
		checkIDs(all)
	}
	if n := held(all); n != len(segs) {
		t.Fatalf("%d of %d segments held", n, len(segs))
	}
	if got := readAll(all); !reflect.DeepEqual(got, stored) {
		t.Fatal("with every segment held, the lists differ from the stored ones")
	}

	// Bounded to the largest segment: one segment held, the others read from the stored
	// fields, the same lists.
	largest := uint64(0)
	for _, s := range segs {
		largest = max(largest, s.Segment().Count())
	}
	some := newForwardCache(int64(largest) * forwardBytesPerDoc)
	for range len(segs) + 1 {
		if got := readAll(some); !reflect.DeepEqual(got, stored) {
			t.Fatal("with a bounded cache, the lists differ from the stored ones")
		}
		some.wait()
		checkIDs(some)
	}
	if n := held(some); n != 1 {
		t.Fatalf("a cache bounded to one segment holds %d", n)
	}

	// Segments no longer in the index are forgotten when a new one is asked for: here
	// the index is segs[0] alone, and segs[0] new to the cache (as a merge's segment).
	all.mu.Lock()
	all.bytes -= all.segs[segs[0].Segment()].bytes
	delete(all.segs, segs[0].Segment())
	all.mu.Unlock()
	all.lists(snap, segs[:1], 0)
	all.wait()
	if n := held(all); n != 1 || len(all.segs) != 1 {
		t.Fatalf("after a merge into one segment, the cache holds %d segments (%d ready)", len(all.segs), n)
	}

	// Closed, or off: nothing is copied.
	all.close()
	none := newForwardCache(-1)
	for _, cache := range []*forwardCache{all, none} {
		cache.lists(snap, segs, 0)
		if cache.wait(); len(cache.segs) > len(segs) || cache.building {
			t.Fatal("a closed cache copies a segment")
		}
		if got := readAll(cache); !reflect.DeepEqual(got, stored) {
			t.Fatal("the lists differ from the stored ones")
		}
		checkIDs(cache)
	}
	if len(none.segs) != 0 {
		t.Fatalf("a cache turned off holds %d segments", len(none.segs))
	}
}
