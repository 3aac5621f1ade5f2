package inverted

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// posting is a posting as the tests' model keeps it.
type posting struct {
	doc, freq, length uint32
	pos               []uint32
}

// model is what a segment of pages must hold: field -> term -> postings in document order.
type model map[string]map[string][]posting

func (m model) add(doc uint32, p Page) {
	for _, f := range p.Fields {
		if len(f.Terms) == 0 {
			continue
		}
		if m[f.Name] == nil {
			m[f.Name] = map[string][]posting{}
		}
		at := 0
		for i, t := range f.Terms {
			var pos []uint32
			if f.Positions != nil {
				pos = f.Positions[at : at+int(f.Freqs[i])]
				at += int(f.Freqs[i])
			}
			m[f.Name][t] = append(m[f.Name][t], posting{doc, f.Freqs[i], f.Length, pos})
		}
	}
}

// randomPages makes n pages of a few fields over a vocabulary with shared prefixes,
// common terms (in more than a block of documents) and rare ones.
func randomPages(rng *rand.Rand, n int) []Page {
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%s%d", []string{"a", "ab", "abc", "b", "z", "ção", ""}[i%7], i*7919%100003)
	}
	vocab[1] = strings.Repeat("long", 100)
	pages := make([]Page, n)
	for d := range pages {
		var fields []Field
		for _, name := range []string{"body_en", "title_en", "anchors_en", "inurl"} {
			if rng.Intn(5) == 0 {
				continue // a page without this field
			}
			k := 1 + rng.Intn(map[string]int{"body_en": 300, "title_en": 8, "anchors_en": 20, "inurl": 6}[name])
			seen := map[string]bool{}
			f := Field{Name: name}
			for range k {
				// Zipf-like: low indexes are common.
				t := vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64()*rng.Float64())]
				if seen[t] {
					continue
				}
				seen[t] = true
				f.Terms = append(f.Terms, t)
				f.Freqs = append(f.Freqs, uint32(1+rng.Intn(3)*rng.Intn(3)))
			}
			if name != "anchors_en" {
				// positions: distinct and ascending per term, shuffled over the field
				perm := rng.Perm(int(sum(f.Freqs)) + 50)
				at := 0
				for _, fr := range f.Freqs {
					ps := make([]uint32, fr)
					for j := range ps {
						ps[j] = uint32(perm[at]) + 1
						at++
					}
					slices.Sort(ps)
					f.Positions = append(f.Positions, ps...)
				}
				f.Length = uint32(len(perm))
			} else {
				f.Length = sum(f.Freqs)
			}
			fields = append(fields, f)
		}
		pages[d] = Page{Fields: fields}
	}
	return pages
}

func sum(xs []uint32) uint32 {
	s := uint32(0)
	for _, x := range xs {
		s += x
	}
	return s
}

func build(t testing.TB, pages []Page) []byte {
	t.Helper()
	b := NewBuilder()
	for i, p := range pages {
		if err := b.Add(p); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkSegment compares every term of s with m, and looks up terms m lacks.
func checkSegment(t *testing.T, s *Segment, m model, docs int) {
	t.Helper()
	if s.Docs() != docs {
		t.Errorf("%d documents, want %d", s.Docs(), docs)
	}
	var names []string
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	if got := s.Fields(); !slices.Equal(got, names) {
		t.Fatalf("fields %v, want %v", got, names)
	}
	var l List
	for _, name := range names {
		terms := make([]string, 0, len(m[name]))
		for term := range m[name] {
			terms = append(terms, term)
		}
		slices.Sort(terms)
		it := s.Terms(name)
		for i := 0; it.Next(); i++ {
			if i >= len(terms) || string(it.Term()) != terms[i] || it.DocFreq() != len(m[name][terms[i]]) {
				t.Fatalf("%s: term %d is %q in %d documents, want %q", name, i, it.Term(), it.DocFreq(), terms[min(i, len(terms)-1)])
			}
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		if st := s.FieldStats(name); st.Terms != len(terms) {
			t.Errorf("%s: %d terms, want %d", name, st.Terms, len(terms))
		}
		for _, term := range terms {
			want := m[name][term]
			ok, err := s.Postings(name, []byte(term), true, &l)
			if err != nil || !ok {
				t.Fatalf("%s %q: %v %v", name, term, ok, err)
			}
			if len(l.Docs) != len(want) || len(l.Freqs) != len(want) || len(l.Lengths) != len(want) {
				t.Fatalf("%s %q: %d postings, want %d", name, term, len(l.Docs), len(want))
			}
			for i, w := range want {
				if l.Docs[i] != w.doc || l.Freqs[i] != w.freq || l.Lengths[i] != w.length {
					t.Fatalf("%s %q posting %d: doc %d freq %d length %d, want %+v", name, term, i, l.Docs[i], l.Freqs[i], l.Lengths[i], w)
				}
				var got []uint32
				if l.PosAt != nil {
					got = l.Pos[l.PosAt[i]:l.PosAt[i+1]]
				}
				if !slices.Equal(got, w.pos) {
					t.Fatalf("%s %q posting %d: positions %v, want %v", name, term, i, got, w.pos)
				}
			}
			// Without positions: the same postings, no positions.
			if ok, err := s.Postings(name, []byte(term), false, &l); !ok || err != nil || len(l.Docs) != len(want) || l.PosAt != nil {
				t.Fatalf("%s %q without positions: %d postings, positions %v (%v)", name, term, len(l.Docs), l.PosAt != nil, err)
			}
		}
		for _, absent := range []string{"", "\x00", terms[0] + "\x00", "zzzzzzzzzz", "ab", "abc"} {
			if _, has := m[name][absent]; has {
				continue
			}
			if ok, err := s.Postings(name, []byte(absent), true, &l); ok || err != nil {
				t.Errorf("%s: absent term %q found (%v)", name, absent, err)
			}
		}
	}
	if ok, err := s.Postings("nofield", []byte("a1"), true, &l); ok || err != nil {
		t.Errorf("a field the segment lacks: %v %v", ok, err)
	}
}

// TestBuildReadsBackEveryPosting: a segment built from pages gives back every term's
// postings (documents, frequencies, lengths, positions) as the pages had them, its
// dictionary lists every term once in byte order, and a page refused (a term twice, a
// frequency that does not match its positions) adds nothing.
func TestBuildReadsBackEveryPosting(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pages := randomPages(rng, 700)
	m := model{}
	b := NewBuilder()
	for i, p := range pages {
		if i%100 == 50 {
			bad := Page{Fields: []Field{
				{Name: "body_en", Length: 3, Terms: []string{"newterm" + fmt.Sprint(i), "dup", "dup"}, Freqs: []uint32{1, 1, 1}, Positions: []uint32{1, 2, 3}},
			}}
			if err := b.Add(bad); err == nil || !strings.Contains(err.Error(), `"dup" twice`) {
				t.Fatalf("a page with a term twice: %v", err)
			}
			for _, bad := range []Page{
				{Fields: []Field{{Name: "body_en", Length: 2, Terms: []string{"x"}, Freqs: []uint32{2}, Positions: []uint32{1}}}},
				{Fields: []Field{{Name: "body_en", Length: 2, Terms: []string{"x"}, Freqs: []uint32{2}, Positions: []uint32{3, 3}}}},
				{Fields: []Field{{Name: "anchors_en", Length: 1, Terms: []string{"x"}, Freqs: []uint32{1}, Positions: []uint32{1}}}},
				{Fields: []Field{{Name: "title_en", Length: 0, Terms: []string{"x"}, Freqs: []uint32{1}, Positions: []uint32{1}}}},
				{Fields: []Field{{Name: "a", Length: 1, Terms: []string{"x"}, Freqs: []uint32{1}}, {Name: "a"}}},
			} {
				if err := b.Add(bad); err == nil {
					t.Fatalf("page %+v accepted", bad)
				}
			}
		}
		if err := b.Add(p); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		m.add(uint32(i), p)
	}
	path := filepath.Join(t.TempDir(), "seg")
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m["body_en"]["a0"]); n <= blockSize {
		t.Fatalf("the commonest term is in %d documents: the test wants several blocks", n)
	}
	if len(m["body_en"]) <= 2*dictBlock {
		t.Fatalf("%d terms: the test wants several dictionary blocks", len(m["body_en"]))
	}
	checkSegment(t, s, m, len(pages))
}

// TestMergeEqualsOneBuild: merging segments, with deleted documents, writes byte for
// byte the segment built from the pages kept, in order.
func TestMergeEqualsOneBuild(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pages := randomPages(rng, 600)
	// a term and a field only in deleted documents
	pages[10].Fields = append(pages[10].Fields, Field{Name: "zonly", Length: 1, Terms: []string{"gone"}, Freqs: []uint32{1}})
	pages[11].Fields[0].Terms = append(pages[11].Fields[0].Terms, "onlydeleted")
	pages[11].Fields[0].Freqs = append(pages[11].Fields[0].Freqs, 1)
	if pages[11].Fields[0].Positions != nil {
		pages[11].Fields[0].Positions = append(pages[11].Fields[0].Positions, 100000)
	}
	parts := [][]Page{pages[:250], pages[250:251], pages[251:600]}
	var segs []*Segment
	for i, part := range parts {
		s, err := Read(fmt.Sprint("part", i), build(t, part))
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	del := []*roaring.Bitmap{roaring.BitmapOf(10, 11, 12, 200), nil, roaring.BitmapOf(0, 5, 348)}
	var kept []Page
	m := model{}
	for i, p := range pages {
		part, local := 0, i
		switch {
		case i >= 251:
			part, local = 2, i-251
		case i == 250:
			part, local = 1, 0
		}
		if del[part] != nil && del[part].Contains(uint32(local)) {
			continue
		}
		m.add(uint32(len(kept)), p)
		kept = append(kept, p)
	}
	want := build(t, kept)
	var merged bytes.Buffer
	n, err := Merge(&merged, segs, del)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(kept) {
		t.Fatalf("%d documents merged, want %d", n, len(kept))
	}
	s, err := Read("merged", merged.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkSegment(t, s, m, len(kept))
	if !bytes.Equal(merged.Bytes(), want) {
		t.Errorf("the merge wrote %d bytes, building the kept pages %d, not the same", merged.Len(), len(want))
	}
	// Without deletions, merging the parts again gives the whole build.
	var all bytes.Buffer
	if _, err := Merge(&all, segs, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(all.Bytes(), build(t, pages)) {
		t.Error("merging without deletions differs from building every page")
	}
}

// walk reads everything in data as a search and a merge would, and returns the first
// error.
func walk(name string, data []byte) error {
	s, err := Read(name, data)
	if err != nil {
		return err
	}
	var l List
	for _, f := range s.Fields() {
		if _, _, err := s.Lengths(f); err != nil {
			return err
		}
		it := s.Terms(f)
		for i := 0; it.Next(); i++ {
			if err := it.Postings(true, &l); err != nil {
				return err
			}
			if i%8 == 0 { // and a lookup in the dictionary, for some
				if _, err := s.Postings(f, it.Term(), true, &l); err != nil {
					return err
				}
			}
		}
		if it.Err() != nil {
			return it.Err()
		}
	}
	_, err = Merge(ioDiscard{}, []*Segment{s}, nil)
	return err
}

type ioDiscard struct{}

func (ioDiscard) Write(p []byte) (int, error) { return len(p), nil }

// fixChecksum makes data's checksum match its bytes (so that a damaged segment is read
// past Open's check).
func fixChecksum(data []byte) {
	if len(data) < trailerSize {
		return
	}
	at := len(data) - 8
	binary.LittleEndian.PutUint32(data[at:], crc32.Checksum(data[:at], castagnoli))
}

// TestDamagedSegment: every byte of a segment changed, and every length it could be
// cut to, gives an error that names the file and wraps ErrDamaged, never a panic; so
// does every byte changed with the checksum made to match, which the reader's own
// checks must catch or read through safely (the dictionary, the postings and the
// lengths are read whole, and merged).
func TestDamagedSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pages := randomPages(rng, 12)
	good := build(t, pages)
	if err := walk("good", good); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil && (!errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "seg.bad")) {
			t.Fatalf("%s: %v: not ErrDamaged naming the file", what, err)
		}
	}
	data := make([]byte, len(good))
	caught := 0
	step := max(1, len(good)/1000) // ~1,000 offsets spread over every region: seconds under -race
	for at := 0; at < len(good); at += step {
		for _, x := range []byte{0x01, 0xff} {
			copy(data, good)
			data[at] ^= x
			err := walk("seg.bad", data)
			if err == nil {
				t.Fatalf("byte %d ^ %#x: read as good", at, x)
			}
			check(fmt.Sprintf("byte %d ^ %#x", at, x), err)
			fixChecksum(data)
			err = walk("seg.bad", data)
			check(fmt.Sprintf("byte %d ^ %#x, checksum fixed", at, x), err)
			if err != nil {
				caught++
			}
		}
	}
	for n := 0; n < len(good); n += 1 + n/4 {
		check(fmt.Sprintf("cut to %d bytes", n), walk("seg.bad", good[:n]))
		if walk("seg.bad", good[:n]) == nil {
			t.Fatalf("cut to %d bytes: read as good", n)
		}
	}
	t.Logf("%d bytes; %d of the changes behind a fixed checksum caught by the reader's own checks", len(good), caught)
	if caught == 0 {
		t.Error("no change behind a fixed checksum was caught")
	}
}

// FuzzRead: any bytes, with a checksum that matches them, are read and merged without a
// panic, and an error is ErrDamaged naming the file.
func FuzzRead(f *testing.F) {
	rng := rand.New(rand.NewSource(4))
	f.Add(build(f, randomPages(rng, 3)))
	f.Add(build(f, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = slices.Clone(data)
		fixChecksum(data)
		if err := walk("fuzz.seg", data); err != nil && (!errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "fuzz.seg")) {
			t.Fatalf("%v: not ErrDamaged naming the file", err)
		}
	})
}

// TestMemoryBoundedByFile: a segment whose table says it has four billion documents,
// two of which have its one field, is read, looked up and merged with memory of the
// order of its file, not of its number of documents (what a damaged table could claim).
func TestMemoryBoundedByFile(t *testing.T) {
	const docs = 1<<32 - 1
	var buf bytes.Buffer
	sw := newWriter(&buf, docs)
	var lengths []byte
	for _, x := range []uint64{0, 3, docs - 2, 5} { // documents 0 and docs-1: (gap, length)
		lengths = binary.AppendUvarint(lengths, x)
	}
	fw := sw.field("f", false, lengths, 2, 8)
	var e termEncoder
	e.reset()
	e.add(0, 1, nil)
	e.add(docs-1, 2, nil)
	fw.term([]byte("term"), &e)
	fw.finish()
	if err := sw.close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := Read("big", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var l List
	if ok, err := s.Postings("f", []byte("term"), true, &l); !ok || err != nil ||
		!slices.Equal(l.Docs, []uint32{0, docs - 1}) || !slices.Equal(l.Lengths, []uint32{3, 5}) || !slices.Equal(l.Freqs, []uint32{1, 2}) {
		t.Fatalf("postings %+v (%v %v)", l, ok, err)
	}
	n, err := Merge(ioDiscard{}, []*Segment{s}, []*roaring.Bitmap{roaring.BitmapOf(7)})
	if err != nil || n != docs-1 {
		t.Fatalf("merged %d documents (%v), want %d", n, err, docs-1)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("reading and merging a %d-byte segment of %d documents allocated %d MiB", buf.Len(), uint64(docs), got>>20)
	}
}
