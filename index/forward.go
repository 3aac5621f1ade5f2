package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
)

// This file is each document's forward term list: for each of its text fields, the
// field's analyzed length and every distinct term with its frequency, stored with the
// document (as Lucene's term vectors are), so that what one document holds is one read.
//
// Why: pseudo-relevance feedback (feedback.go) scores the best Window matches of a query
// with ten words its best pages share. Those words are common, and reading their
// frequencies in two hundred documents through the postings walked each word's whole
// postings list (Bleve's zap decodes a postings list's frequencies one posting at a time
// up to the document asked), so feedback cost about as much as a second query of ten
// common words: 43 % of a search's CPU on 100,000 pages. From the forward lists it costs
// two hundred stored-field reads, whatever the words' document frequencies. The model
// itself is built from its ten pages' lists too, instead of analyzing their text again.
//
// Encoding (stored field fieldTerms): a version byte, the analyzer language (uvarint
// length, bytes), then one section per text field that has terms: the field's index in
// textFields (one byte), its analyzed length (the number of tokens, as Bleve's norm
// counts them) and the section's byte length (uvarints), then the section: the number of
// restart points (uvarint), each one's offset in the entries (4 bytes, little-endian), and
// the entries: the field's distinct terms in byte order, each as the length of the prefix
// it shares with the previous term, the rest (uvarint length, bytes) and its frequency
// (uvarint). Every forwardRestart-th term is a restart point and shares nothing, so a
// term is found by a binary search over the restart points and a scan of at most
// forwardRestart entries, as in LevelDB's blocks: a page has hundreds of distinct terms
// and feedback looks for ten. Sorted, front-coded terms take about half the bytes of the
// words themselves.
const (
	fieldTerms     = "terms"
	forwardVersion = 1
	forwardRestart = 16
)

// forwardBuilder builds one document's forward term list.
type forwardBuilder struct {
	buf []byte
}

// forwardScratch holds the terms being sorted, for the length of one add: a builder lives
// for one document, and growing a new slice for each page's body was a sixth of add's CPU.
var forwardScratch = sync.Pool{New: func() any { return new([]forwardTerm) }}

// forwardTerm is a term being sorted, with its first eight bytes as a big-endian number
// (zero-padded), so that most comparisons are of two integers rather than of two strings
// in memory: slices.Sort of the strings was half of add's CPU (2.5 of 4.9 s in a
// 20,000-page crawl).
type forwardTerm struct {
	key  uint64
	term string
	freq int
}

func (a forwardTerm) compare(b forwardTerm) int {
	switch {
	case a.key < b.key:
		return -1
	case a.key > b.key:
		return 1
	}
	return strings.Compare(a.term, b.term) // the same first eight bytes (or padding)
}

func termKey(t string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(t) {
			k |= uint64(t[i])
		}
	}
	return k
}

func newForwardBuilder(lang string) *forwardBuilder {
	f := &forwardBuilder{}
	f.buf = append(f.buf, forwardVersion)
	f.buf = binary.AppendUvarint(f.buf, uint64(len(lang)))
	f.buf = append(f.buf, lang...)
	return f
}

// add records the terms of text field textFields[field], as analyzed for the index.
func (f *forwardBuilder) add(field int, a *analyzedField) {
	if len(a.freqs) == 0 {
		return
	}
	scratch := forwardScratch.Get().(*[]forwardTerm)
	sorted := slices.Grow((*scratch)[:0], len(a.freqs))
	defer func() {
		clear(sorted) // the pool must not keep a page's terms alive
		*scratch = sorted[:0]
		forwardScratch.Put(scratch)
	}()
	for t, tf := range a.freqs {
		sorted = append(sorted, forwardTerm{termKey(t), t, tf.Frequency()})
	}
	slices.SortFunc(sorted, forwardTerm.compare)
	// Sized once: an entry is at most its term and three one-byte uvarints unless a term
	// is longer than 127 bytes or occurs more often (then append grows it).
	entries := make([]byte, 0, a.termBytes+3*len(sorted))
	restarts := make([]uint32, 0, (len(sorted)+forwardRestart-1)/forwardRestart)
	prev := ""
	for i, ft := range sorted {
		t := ft.term
		shared := 0
		if i%forwardRestart == 0 {
			restarts = append(restarts, uint32(len(entries)))
		} else {
			for shared < len(prev) && shared < len(t) && prev[shared] == t[shared] {
				shared++
			}
		}
		entries = binary.AppendUvarint(entries, uint64(shared))
		entries = binary.AppendUvarint(entries, uint64(len(t)-shared))
		entries = append(entries, t[shared:]...)
		entries = binary.AppendUvarint(entries, uint64(ft.freq))
		prev = t
	}
	head := binary.MaxVarintLen64 + 4*len(restarts)
	f.buf = slices.Grow(f.buf, 1+2*binary.MaxVarintLen64+head+len(entries))
	f.buf = append(f.buf, byte(field))
	f.buf = binary.AppendUvarint(f.buf, uint64(a.length))
	head = uvarintLen(uint64(len(restarts))) + 4*len(restarts)
	f.buf = binary.AppendUvarint(f.buf, uint64(head+len(entries)))
	f.buf = binary.AppendUvarint(f.buf, uint64(len(restarts)))
	for _, r := range restarts {
		f.buf = binary.LittleEndian.AppendUint32(f.buf, r)
	}
	f.buf = append(f.buf, entries...)
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// forwardList is a decoded view of a stored forward term list.
type forwardList struct {
	lang     string
	sections []byte // the sections, undecoded
}

var errForward = errors.New("index: a malformed forward term list")

// parseForward reads a stored forward term list (forwardLists passes on only lists of
// this version: one written by a later sonda goes the postings' way).
func parseForward(b []byte) (forwardList, error) {
	if len(b) == 0 || b[0] != forwardVersion {
		return forwardList{}, fmt.Errorf("%w (version %v)", errForward, b[:min(len(b), 1)])
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || uint64(len(b)-1-k) < n {
		return forwardList{}, errForward
	}
	at := 1 + k
	return forwardList{lang: string(b[at : at+int(n)]), sections: b[at+int(n):]}, nil
}

// forwardSection is one text field of a forward term list.
type forwardSection struct {
	field    int    // index in textFields
	length   int    // analyzed length
	restarts []byte // offsets in entries, 4 bytes each
	entries  []byte // front-coded terms
}

// eachSection calls fn with each field's section, in the order they were stored.
func (l forwardList) eachSection(fn func(s forwardSection) error) error {
	b := l.sections
	for len(b) > 0 {
		field := int(b[0])
		length, k := binary.Uvarint(b[1:])
		if k <= 0 {
			return errForward
		}
		size, k2 := binary.Uvarint(b[1+k:])
		at := 1 + k + k2
		if k2 <= 0 || uint64(len(b)-at) < size || field >= len(textFields) {
			return errForward
		}
		body := b[at : at+int(size)]
		b = b[at+int(size):]
		n, k3 := binary.Uvarint(body)
		if k3 <= 0 || n > uint64(len(body)-k3)/4 {
			return errForward
		}
		sec := forwardSection{field: field, length: int(length), restarts: body[k3 : k3+4*int(n)], entries: body[k3+4*int(n):]}
		if err := fn(sec); err != nil {
			return err
		}
	}
	return nil
}

// entry decodes the entry at b following term prev (the buffer it is decoded into),
// returning the term, its frequency and the rest of the entries.
func nextEntry(b, prev []byte) (term []byte, tf int, rest []byte, err error) {
	// Most entries: the shared length, the rest's length and the frequency each one byte.
	if len(b) >= 3 && b[0] < 0x80 && b[1] < 0x80 {
		shared, n := int(b[0]), int(b[1])
		if shared <= len(prev) && len(b)-2 > n && b[2+n] < 0x80 {
			return append(prev[:shared], b[2:2+n]...), int(b[2+n]), b[3+n:], nil
		}
	}
	shared, k1 := binary.Uvarint(b)
	if k1 <= 0 {
		return prev, 0, nil, errForward
	}
	n, k2 := binary.Uvarint(b[k1:])
	at := k1 + k2
	if k2 <= 0 || shared > uint64(len(prev)) || uint64(len(b)-at) < n {
		return prev, 0, nil, errForward
	}
	term = append(prev[:shared], b[at:at+int(n)]...)
	b = b[at+int(n):]
	f, k3 := binary.Uvarint(b)
	if k3 <= 0 {
		return term, 0, nil, errForward
	}
	return term, int(f), b[k3:], nil
}

// eachTerm calls fn with each term of the section, in byte order, and its frequency.
// term is valid only during the call; scratch is a buffer to decode into, returned for
// reuse.
func (s forwardSection) eachTerm(scratch []byte, fn func(term []byte, tf int)) ([]byte, error) {
	b := s.entries
	term := scratch[:0]
	for len(b) > 0 {
		var tf int
		var err error
		if term, tf, b, err = nextEntry(b, term); err != nil {
			return term, err
		}
		fn(term, tf)
	}
	return term, nil
}

// find calls found(j, freq) for each of terms, sorted in byte order, that the section
// has, with its frequency; scratch is a buffer to decode into, returned for reuse. The
// section is read forward once: for each term, a binary search over the restart points
// from where the last term was found, then a scan of at most forwardRestart entries — or
// none, when the term is further in the block already being read (feedback looks for its
// ten words in every field of two hundred documents; most fields have a few dozen terms).
//
// The scan compares no whole terms: it keeps how many leading bytes the entry at the
// cursor shares with the term looked for (m, the entry being before it), and an entry that
// shares fewer bytes with the one before (its front coding's shared length, the longest
// a builder writes) is past the term, one that shares more is before it, and only one that
// shares exactly m is compared, from byte m on (compareFrom). The comparisons of whole
// terms through the runtime were half of find's CPU.
func (s forwardSection) find(terms []string, scratch []byte, found func(j, freq int)) ([]byte, error) {
	n := len(s.restarts) / 4
	if n == 0 {
		return scratch, nil
	}
	restart := func(i int) (int, error) {
		at := binary.LittleEndian.Uint32(s.restarts[4*i:])
		if uint64(at) >= uint64(len(s.entries)) {
			return 0, errForward
		}
		return int(at), nil
	}
	// The cursor: the entry at start, decoded (term t, frequency tf), the entries after it
	// in rest; start is -1 before the first decode.
	t, tf, start := scratch[:0], 0, -1
	var rest []byte
	block := 0 // the restart point the binary searches start from
	for j, term := range terms {
		// The last restart point whose term is at most term.
		lo, hi := block, n // the answer is in [lo-1, hi)
		for lo < hi {
			mid := (lo + hi) / 2
			at, err := restart(mid)
			if err != nil {
				return t, err
			}
			// A restart point's term shares nothing: it is read in place.
			b := s.entries[at:]
			var key []byte
			if len(b) >= 2 && b[0] == 0 && b[1] < 0x80 && len(b)-2 >= int(b[1]) {
				key = b[2 : 2+int(b[1])] // most terms: lengths of one byte
			} else {
				shared, k1 := binary.Uvarint(b)
				m, k2 := binary.Uvarint(b[max(k1, 0):])
				if k1 <= 0 || k2 <= 0 || shared != 0 || uint64(len(b)-k1-k2) < m {
					return t, errForward
				}
				key = b[k1+k2 : k1+k2+int(m)]
			}
			if c, _ := compareFrom(key, term, 0); c <= 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo == 0 {
			continue // before the first term
		}
		block = lo - 1
		at, err := restart(block)
		if err != nil {
			return t, err
		}
		if start < at { // the cursor is before that block: move to it
			t, rest, start = t[:0], s.entries[at:], at
			if t, tf, rest, err = nextEntry(rest, t); err != nil {
				return t, err
			}
		}
		// The entries after the cursor up to the next restart point are in this block, and
		// that point's term is past term: the scan ends there at the latest.
		c, m := compareFrom(t, term, 0)
		for c < 0 && len(rest) > 0 {
			start = len(s.entries) - len(rest)
			var shared int
			if b := rest; len(b) >= 3 && b[0] < 0x80 && b[1] < 0x80 && int(b[0]) <= len(t) && len(b)-2 > int(b[1]) && b[2+int(b[1])] < 0x80 {
				// Most entries: nextEntry's common case, inline.
				shared = int(b[0])
				k := int(b[1])
				t, tf, rest = append(t[:shared], b[2:2+k]...), int(b[2+k]), b[3+k:]
			} else {
				x, k := binary.Uvarint(rest)
				if k <= 0 {
					return t, errForward
				}
				shared = int(min(x, uint64(len(t)+1)))
				if t, tf, rest, err = nextEntry(rest, t); err != nil {
					return t, err
				}
			}
			switch {
			case shared < m:
				c = 1 // it differs from the last where the last had term's byte: past term
			case shared == m:
				c, m = compareFrom(t, term, m)
			}
			// shared > m: it has the last's byte m, below term's: still before term
		}
		if c == 0 {
			found(j, tf)
		}
	}
	return t, nil
}

// compareFrom compares a with b as bytes.Compare does, knowing that their first from bytes
// are equal, and returns how many leading bytes they share.
func compareFrom(a []byte, b string, from int) (c, shared int) {
	i := from
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i < len(a) && i < len(b):
		if a[i] < b[i] {
			return -1, i
		}
		return 1, i
	case len(a) < len(b):
		return -1, i
	case len(a) > len(b):
		return 1, i
	}
	return 0, i
}

// forwardLists calls fn with the stored forward term list of each of docs, in order, read
// from snapshot r, from cache when it holds the document's segment (forwardcache.go; nil:
// none); ok is false for a document stored without one (indexed before lists were stored)
// or with one of another version, and for every document when r is not a snapshot of
// segments. The list passed to fn is valid only during the call.
func forwardLists(r bindex.IndexReader, cache *forwardCache, docs []collectedHit, fn func(i int, list forwardList, ok bool) error) error {
	if cr, isCounts := r.(*countsReader); isCounts {
		r = cr.IndexReader
	}
	snap, isSnap := r.(*scorch.IndexSnapshot)
	if !isSnap {
		for i := range docs {
			if err := fn(i, forwardList{}, false); err != nil {
				return err
			}
		}
		return nil
	}
	segs := snap.Segments()
	offsets := make([]uint64, len(segs)+1)
	for i, s := range segs {
		offsets[i+1] = offsets[i] + s.Segment().Count()
	}
	held := make([]*segmentLists, len(segs)) // the cache's, asked for once per segment
	asked := make([]bool, len(segs))
	for i, d := range docs {
		n := d.doc
		si, _ := slices.BinarySearch(offsets, n+1) // the first offset past n, minus one
		si--
		if si < 0 || si >= len(segs) {
			return fmt.Errorf("index: document number %d is beyond the index's %d", n, offsets[len(segs)])
		}
		found := false
		var ferr error
		// visit passes the stored value of the document's list on to fn.
		visit := func(value []byte) {
			if len(value) > 0 && value[0] == forwardVersion {
				var list forwardList
				if list, ferr = parseForward(value); ferr == nil {
					found = true
					ferr = fn(i, list, true)
				}
			}
		}
		if !asked[si] {
			held[si], asked[si] = cache.lists(snap, segs, si), true
		}
		if sl := held[si]; sl != nil {
			visit(sl.list(n - offsets[si]))
		} else {
			err := segs[si].Segment().VisitStoredFields(n-offsets[si], func(field string, _ byte, value []byte, _ []uint64) bool {
				if field != fieldTerms {
					return true
				}
				visit(value)
				return false
			})
			if err != nil {
				return fmt.Errorf("index: read a forward term list: %w", err)
			}
		}
		if ferr != nil {
			return ferr
		}
		if !found {
			if err := fn(i, forwardList{}, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldLength is the length BM25F normalizes a field's frequencies by, from its analyzed
// length: the index keeps a field's norm as a float32 1/√length (zap's Posting.Norm), and
// the scorer reads the length back from that, so this rounds alike and gives the same
// scores to the last bit.
func fieldLength(n int) float64 {
	if n <= 0 {
		return 1
	}
	norm := float64(float32(1 / math.Sqrt(float64(n))))
	return 1 / (norm * norm)
}
