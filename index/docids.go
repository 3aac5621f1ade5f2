package index

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// docIDs holds a 64-bit digest of the ID of every document in the index: it lets a Sink
// drop at once the anchor refresh of a URL the index does not hold (Sink.Touch).
//
// Why: every new link of a crawl touches its target, and most targets are URLs not yet
// fetched. The sink kept each of them, string and all, until its refresh found nothing to
// rewrite, and a target fetched later is written with fresh anchors anyway. In a crawl of
// 37,765 pages of a 200,000-page web the set held every linked URL of the frontier, 125,000
// and more, and grew with the crawl (docs/benchmarks.md, issue 12).
//
// The set errs one way only: lacks(id) is true only if no document with id is in the index
// and none is being written. Digests are added when the index opens (every ID of the _id
// dictionary, which may still name documents deleted in a segment not yet merged), when a
// writer announces documents it is about to write (expect: a Sink does before it reads their
// anchors from the link graph), and by every Put; Delete removes them. So if a Touch finds an
// ID lacking after the link graph changed, the anchors a later write of that ID reads are
// newer than the change. A digest collision (2⁻⁶⁴) makes an ID look held: one refresh reads
// the index for nothing.
//
// A digest is 8 bytes with no pointer for the collector to follow, about 16 bytes with the
// map's overhead (3 MiB for 200,000 documents); beyond maxDocIDs the set gives up (lacks is
// then always false, as without it) rather than grow.
type docIDs struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64]struct{}
	full bool // more than maxDocIDs: the set no longer says which IDs the index lacks
}

const maxDocIDs = 1 << 21

func newDocIDs() *docIDs {
	return &docIDs{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}}
}

// add records ids as (about to be) in the index.
func (s *docIDs) add(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.full {
			return
		}
		s.m[maphash.String(s.seed, id)] = struct{}{}
		if len(s.m) > maxDocIDs {
			s.full, s.m = true, nil
		}
	}
}

// remove forgets ids (deleted from the index).
func (s *docIDs) remove(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.m, maphash.String(s.seed, id))
	}
}

// lacks reports whether the index certainly holds no document with id.
func (s *docIDs) lacks(id string) bool {
	k := maphash.String(s.seed, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		return false
	}
	_, ok := s.m[k]
	return !ok
}

// loadDocIDs fills ix.ids from the index's _id dictionary.
func (ix *Index) loadDocIDs() error {
	r, err := ix.reader()
	if err != nil {
		return err
	}
	defer r.Close()
	dict, err := r.FieldDict("_id")
	if err != nil {
		return fmt.Errorf("index: list document IDs: %w", err)
	}
	defer dict.Close()
	for {
		e, err := dict.Next()
		if err != nil {
			return fmt.Errorf("index: list document IDs: %w", err)
		}
		if e == nil {
			return nil
		}
		ix.ids.add(e.Term)
	}
}

// lacks implements docHolder: whether the index certainly holds no document with id (nil
// ids, on a read-only index: never certain).
func (ix *Index) lacks(id string) bool { return ix.ids != nil && ix.ids.lacks(id) }

// expect implements docHolder: documents with ids are about to be written.
func (ix *Index) expect(ids []string) {
	if ix.ids != nil {
		ix.ids.add(ids...)
	}
}
