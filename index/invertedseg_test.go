package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapx "github.com/blevesearch/zapx/v17"

	"github.com/sonda-search/sonda/index/inverted"
	"github.com/sonda-search/sonda/testweb"
)

// This file checks package inverted (sonda's own segments, not yet used by the index)
// against zap: the same analyzed pages, built both ways, must give the same postings.

// segmentPage is what a segment of package inverted is built from for a built document:
// its analyzed text fields' terms, frequencies, lengths and positions (all of them, as
// zap keeps them).
func segmentPage(b *built) inverted.Page {
	var p inverted.Page
	for _, f := range b.doc.Fields {
		af, ok := f.(*analyzedField)
		if !ok || len(af.freqs) == 0 {
			continue
		}
		fl := inverted.Field{Name: af.name, Length: uint32(af.length), Positions: []uint32{}}
		for term, tf := range af.freqs {
			fl.Terms = append(fl.Terms, term)
			fl.Freqs = append(fl.Freqs, uint32(tf.Frequency()))
			for _, loc := range tf.Locations {
				fl.Positions = append(fl.Positions, uint32(loc.Position))
			}
		}
		p.Fields = append(p.Fields, fl)
	}
	return p
}

// zapDocs readies built documents as scorch does before it builds a segment of them.
func zapDocs(bs []*built) []bindex.Document {
	docs := make([]bindex.Document, len(bs))
	for i, b := range bs {
		b.doc.AddIDField()
		b.doc.VisitFields(func(f bindex.Field) {
			if f.Options().IsIndexed() {
				f.Analyze()
			}
		})
		docs[i] = b.doc
	}
	return docs
}

// segmentTestPages builds n pages of Dragnet prose (skipping the test without the
// corpus), a fifth of them in languages other than English (their own fields).
func segmentTestPages(tb testing.TB, n int) []*built {
	tb.Helper()
	paras, err := testweb.LoadCorpus(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold"))
	if err != nil {
		tb.Skip("no Dragnet corpus in the shared test data:", err)
	}
	rng := rand.New(rand.NewSource(7))
	langs := []string{"en", "en", "en", "en", "pt", "en", "es", "en", "fr", "de"}
	bs := make([]*built, n)
	for i := range bs {
		d := prosePage(rng, paras, i, langs[i%len(langs)])
		if bs[i], err = build(d); err != nil {
			tb.Fatal(err)
		}
	}
	return bs
}

// TestInvertedSegmentMatchesZap: the pages of a Dragnet web built into one zap segment
// (as scorch builds it, read back from its file) and into one segment of package
// inverted give, for every text field and every term, the same documents, frequencies,
// lengths (zap's norms) and positions, read from zap through decodePostings, the
// search's decoder; and the same terms, none more.
func TestInvertedSegmentMatchesZap(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	bs := segmentTestPages(t, n)
	dir := t.TempDir()
	sb := builderOf(t, bs)
	ours := filepath.Join(dir, "sonda.seg")
	if err := sb.WriteFile(ours); err != nil {
		t.Fatal(err)
	}
	seg, err := inverted.Open(ours)
	if err != nil {
		t.Fatal(err)
	}
	zs, _, err := (&zapx.ZapPlugin{}).New(zapDocs(bs))
	if err != nil {
		t.Fatal(err)
	}
	zpath := filepath.Join(dir, "zap.zap")
	if err := zapx.PersistSegmentBase(zs.(*zapx.SegmentBase), zpath); err != nil {
		t.Fatal(err)
	}
	zs.Close()
	z, err := (&zapx.ZapPlugin{}).Open(zpath)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if z.Count() != uint64(seg.Docs()) {
		t.Fatalf("zap has %d documents, sonda's segment %d", z.Count(), seg.Docs())
	}
	// The text fields: those zap has terms in (the others are keywords, dates and numbers,
	// which sonda's segments do not hold yet).
	text := map[string]bool{fieldURL: true}
	for _, l := range append(slices.Clone(Languages), neutral) {
		for _, f := range textFields {
			text[langField(f, l)] = true
		}
	}
	var fields []string
	for _, f := range z.Fields() {
		if text[f] {
			if d, err := z.Dictionary(f); err == nil && d.(*zapx.Dictionary).Cardinality() > 0 {
				fields = append(fields, f)
			}
		}
	}
	slices.Sort(fields)
	if got := seg.Fields(); !slices.Equal(got, fields) {
		t.Fatalf("sonda's segment has fields %v, zap's text fields with terms are %v", got, fields)
	}
	var l inverted.List
	terms, postings, positions := 0, 0, 0
	for _, field := range fields {
		dict, err := z.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		ours := seg.Terms(field)
		it := dict.AutomatonIterator(nil, nil, nil)
		for {
			de, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if de == nil {
				break
			}
			term := de.Term
			if !ours.Next() || string(ours.Term()) != term {
				t.Fatalf("%s: zap's next term is %q, sonda's %q (%v)", field, term, ours.Term(), ours.Err())
			}
			pl, err := dict.PostingsList([]byte(term), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodePostings(pl, true)
			if err != nil {
				t.Fatal(err)
			}
			if want == uncached || want == absent {
				t.Fatalf("%s %q: zap's postings do not fit decodedList (%v)", field, term, want == absent)
			}
			if ok, err := seg.Postings(field, []byte(term), true, &l); !ok || err != nil {
				t.Fatalf("%s %q: not in sonda's segment (%v)", field, term, err)
			}
			equalPostings(t, field, term, want, &l)
			terms++
			postings += len(l.Docs)
			positions += len(l.Pos)
		}
		if ours.Next() {
			t.Fatalf("%s: sonda's segment has %q after zap's last term", field, ours.Term())
		}
		if ours.Err() != nil {
			t.Fatal(ours.Err())
		}
	}
	if terms < 1000 || postings < 100*n {
		t.Fatalf("only %d terms and %d postings compared", terms, postings)
	}
	ozs, _ := os.Stat(zpath)
	oss, _ := os.Stat(ours)
	t.Logf("%d pages: %d terms, %d postings, %d positions the same; zap's file %d bytes (all fields), sonda's %d (text fields)",
		n, terms, postings, positions, ozs.Size(), oss.Size())
}

// builderOf returns a builder of package inverted with bs added, in order.
func builderOf(tb testing.TB, bs []*built) *inverted.Builder {
	tb.Helper()
	b := inverted.NewBuilder()
	for _, x := range bs {
		if err := b.Add(segmentPage(x)); err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

// equalPostings fails t unless got (sonda's segment) has want's postings (zap's).
func equalPostings(t *testing.T, field, term string, want *decodedList, got *inverted.List) {
	t.Helper()
	if !slices.Equal(got.Docs, want.docs) {
		t.Fatalf("%s %q: documents %v, zap's %v", field, term, got.Docs, want.docs)
	}
	for i := range want.docs {
		freq, norm := want.posting(i)
		if uint64(got.Freqs[i]) != freq || uint64(got.Lengths[i]) != norm {
			t.Fatalf("%s %q document %d: frequency %d length %d, zap's %d and %d", field, term, want.docs[i], got.Freqs[i], got.Lengths[i], freq, norm)
		}
		gp, wp := got.Pos[got.PosAt[i]:got.PosAt[i+1]], want.positions(i)
		if len(gp) != len(wp) {
			t.Fatalf("%s %q document %d: positions %v, zap's %v", field, term, want.docs[i], gp, wp)
		}
		for k := range wp {
			if gp[k] != uint32(wp[k]) {
				t.Fatalf("%s %q document %d: positions %v, zap's %v", field, term, want.docs[i], gp, wp)
			}
		}
	}
}

// textOnlyDoc is x's document for zap with its analyzed text fields only (and its ID):
// the postings a segment of package inverted holds.
func textOnlyDoc(x *built) bindex.Document {
	d := document.NewDocument(x.doc.ID())
	for _, f := range x.doc.Fields {
		if af, ok := f.(*analyzedField); ok && len(af.freqs) > 0 {
			d.AddField(af)
		}
	}
	d.AddIDField()
	return d
}

// BenchmarkSegmentBuild builds one segment of the same pages of prose (already analyzed:
// what the crawl's documents hold) with zap, as scorch does for a batch, and with
// package inverted, and reports the CPU (the process's, garbage collection included)
// and the bytes of segment per page. zap's segment also holds the keyword, date and
// numeric fields and the stored text, so its bytes per page are given apart: the
// postings of the text fields alone are what compares (see docs/benchmarks.md, issue
// 12). Run it with
//
//	go test -run XXX -bench SegmentBuild -benchtime 3x ./index
//
// SONDA_BENCH_DOCS changes the number of pages (default 2,000).
func BenchmarkSegmentBuild(b *testing.B) {
	n := 2000
	if s := os.Getenv("SONDA_BENCH_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bs := segmentTestPages(b, n)
	docs := zapDocs(bs)
	pages := make([]inverted.Page, len(bs))
	for i, x := range bs {
		pages[i] = segmentPage(x)
	}
	// zap's segment of the text fields only: the same postings as sonda's.
	textOnly := make([]bindex.Document, len(bs))
	for i, x := range bs {
		textOnly[i] = textOnlyDoc(x)
	}
	zapRun := func(docs []bindex.Document) func(b *testing.B) {
		return func(b *testing.B) {
			size := 0
			cpu0 := cpuTime()
			for b.Loop() {
				s, _, err := (&zapx.ZapPlugin{}).New(docs)
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if _, err := s.(*zapx.SegmentBase).WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
				s.Close()
			}
			b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
			b.ReportMetric(float64(size)/float64(n), "bytes/page")
		}
	}
	b.Run("zap", zapRun(docs))
	b.Run("zap-text", zapRun(textOnly))
	b.Run("sonda", func(b *testing.B) {
		size := 0
		cpu0 := cpuTime()
		for b.Loop() {
			sb := inverted.NewBuilder()
			for _, p := range pages {
				if err := sb.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if _, err := sb.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			size = buf.Len()
		}
		b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
		b.ReportMetric(float64(size)/float64(n), "bytes/page")
	})
}

// BenchmarkSegmentMerge merges eight segments of the same pages of prose (text fields
// only; a tenth of each segment's documents deleted, and none: zap then copies each
// posting's bytes) into one, with zap (as scorch's
// merges do, into a file) and with package inverted, and reports the CPU per page
// merged. Run it with
//
//	go test -run XXX -bench SegmentMerge -benchtime 3x ./index
//
// SONDA_BENCH_DOCS changes the number of pages (default 2,000).
func BenchmarkSegmentMerge(b *testing.B) {
	n := 2000
	if s := os.Getenv("SONDA_BENCH_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bs := segmentTestPages(b, n)
	const parts = 8
	dir := b.TempDir()
	var zsegs []segment.Segment
	var ssegs []*inverted.Segment
	var drops []*roaring.Bitmap
	for p := range parts {
		part := bs[p*n/parts : (p+1)*n/parts]
		docs := make([]bindex.Document, len(part))
		sb := inverted.NewBuilder()
		drop := roaring.New()
		for i, x := range part {
			docs[i] = textOnlyDoc(x)
			if err := sb.Add(segmentPage(x)); err != nil {
				b.Fatal(err)
			}
			if i%10 == 0 {
				drop.Add(uint32(i))
			}
		}
		drops = append(drops, drop)
		zs, _, err := (&zapx.ZapPlugin{}).New(docs)
		if err != nil {
			b.Fatal(err)
		}
		zpath := filepath.Join(dir, fmt.Sprintf("%d.zap", p))
		if err := zapx.PersistSegmentBase(zs.(*zapx.SegmentBase), zpath); err != nil {
			b.Fatal(err)
		}
		zs.Close()
		z, err := (&zapx.ZapPlugin{}).Open(zpath)
		if err != nil {
			b.Fatal(err)
		}
		defer z.Close()
		zsegs = append(zsegs, z)
		spath := filepath.Join(dir, fmt.Sprintf("%d.seg", p))
		if err := sb.WriteFile(spath); err != nil {
			b.Fatal(err)
		}
		s, err := inverted.Open(spath)
		if err != nil {
			b.Fatal(err)
		}
		ssegs = append(ssegs, s)
	}
	for _, del := range []struct {
		name  string
		drops []*roaring.Bitmap
	}{{"", drops}, {"-nodeletions", make([]*roaring.Bitmap, parts)}} {
		b.Run("zap"+del.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				out := filepath.Join(dir, "merged.zap")
				if _, _, err := (&zapx.ZapPlugin{}).Merge(zsegs, del.drops, out, nil, nil); err != nil {
					b.Fatal(err)
				}
				os.Remove(out)
			}
			b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
		})
		b.Run("sonda"+del.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				out := filepath.Join(dir, "merged.seg")
				if _, err := inverted.MergeFile(out, ssegs, del.drops); err != nil {
					b.Fatal(err)
				}
				os.Remove(out)
			}
			b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
		})
	}
}

// BenchmarkPageIndexCost is the index's CPU per page on the crawl's path, both ways, for
// the same pages of prose: "analysis" is what both share, building each document
// (sonda's analysis, the forward list, Bleve's document); "bleve" builds each document
// and a zap segment per batch of 256, as the sink does now (scorch's merges are not
// counted: BenchmarkSegmentMerge); "sonda" builds each document, appends its analyzed text fields to a run (a file of records:
// per field its name, length, terms, frequencies and positions as uvarints; a stand-in
// for the run file of docs/benchmarks.md's plan) and adds it to a segment of package
// inverted, written once at the end (its merges not counted either). Run it with
//
//	go test -run XXX -bench PageIndexCost -benchtime 3x ./index
//
// SONDA_BENCH_DOCS changes the number of pages (default 2,000).
func BenchmarkPageIndexCost(b *testing.B) {
	n := 2000
	if s := os.Getenv("SONDA_BENCH_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	paras, err := testweb.LoadCorpus(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold"))
	if err != nil {
		b.Skip("no Dragnet corpus in the shared test data:", err)
	}
	rng := rand.New(rand.NewSource(7))
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = prosePage(rng, paras, i, "en")
	}
	b.Run("analysis", func(b *testing.B) { // what both ways share
		cpu0 := cpuTime()
		for b.Loop() {
			for _, d := range docs {
				if _, err := build(d); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
	})
	b.Run("bleve", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			batch := make([]*built, 0, 256)
			for i, d := range docs {
				x, err := build(d)
				if err != nil {
					b.Fatal(err)
				}
				if batch = append(batch, x); len(batch) == cap(batch) || i == n-1 {
					s, _, err := (&zapx.ZapPlugin{}).New(zapDocs(batch))
					if err != nil {
						b.Fatal(err)
					}
					var buf bytes.Buffer
					if _, err := s.(*zapx.SegmentBase).WriteTo(&buf); err != nil {
						b.Fatal(err)
					}
					s.Close()
					batch = batch[:0]
				}
			}
		}
		b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
	})
	b.Run("sonda", func(b *testing.B) {
		run, err := os.Create(filepath.Join(b.TempDir(), "run"))
		if err != nil {
			b.Fatal(err)
		}
		defer run.Close()
		runBytes := 0
		cpu0 := cpuTime()
		for b.Loop() {
			sb := inverted.NewBuilder()
			var rec []byte
			for _, d := range docs {
				x, err := build(d)
				if err != nil {
					b.Fatal(err)
				}
				p := segmentPage(x)
				rec = appendRunRecord(rec, p)
				if len(rec) >= 1<<20 {
					if _, err := run.Write(rec); err != nil {
						b.Fatal(err)
					}
					runBytes += len(rec)
					rec = rec[:0]
				}
				if err := sb.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := run.Write(rec); err != nil {
				b.Fatal(err)
			}
			runBytes += len(rec)
			if _, err := sb.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N*n), "ms-CPU/page")
		b.ReportMetric(float64(runBytes)/float64(b.N*n), "run-bytes/page")
	})
}

// appendRunRecord appends p's fields to b as uvarints: the stand-in run record of
// BenchmarkPageIndexCost.
func appendRunRecord(b []byte, p inverted.Page) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.Fields)))
	for _, f := range p.Fields {
		b = binary.AppendUvarint(b, uint64(len(f.Name)))
		b = append(b, f.Name...)
		b = binary.AppendUvarint(b, uint64(f.Length))
		b = binary.AppendUvarint(b, uint64(len(f.Terms)))
		at := 0
		for i, t := range f.Terms {
			b = binary.AppendUvarint(b, uint64(len(t)))
			b = append(b, t...)
			b = binary.AppendUvarint(b, uint64(f.Freqs[i]))
			prev := uint32(0)
			for _, pos := range f.Positions[at : at+int(f.Freqs[i])] {
				b = binary.AppendUvarint(b, uint64(pos-prev))
				prev = pos
			}
			at += int(f.Freqs[i])
		}
	}
	return b
}
