package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/sonda-search/sonda/internal/synthcorpus"
)

// forwardCorpus is n pages in English, Portuguese and German over a small vocabulary, so
// that pages share words, with words in every text field and some fields empty.
func forwardCorpus(n int, seed int64) []Doc {
	vocab := map[string][]string{
		"en": strings.Fields("reactor fuel rods uranium pellets power plant cooling water steam turbine neutron fission core control safety pressure vessel heat energy grid coal solar wind panel storage battery 2024 a x"),
		"pt": strings.Fields("reator combustível urânio usina energia água vapor turbina nêutron fissão núcleo controle segurança pressão calor rede carvão solar vento painel bateria"),
		"de": strings.Fields("Reaktor Brennstoff Uran Kraftwerk Energie Wasser Dampf Turbine Neutron Spaltung Kern Sicherheit Druck Wärme Netz Kohle Sonne Wind Batterie"),
	}
	langs := []string{"en", "pt", "de"}
	rng := rand.New(rand.NewSource(seed))
	// And made-up words, rarer, so that the best pages share words that most pages do
	// not have: feedback leaves words in most documents out of its model.
	syllables := strings.Fields("ka lo mi ne ru ti so fa de pu ga be zo")
	for _, lang := range langs {
		for _, a := range syllables {
			for _, b := range syllables {
				vocab[lang] = append(vocab[lang], a+b+"n"+lang[:1])
			}
		}
	}
	words := func(lang string, n int) string {
		v := vocab[lang]
		out := make([]string, n)
		for i := range out {
			// Zipf-like: the first words are the most common.
			out[i] = v[int(float64(len(v))*math.Pow(rng.Float64(), 2.5))]
		}
		return strings.Join(out, " ")
	}
	docs := make([]Doc, n)
	for i := range docs {
		lang := langs[rng.Intn(len(langs))]
		d := Doc{
			ID:   fmt.Sprintf("http://site%d.test/p%d", i%7, i),
			URL:  fmt.Sprintf("http://site%d.test/p%d", i%7, i),
			Host: fmt.Sprintf("site%d.test", i%7), Lang: lang, Relevance: -1,
			Title: words(lang, 1+rng.Intn(5)),
			Body:  words(lang, 5+rng.Intn(200)),
		}
		if rng.Intn(2) == 0 {
			d.Headings = words(lang, 1+rng.Intn(10))
		}
		if rng.Intn(3) == 0 {
			d.Description = words(lang, 3+rng.Intn(20))
		}
		if rng.Intn(3) == 0 {
			d.Anchors = []string{words(lang, 1+rng.Intn(4)), words(lang, 1+rng.Intn(4))}
		}
		if rng.Intn(5) == 0 {
			d.Kind = KindArticle
			d.Fields = map[string]any{"authors": []string{words(lang, 2)}}
		}
		docs[i] = d
	}
	return docs
}

// putUnlisted adds docs as an index written before forward term lists were stored had
// them: the same document without its list; or, with future, with a list of a later
// version than this sonda reads.
func putUnlisted(t *testing.T, ix *Index, future bool, docs ...Doc) {
	t.Helper()
	b := ix.bi.NewBatch()
	var lens []docLengths
	for _, d := range docs {
		bd, err := build(d)
		if err != nil {
			t.Fatal(err)
		}
		bd.doc.Fields = slices.DeleteFunc(bd.doc.Fields, func(f document.Field) bool { return f.Name() == fieldTerms })
		if future {
			bd.doc.AddField(document.NewTextFieldCustom(fieldTerms, nil, []byte{forwardVersion + 1, 0xff, 0xff}, storeOnly, nil))
		}
		if err := b.IndexAdvanced(bd.doc); err != nil {
			t.Fatal(err)
		}
		lens = append(lens, bd.docLengths)
	}
	if err := ix.bi.Batch(b); err != nil {
		t.Fatal(err)
	}
	ix.statsMu.Lock()
	for _, l := range lens {
		ix.stats.add(l)
	}
	ix.statsMu.Unlock()
	ix.wrote()
}

// TestForwardListMatchesPostings: every document's forward term list holds exactly the
// terms, frequencies and field lengths the postings hold for it, in every text field.
func TestForwardListMatchesPostings(t *testing.T) {
	ix := openTest(t, Options{})
	docs := forwardCorpus(120, 1)
	for i := 0; i < len(docs); i += 40 { // several segments
		if err := ix.Put(ctx, docs[i:i+40]...); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checked := 0
	for _, d := range docs {
		iid, err := r.InternalID(d.ID)
		if err != nil || iid == nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		var list forwardList
		err = forwardLists(r, nil, []collectedHit{{doc: iid.Value()}}, func(_ int, l forwardList, ok bool) error {
			if !ok {
				return fmt.Errorf("%s has no forward term list", d.ID)
			}
			list = l
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		if want := langCode(d.Lang); list.lang != want {
			t.Errorf("%s: language %q, want %q", d.ID, list.lang, want)
		}
		fields := 0
		err = list.eachSection(func(sec forwardSection) error {
			fields++
			name := langField(textFields[sec.field], list.lang)
			var prev []byte
			_, err := sec.eachTerm(nil, func(term []byte, tf int) {
				if prev != nil && string(prev) >= string(term) {
					t.Errorf("%s %s: %q after %q", d.ID, name, term, prev)
				}
				if got, err := findOne(sec, string(term)); got != tf || err != nil {
					t.Errorf("%s %s: find %q gives %d (%v), want %d", d.ID, name, term, got, err, tf)
				}
				prev = append(prev[:0], term...)
				tfr, err := r.TermFieldReader(ctx, term, name, true, true, false)
				if err != nil {
					t.Fatal(err)
				}
				defer tfr.Close()
				p, err := tfr.Advance(iid, nil)
				if err != nil || p == nil || !p.ID.Equals(iid) {
					t.Errorf("%s %s: %q is not in its postings (%v)", d.ID, name, term, err)
					return
				}
				if int(p.Freq) != tf {
					t.Errorf("%s %s %q: frequency %d, postings %d", d.ID, name, term, tf, p.Freq)
				}
				if got, want := fieldLength(sec.length), 1/(p.Norm*p.Norm); got != want {
					t.Errorf("%s %s: length %d gives %v, postings' norm %v", d.ID, name, sec.length, got, want)
				}
				checked++
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if fields == 0 {
			t.Errorf("%s: no fields in its forward term list", d.ID)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d terms checked", checked)
	}
}

// TestForwardFind: a section's terms are found through its restart points, whatever their
// number, and a term that is not there is not found, before, between and after them.
func TestForwardFind(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	// Words of two letters share long prefixes, and many are prefixes of others: find's
	// scan tells entries apart by the lengths they share with the one before.
	twoLetters := func() string {
		w := make([]byte, 1+rng.Intn(10))
		for i := range w {
			w[i] = "ab"[rng.Intn(2)]
		}
		return string(w)
	}
	for _, n := range []int{1, 2, 15, 16, 17, 33, 1000, -1, -2, -15, -16, -17, -33, -500} {
		word := func() string { return fmt.Sprintf("w%x", rng.Intn(1<<20)) }
		if n < 0 {
			n, word = -n, twoLetters
		}
		want := map[string]int{}
		var ts []string
		for len(want) < n {
			w := word()
			want[w] = 1 + rng.Intn(3)
		}
		for w, tf := range want {
			for range tf {
				ts = append(ts, w)
			}
		}
		l := forwardOfBody(t, ts)
		sections := 0
		err := l.eachSection(func(sec forwardSection) error {
			sections++
			if got := len(sec.restarts) / 4; got != (n+forwardRestart-1)/forwardRestart {
				t.Errorf("%d terms: %d restart points", n, got)
			}
			probes := []string{"", "a", "w", "x", "\xff"}
			for w := range want {
				probes = append(probes, w, w+"0", w[:len(w)-1], "a"+w, "z"+w, w+"a", w+"b", w+"c", w[:len(w)-1]+"c")
			}
			for _, probe := range probes {
				if got, err := findOne(sec, probe); err != nil || got != want[probe] {
					t.Errorf("%d terms: find %q gives %d (%v), want %d", n, probe, got, err, want[probe])
				}
			}
			// Many at once, sorted, some twice: each found as alone, in one pass.
			var scratch []byte
			for range 20 {
				some := make([]string, 1+rng.Intn(len(probes)))
				for i := range some {
					some[i] = probes[rng.Intn(len(probes))]
				}
				slices.Sort(some)
				got := make([]int, len(some))
				var err error
				scratch, err = sec.find(some, scratch, func(j, freq int) { got[j] = freq })
				for j, probe := range some {
					if err != nil || got[j] != want[probe] {
						t.Fatalf("%d terms: find %q among %d gives %d (%v), want %d", n, probe, len(some), got[j], err, want[probe])
					}
				}
			}
			return nil
		})
		if err != nil || sections != 1 {
			t.Fatalf("%d terms: %d sections, %v", n, sections, err)
		}
	}
}

// TestForwardListMalformed: a damaged list is an error, not a panic or a wrong score.
func TestForwardListMalformed(t *testing.T) {
	f := newForwardBuilder("en")
	f.add(1, newAnalyzedField("body_en", "en", "reactor fuel rods reactor", nil))
	good := f.buf
	for cut := range len(good) - 1 {
		b := good[:cut]
		l, err := parseForward(b)
		if err == nil {
			err = l.eachSection(func(s forwardSection) error {
				_, err := s.eachTerm(nil, func([]byte, int) {})
				if err == nil {
					_, err = findOne(s, "rods")
				}
				return err
			})
		}
		if err == nil && cut > 4 { // a cut between sections is a shorter, valid list
			t.Errorf("a list cut at %d of %d bytes read without error", cut, len(good))
		}
	}
	if _, err := parseForward([]byte{9, 0}); err == nil {
		t.Error("an unknown version read without error")
	}
}

// TestFeedbackForwardEqualsPostings: feedback's rescoring from forward term lists gives
// each document of the window the score the postings give it, and a search over an index
// whose documents were partly stored without lists (the postings' way for those) ranks
// and scores as over one where every document has its list (or partly with lists of a
// later version).
func TestFeedbackForwardEqualsPostings(t *testing.T) {
	docs := forwardCorpus(400, 2)
	listed := openTest(t, Options{CacheEntries: -1})
	mixed := openTest(t, Options{CacheEntries: -1})
	for i := 0; i < len(docs); i += 100 {
		part := docs[i : i+100]
		if err := listed.Put(ctx, part...); err != nil {
			t.Fatal(err)
		}
		if i%200 == 0 {
			putUnlisted(t, mixed, i == 0, part...)
		} else if err := mixed.Put(ctx, part...); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"reactor", "fuel rods", "neutron core safety", "usina energia", "Reaktor Wärme", "steam", "turbine water pressure"}

	// The two ways, on the same windows.
	r := DefaultRanking()
	compared, changed := 0, 0
	for _, q := range queries {
		first := strings.Fields(q)[0]
		lang := "en"
		for l, words := range map[string]string{"pt": "usina energia", "de": "Reaktor Wärme"} {
			if strings.Contains(words, first) {
				lang = l
			}
		}
		listed.statsMu.Lock()
		stats := listed.stats.bm25f()
		listed.statsMu.Unlock()
		var ws []bm25fWord
		for _, w := range strings.Fields(q) {
			ws = append(ws, bm25fWord{terms: map[string]string{lang: textAnalyzerFor(lang).Terms(w)[0]}})
		}
		query := &bm25fQuery{words: ws, fields: textFields, r: r, stats: stats}
		_, err := listed.collect(ctx, query, collectOptions{n: r.Window, rescore: func(ir bindex.IndexReader, best []collectedHit, total uint64) error {
			model, err := listed.relevanceModel(ctx, ir, best[:min(len(best), feedbackDocs)], nil)
			if err != nil || len(model) == 0 {
				t.Fatalf("%q: model %v, %v", q, model, err)
			}
			fq := &bm25fQuery{fields: textFields, r: r, stats: stats}
			for _, m := range model {
				fq.words = append(fq.words, bm25fWord{terms: map[string]string{m.lang: m.term}, weight: r.Feedback * m.p})
			}
			forward := slices.Clone(best)
			postings := slices.Clone(best)
			// Twice: counting the words' documents, then from the counts kept.
			var unlisted []int
			for range 2 {
				idfs, err := fq.textIDFs(func(term, field string) (uint64, error) { return listed.dfs.count(ctx, ir, term, field) })
				if err != nil {
					t.Fatal(err)
				}
				forward = slices.Clone(best)
				if unlisted, err = fq.rescoreForward(ir, nil, idfs, forward); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil || len(unlisted) > 0 {
				t.Fatalf("%q: %d documents without lists, %v", q, len(unlisted), err)
			}
			s2, err := fq.open(ctx, ir)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			all := make([]int, len(postings))
			for i := range all {
				all[i] = i
			}
			if err := s2.rescorePostings(postings, all); err != nil {
				t.Fatal(err)
			}
			for i := range best {
				if d := math.Abs(forward[i].score - postings[i].score); d > 1e-12*math.Abs(postings[i].score) {
					t.Errorf("%q, document %d: %v from its forward list, %v from the postings", q, i, forward[i].score, postings[i].score)
				}
				compared++
				if postings[i].score != best[i].score {
					changed++
				}
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if compared < 500 || changed < compared/4 {
		t.Fatalf("compared %d documents, feedback changed %d of them: too few to tell", compared, changed)
	}

	// End to end: the same results from an index partly without lists, through the
	// lists (where there are) and through the postings.
	// Feedback changes these rankings (else the comparison below would show nothing).
	changes := 0
	off := DefaultRanking()
	off.Feedback = 0
	for _, q := range queries {
		a, err := listed.Search(ctx, Request{Query: q, PerPage: 50})
		if err != nil {
			t.Fatal(err)
		}
		b, err := listed.Search(ctx, Request{Query: q, PerPage: 50, Ranking: &off})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(a), ids(b)) {
			changes++
		}
	}
	if changes < len(queries)/2 {
		t.Fatalf("feedback changed the ranking of %d of %d queries: too few to tell", changes, len(queries))
	}
	defer func(was uint64) { forwardDocPostings = was }(forwardDocPostings)
	for _, perDoc := range []uint64{0, 1 << 30} {
		forwardDocPostings = perDoc
		sameResults(t, listed, mixed, queries)
	}
}

// sameResults checks that two indexes of the same documents rank queries alike.
func sameResults(t *testing.T, listed, mixed *Index, queries []string) {
	t.Helper()
	for _, q := range queries {
		a, err := listed.Search(ctx, Request{Query: q, PerPage: 50})
		if err != nil {
			t.Fatal(err)
		}
		b, err := mixed.Search(ctx, Request{Query: q, PerPage: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Hits) < 20 || len(a.Hits) != len(b.Hits) || a.Total != b.Total {
			t.Fatalf("%q: %d hits of %d, and %d of %d", q, len(a.Hits), a.Total, len(b.Hits), b.Total)
		}
		// Equal scores are ordered by internal document number, which depends on how
		// each index's segments were written and merged: the same scores rank by rank,
		// and each page its score in both (or a tie with the last one, cut in the other).
		score := map[string]float64{}
		for _, h := range b.Hits {
			score[h.ID] = h.Score
		}
		last := a.Hits[len(a.Hits)-1].Score
		for i, h := range a.Hits {
			other, ok := score[h.ID]
			if math.Abs(h.Score-b.Hits[i].Score) > 1e-9 || ok && math.Abs(h.Score-other) > 1e-9 || !ok && math.Abs(h.Score-last) > 1e-9 {
				t.Errorf("%q #%d: %s %v with lists, %s %v partly without", q, i+1, h.ID, h.Score, b.Hits[i].ID, b.Hits[i].Score)
			}
		}
	}
}

// forwardReference encodes a field's section as the format comment at the top of
// forward.go describes it, plainly: the stored lists written before and after the
// builder's buffers were sized must be the same bytes.
func forwardReference(field int, a *analyzedField) []byte {
	terms := make([]string, 0, len(a.freqs))
	for t := range a.freqs {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	var entries []byte
	var restarts []uint32
	for i, t := range terms {
		shared := 0
		if i%forwardRestart == 0 {
			restarts = append(restarts, uint32(len(entries)))
		} else {
			for shared < len(terms[i-1]) && shared < len(t) && terms[i-1][shared] == t[shared] {
				shared++
			}
		}
		entries = binary.AppendUvarint(entries, uint64(shared))
		entries = binary.AppendUvarint(entries, uint64(len(t)-shared))
		entries = append(entries, t[shared:]...)
		entries = binary.AppendUvarint(entries, uint64(a.freqs[t].Frequency()))
	}
	var section []byte
	section = binary.AppendUvarint(section, uint64(len(restarts)))
	for _, r := range restarts {
		section = binary.LittleEndian.AppendUint32(section, r)
	}
	section = append(section, entries...)
	out := []byte{byte(field)}
	out = binary.AppendUvarint(out, uint64(a.length))
	out = binary.AppendUvarint(out, uint64(len(section)))
	return append(out, section...)
}

// TestForwardBuilderBytes: the builder writes the documented format (checked against a
// plain encoder, on fields of 1 to 20,000 words, long terms and frequencies over 127
// included), and a field costs it at most three allocations, whatever its length: the
// entries, the restart points, and growing the document's list.
func TestForwardBuilderBytes(t *testing.T) {
	long := strings.Repeat("x", 300)
	texts := []string{
		"reactor",
		forwardCorpus(1, 1)[0].Body,
		strings.Repeat("reactor fuel rods ", 200) + long + " " + long + "y",
	}
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "w%d ", i%5000)
	}
	texts = append(texts, b.String())
	for i, s := range texts {
		a := newAnalyzedField("body_en", "en", s, []byte(s))
		f := newForwardBuilder("en")
		f.add(1, a)
		f.add(0, a)
		want := newForwardBuilder("en").buf
		want = append(want, forwardReference(1, a)...)
		want = append(want, forwardReference(0, a)...)
		if !bytes.Equal(f.buf, want) {
			t.Errorf("text %d: the builder's list differs from the format's encoding (%d and %d bytes)", i, len(f.buf), len(want))
		}
		f = newForwardBuilder("en")
		f.add(1, a) // the scratch's capacity
		if n := testing.AllocsPerRun(20, func() {
			f.buf = f.buf[:0]
			f.add(1, a)
		}); n > 3 {
			t.Errorf("text %d (%d terms): %v allocations to add a field, want at most 3", i, len(a.freqs), n)
		}
	}
}

// findOne returns the frequency of term in section s (0: not there).
func findOne(s forwardSection, term string) (int, error) {
	freq := 0
	_, err := s.find([]string{term}, nil, func(_, f int) { freq = f })
	return freq, err
}

// forwardOfBody is the forward list of one document whose body is the words ts.
func forwardOfBody(t *testing.T, ts []string) forwardList {
	t.Helper()
	f := newForwardBuilder("en")
	text := strings.Join(ts, " ")
	f.add(1, newAnalyzedField("body_xx", "xx", text, []byte(text)))
	l, err := parseForward(f.buf)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestForwardFindLongEntries: a frequency that takes more than one byte (an entry that
// nextEntry does not read its one-byte way) is found, among entries read that way. (The
// analyzers cut terms long before 128 bytes, the length that would take two.)
func TestForwardFindLongEntries(t *testing.T) {
	var ts []string
	long := strings.Repeat("k", 150)
	for i := range 40 {
		ts = append(ts, fmt.Sprintf("w%02d", i))
	}
	for range 200 {
		ts = append(ts, "often")
	}
	ts = append(ts, long, "zz")
	l := forwardOfBody(t, ts)
	err := l.eachSection(func(sec forwardSection) error {
		all := map[string]int{}
		if _, err := sec.eachTerm(nil, func(term []byte, tf int) { all[string(term)] = tf }); err != nil {
			return err
		}
		if all["often"] != 200 || all["zz"] != 1 || len(all) < 42 {
			t.Fatalf("the section reads as %v", all)
		}
		for term, tf := range all {
			if got, err := findOne(sec, term); err != nil || got != tf {
				t.Errorf("find %q gives %d (%v), want %d", term, got, err, tf)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkForwardFind: feedback's lookup of ten words in the title and body sections of
// the load test's pages (internal/synthcorpus), as rescoreForward does for each document
// of its window: the words are the analyzed terms of a search log's questions, sorted.
func BenchmarkForwardFind(b *testing.B) {
	c := synthcorpus.New(1)
	var lists []forwardList
	for i := range 200 {
		d := synthDoc(c, i*37)
		f := newForwardBuilder("en")
		for field, text := range []string{d.Title, d.Body} {
			if a := newAnalyzedField("field_en", "en", text, nil); a != nil {
				f.add(field, a)
			}
		}
		l, err := parseForward(f.buf)
		if err != nil {
			b.Fatal(err)
		}
		lists = append(lists, l)
	}
	a := textAnalyzerFor("en")
	var queries [][]string
	for _, q := range synthcorpus.New(1).Log(2000, 1000) {
		if q.Kind != synthcorpus.KindQuestion {
			continue
		}
		ts := slices.Compact(slices.Sorted(slices.Values(a.Terms(q.Text))))
		queries = append(queries, ts[:min(len(ts), 10)])
		if len(queries) == 20 {
			break
		}
	}
	var scratch []byte
	found := 0
	b.ResetTimer()
	for i := range b.N {
		terms := queries[i%len(queries)]
		for _, l := range lists {
			err := l.eachSection(func(sec forwardSection) error {
				var err error
				scratch, err = sec.find(terms, scratch, func(int, int) { found++ })
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(found)/float64(b.N), "found/op")
}
