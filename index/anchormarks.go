package index

import (
	"hash/maphash"
	"sync"
)

// anchorMarks remembers, for each document a Sink wrote, a digest of the anchor text it
// was written with, so that an anchor refresh (Sink.refresh) can tell from the link graph
// alone that a touched document's anchors have not changed, without reading the document
// back from the index.
//
// Why: a page's in-links change all through a crawl, and every change touches it; the
// refresh then read the whole stored document (its body and forward lists decoded) only to
// find, most of the time, the same anchors. In a 20,000-page crawl of the benchmark web
// none of the refreshes rewrote a document, and their reads were 1.8 s of CPU (1.1 %);
// in a crawl stopped at 37,765 pages of a 200,000-page web, whose end compaction refreshes
// every touched page, 7.3 s (2.2 %), a share that grows with the crawl (docs/benchmarks.md,
// issue 12). A document the sink did not write (an earlier run's, or one beyond the bound)
// has no mark and is read as before.
//
// Each mark is two 64-bit digests, 16 bytes with no pointers for the collector to follow,
// and at most maxAnchorMarks are kept (about 40 MiB at the bound; 0.6 MiB for 20,000
// pages). A digest collision (2⁻⁶⁴) would leave one document's anchors stale until the
// next refresh that finds them changed.
type anchorMarks struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64]uint64 // digest of the document's ID → digest of its anchors
}

const maxAnchorMarks = 1 << 21

func newAnchorMarks() *anchorMarks {
	return &anchorMarks{seed: maphash.MakeSeed(), m: map[uint64]uint64{}}
}

func (a *anchorMarks) anchorsDigest(anchors []string) uint64 {
	var h maphash.Hash
	h.SetSeed(a.seed)
	for _, s := range anchors {
		h.WriteString(s)
		h.WriteByte(0) // ["ab"] and ["a", "b"] differ
	}
	return h.Sum64()
}

// wrote records that the document id was written with anchors.
func (a *anchorMarks) wrote(id string, anchors []string) {
	k, v := maphash.String(a.seed, id), a.anchorsDigest(anchors)
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.m[k]; ok || len(a.m) < maxAnchorMarks {
		a.m[k] = v
	}
}

// forget drops the marks of ids (documents removed, or written by another way).
func (a *anchorMarks) forget(ids ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		delete(a.m, maphash.String(a.seed, id))
	}
}

// same reports whether the document id was last written with anchors.
func (a *anchorMarks) same(id string, anchors []string) bool {
	k, v := maphash.String(a.seed, id), a.anchorsDigest(anchors)
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.m[k]
	return ok && w == v
}
