package index

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/sonda-search/sonda/testweb"
)

// TestAnalyzedFieldMatchesBleve checks that a field sonda analyzes itself gives Bleve the
// same terms, frequencies and positions as Bleve's own text field with the same analyzer,
// and no offsets.
func TestAnalyzedFieldMatchesBleve(t *testing.T) {
	texts := []struct{ code, text string }{
		{"en", "The boundary layer of the boundary: a layer on a layer. The end, the END."},
		{"en", "the of and a"}, // stop words only: no field
		{"en", ""},
		{"es", "Los niños corrían por el parque; el parque estaba lleno de niños."},
		{"fr", "L'été dernier, à Paris, il a fait très chaud — très, très chaud."},
		{"pt", "Ação e reação: a ação de agir, a reação ao agir."},
		{neutral, "www example org manual pdf 2026 Zürich Москва 東京 東京"},
	}
	if paras, err := testweb.LoadCorpus(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold")); err == nil {
		for i := 0; i < len(paras) && i < 400; i += 7 {
			texts = append(texts, struct{ code, text string }{"en", paras[i]})
		}
	} else {
		t.Log("no Dragnet corpus in the shared test data; checking the small texts only:", err)
	}
	for _, tc := range texts {
		got := newAnalyzedField("body_"+tc.code, tc.code, tc.text, []byte(tc.text))
		want := document.NewTextFieldCustom("body_"+tc.code, nil, []byte(tc.text), textOptions, analyzerFor(tc.code))
		want.Analyze()
		if want.AnalyzedLength() == 0 {
			if got != nil {
				t.Errorf("%.40q: a field with %d terms, Bleve's has none", tc.text, got.AnalyzedLength())
			}
			continue
		}
		if got == nil {
			t.Errorf("%.40q: no field, Bleve's has %d terms", tc.text, want.AnalyzedLength())
			continue
		}
		if got.AnalyzedLength() != want.AnalyzedLength() {
			t.Errorf("%.40q: length %d, Bleve's %d", tc.text, got.AnalyzedLength(), want.AnalyzedLength())
		}
		if got.Options() != want.Options() || got.Name() != want.Name() || string(got.Value()) != string(want.Value()) {
			t.Errorf("%.40q: name, options or value differ from Bleve's field", tc.text)
		}
		gf, wf := got.AnalyzedTokenFrequencies(), want.AnalyzedTokenFrequencies()
		if len(gf) != len(wf) {
			t.Errorf("%.40q: %d distinct terms, Bleve has %d", tc.text, len(gf), len(wf))
		}
		for term, w := range wf {
			g := gf[term]
			if g == nil {
				t.Errorf("%.40q: term %q missing", tc.text, term)
				continue
			}
			if string(g.Term) != string(w.Term) || g.Frequency() != w.Frequency() || len(g.Locations) != len(w.Locations) {
				t.Errorf("%.40q: term %q: %q ×%d at %d places, Bleve %q ×%d at %d", tc.text, term,
					g.Term, g.Frequency(), len(g.Locations), w.Term, w.Frequency(), len(w.Locations))
				continue
			}
			for i := range w.Locations {
				g, w := g.Locations[i], w.Locations[i]
				// The same positions as Bleve's; no offsets (newAnalyzedField says why).
				if g.Start != 0 || g.End != 0 || g.Position != w.Position || g.Field != w.Field || len(g.ArrayPositions)+len(w.ArrayPositions) != 0 {
					t.Errorf("%.40q: term %q location %d: %+v, Bleve %+v", tc.text, term, i, *g, *w)
				}
			}
		}
		// Scorch budgets a batch's memory by Size: it must stay of the order of Bleve's.
		if gs, ws := got.Size(), want.Size(); gs < ws/2 || gs > 2*ws {
			t.Errorf("%.40q: Size %d, Bleve's field %d", tc.text, gs, ws)
		}
	}
}

// BenchmarkAnalyzedField builds the body field of an 11 KB page of prose, sonda's way and
// Bleve's (its text field with sonda's analyzer, as before analyzedField), the work a page
// costs before scorch takes it.
func BenchmarkAnalyzedField(b *testing.B) {
	paras, err := testweb.LoadCorpus(filepath.Join("..", "..", "shared", "testdata", "dragnet", "gold"))
	if err != nil {
		b.Skip("no Dragnet corpus in the shared test data:", err)
	}
	var body []byte
	for i := 0; len(body) < 11<<10; i++ {
		body = append(append(body, paras[i%len(paras)]...), '\n')
	}
	s := string(body)
	b.Run("analyzedField", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			f := newAnalyzedField("body_en", "en", s, body)
			_ = f.Size()
		}
	})
	// The forward term list of the same field (sorting its distinct terms is most of it).
	b.Run("forward", func(b *testing.B) {
		f := newAnalyzedField("body_en", "en", s, body)
		fw := newForwardBuilder("en")
		b.ReportAllocs()
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			fw.buf = fw.buf[:0]
			fw.add(1, f)
		}
	})
	b.Run("bleve-TextField", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			f := document.NewTextFieldCustom("body_en", nil, body, textOptions, analyzerFor("en"))
			f.Analyze()
			_ = f.Size()
		}
	})
}

// TestSegmentsShareFieldRoster: batches of pages in different languages (with the same
// other fields) make segments with the same list of fields, which is what lets zap merge them by copying bytes
// (fieldRoster), and the roster's empty fields change no search: the English pages are
// found by their words, the Portuguese ones by theirs, and a word in neither language's
// pages is found nowhere.
func TestSegmentsShareFieldRoster(t *testing.T) {
	ix := openTest(t, Options{})
	en := []Doc{{ID: "http://a.test/1", Title: "Reactor cooling", Body: "The reactor's cooling water turns turbines.", Lang: "en", Headings: "Cooling"}}
	pt := []Doc{{ID: "http://b.test/1", Title: "Usina nuclear", Body: "A usina gera energia com vapor.", Lang: "pt", Headings: "Energia"}}
	neutralDoc := []Doc{{ID: "http://c.test/1", Title: "Ydinvoimala", Body: "Ydinvoimala tuottaa sähköä.", Lang: "fi", Headings: "Sähkö"}}
	for _, batch := range [][]Doc{en, pt, neutralDoc} {
		if err := ix.Put(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		t.Fatalf("the reader is a %T, not a scorch snapshot", r)
	}
	var first []string
	for i, s := range snap.Segments() {
		fields := s.Segment().Fields()
		if i == 0 {
			first = fields
			for _, f := range []string{"body_pt", "title_en", "anchors_xx", "extra_fr"} {
				if !slices.Contains(fields, f) {
					t.Errorf("segment 0 lacks %s: %v", f, fields)
				}
			}
		} else if !slices.Equal(fields, first) {
			t.Errorf("segment %d has fields %v, segment 0 %v", i, fields, first)
		}
	}
	if len(snap.Segments()) < 2 {
		t.Logf("%d segment(s): the batches were merged already", len(snap.Segments()))
	}
	for q, want := range map[string]string{"turbines": "http://a.test/1", "vapor": "http://b.test/1", "ydinvoimala": "http://c.test/1"} {
		res, err := ix.Search(ctx, Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].ID != want {
			t.Errorf("%q found %v, want %s alone", q, res.Hits, want)
		}
	}
	if res, err := ix.Search(ctx, Request{Query: "zeppelin"}); err != nil || len(res.Hits) != 0 {
		t.Errorf("a word in no page found %v (%v)", res.Hits, err)
	}
}

// TestIndexKeepsPositionsNotOffsets: the index has each body word's positions, which
// phrases and the proximity score read, and no offsets (zero), which nothing reads from
// the index (snippets analyze the stored text); the date is indexed but not stored
// (Doc.Date comes from the published field or the fetch time). Phrases and snippets still
// work.
func TestIndexKeepsPositionsNotOffsets(t *testing.T) {
	ix := openTest(t, Options{})
	d := Doc{ID: "http://a.test/", URL: "http://a.test/", Host: "a.test", Lang: "en", ContentType: "text/html",
		Title: "Boundary layers", Body: "The boundary layer thickens. A thin boundary layer separates late.",
		Fetched: day("2026-11-02")}
	if err := ix.Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	iid, err := r.InternalID(d.ID)
	if err != nil || iid == nil {
		t.Fatalf("%s: %v", d.ID, err)
	}
	tfr, err := r.TermFieldReader(ctx, []byte("boundari"), langField(fieldBody, "en"), true, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tfr.Close()
	p, err := tfr.Advance(iid, nil)
	if err != nil || p == nil {
		t.Fatalf("boundari is not in the body's postings (%v)", err)
	}
	var pos []uint64
	for _, v := range p.Vectors {
		pos = append(pos, v.Pos)
		if v.Start != 0 || v.End != 0 {
			t.Errorf("location %+v has offsets, want none", *v)
		}
	}
	if fmt.Sprint(pos) != "[2 7]" { // stop words keep their places: "The" is 1, "A" 5
		t.Errorf("positions of boundari: %v, want [2 7]", pos)
	}
	doc, err := r.Document(d.ID)
	if err != nil || doc == nil {
		t.Fatalf("document: %v", err)
	}
	doc.VisitFields(func(f bindex.Field) {
		if f.Name() == fieldDate {
			t.Errorf("the date is stored")
		}
	})
	res, err := ix.Search(ctx, Request{Query: `"thin boundary layer"`})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, "<mark>boundary</mark>") {
		t.Fatalf("the phrase finds %+v, want the page with a snippet", res.Hits)
	}
	if res, err = ix.Search(ctx, Request{Query: `"boundary thin"`}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("a phrase the page does not have finds %d pages (%v)", len(res.Hits), err)
	}
	got, ok, err := ix.Document(ctx, d.ID)
	if err != nil || !ok || !got.Date().Equal(d.Fetched) {
		t.Fatalf("the document's date is %v (%v, %v), want %v", got.Date(), ok, err, d.Fetched)
	}
}
