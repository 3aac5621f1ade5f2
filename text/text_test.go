package text

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain ascii", "plain ascii"},
		{"Ação Nuclear", "acao nuclear"},
		{"ÉNERGIE nucléaire", "energie nucleaire"},
		{"Straße ẞ", "strasse ss"},
		{"Œuvre Æther Øresund Łódź", "oeuvre aether oresund lodz"},
		{"energi\u0301a", "energia"}, // decomposed accent
		{"\u0301alone", "alone"},     // a mark with nothing before it
		{"ﬁle", "ﬁle"},               // ligatures are not letters with marks: kept
		{"Ελληνικά", "ελληνικα"},
		{"\xffbad\xfe", "bad"},
		{"İstanbul", "istanbul"},
	}
	for _, tt := range tests {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	s := "Don't stop: 3.5 µm/s, l'énergie — state-of-the-art 東京! " + strings.Repeat("x", MaxTokenBytes+1) + " end"
	var got []string
	var pos []int
	for _, w := range Words(s) {
		if s[w.Start:w.End] != w.Term {
			t.Errorf("token %q does not match its span %q", w.Term, s[w.Start:w.End])
		}
		got = append(got, w.Term)
		pos = append(pos, w.Position)
	}
	want := []string{"Don", "t", "stop", "3", "5", "µm", "s", "l", "énergie", "state", "of", "the", "art", "東", "京", "end"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q\nwant    %q", got, want)
	}
	if last := pos[len(pos)-1]; last != len(want)+1 {
		t.Errorf("position of the last word = %d, want %d (the overlong word counts)", last, len(want)+1)
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		lang, in string
		want     []string
	}{
		{"en", "The reactors are running at nations' power plants", []string{"reactor", "run", "nation", "power", "plant"}},
		{"en", "It's the energy of atomic nuclei; don't panic", []string{"energi", "atom", "nuclei", "panic"}},
		{"pt", "A ação das usinas nucleares não emite gases", []string{"aca", "usin", "nucl", "emit", "gas"}},
		{"pt", "Nao ha energia sem NAÇÃO", []string{"energ", "naca"}},
		{"es", "La energía nuclear de las centrales", []string{"energ", "nucl", "central"}},
		{"fr", "L'énergie nucléaire et les centrales", []string{"energ", "nucleair", "central"}},
		{"", "The Energía of Ação", []string{"the", "energia", "of", "acao"}},
		{"pt-BR", "Os reatores", []string{"reator"}},
		{"Portuguese", "Os reatores", []string{"reator"}},
		{"klingon", "The Reactors", []string{"the", "reactors"}},
	}
	for _, tt := range tests {
		if got := NewAnalyzer(tt.lang).Terms(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Terms(%q) = %q, want %q", tt.lang, tt.in, got, tt.want)
		}
	}
}

// TestPorterThesisVocabulary: seed 001 stemmed its vocabulary and pages with the original
// Porter stemmer; the digest's illustration (energy→energi, atomic→atom, electric→electr,
// physics→physic) must hold, and Porter2 differs from Porter on "technology".
func TestPorterThesisVocabulary(t *testing.T) {
	words := "nuclear energy power reactor uranium atomic electric technology physics fuel"
	porter := NewAnalyzerOptions(Options{Lang: "en", Stemmer: StemPorter})
	want := []string{"nuclear", "energi", "power", "reactor", "uranium", "atom", "electr", "technologi", "physic", "fuel"}
	if got := porter.Terms(words); !reflect.DeepEqual(got, want) {
		t.Errorf("Porter: %q, want %q", got, want)
	}
	if got := NewAnalyzer("en").Terms("technology"); !reflect.DeepEqual(got, []string{"technolog"}) {
		t.Errorf("Porter2: technology → %q", got)
	}
	if porter.Stemmer() != StemPorter || NewAnalyzerOptions(Options{Lang: "pt", Stemmer: StemPorter}).Stemmer() != StemNone {
		t.Error("Porter is English only: other languages must report no stemmer rather than a wrong one")
	}
}

func TestTokensAndStopWords(t *testing.T) {
	a := NewAnalyzer("en")
	s := "The power of the atom"
	toks := a.Tokens(s)
	if len(toks) != 2 || toks[0].Term != "power" || toks[0].Position != 2 || toks[1].Term != "atom" || toks[1].Position != 5 {
		t.Fatalf("Tokens = %+v", toks)
	}
	if s[toks[1].Start:toks[1].End] != "atom" {
		t.Errorf("span of atom = %q", s[toks[1].Start:toks[1].End])
	}
	keep := NewAnalyzerOptions(Options{Lang: "en", KeepStopWords: true})
	if got := keep.Terms(s); len(got) != 5 {
		t.Errorf("KeepStopWords: %q", got)
	}
	if !NewAnalyzer("pt").IsStopWord("NÃO") || !NewAnalyzer("pt").IsStopWord("nao") || a.IsStopWord("atom") {
		t.Error("IsStopWord")
	}
	for _, l := range Languages {
		if len(StopWords(l)) < 100 {
			t.Errorf("%s has only %d stop words", l, len(StopWords(l)))
		}
	}
	if StopWords("de") != nil {
		t.Error("German is detected, not stemmed: it has no stop-word list")
	}
	if term, ok := a.Term("Reactors"); !ok || term != "reactor" {
		t.Errorf("Term(Reactors) = %q, %v", term, ok)
	}
	if _, ok := a.Term("two words"); ok {
		t.Error("Term of two words must fail")
	}
}

// TestTermIsOneWordOfWords: Term analyzes a text that Words splits into exactly one word,
// as that word, and refuses any other (two words, none, one too long to keep, marks,
// ideographs, broken UTF-8 around a word).
func TestTermIsOneWordOfWords(t *testing.T) {
	a := NewAnalyzer("en")
	long := strings.Repeat("a", MaxTokenBytes+1)
	for _, s := range []string{"", " ", "Reactors", "reactors,", "  reactors ", "two words", "the",
		"don't", "e\u0301t\u00e9", "\u0301abc", "abc\u0301", "東京", "東", " 東 ", "a東", "\xffabc", "abc\xff", "ab\xffcd",
		long, long + " b", "b " + long, strings.Repeat("b", MaxTokenBytes), "x-ray", "3.14", "ça"} {
		want, wantOK := "", false
		if ws := Words(s); len(ws) == 1 {
			want, wantOK = a.term(ws[0].Term)
		}
		if got, ok := a.Term(s); got != want || ok != wantOK {
			t.Errorf("Term(%q) = %q, %v; want %q, %v", s, got, ok, want, wantOK)
		}
	}
}

func TestMemoIsTransparent(t *testing.T) {
	on, off := NewAnalyzer("pt"), NewAnalyzerOptions(Options{Lang: "pt", CacheSize: -1})
	tiny := NewAnalyzerOptions(Options{Lang: "pt", CacheSize: 1})
	s := "As centrais nucleares de Angra produzem energia elétrica para o Rio de Janeiro e São Paulo"
	for i := 0; i < 3; i++ {
		a, b, c := on.Terms(s), off.Terms(s), tiny.Terms(s)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
			t.Fatalf("memo changes terms: %q / %q / %q", a, b, c)
		}
	}
}

func TestDetectLanguage(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Nuclear power is a way of producing electricity that does not emit greenhouse gases, and it has been used for decades.", "en"},
		{"A energia nuclear é uma forma de produção de eletricidade que não emite gases do efeito estufa e que é usada há décadas.", "pt"},
		{"La energía nuclear es una forma de producir electricidad que no emite gases de efecto invernadero y se usa desde hace décadas.", "es"},
		{"L'énergie nucléaire est une forme de production d'électricité qui n'émet pas de gaz à effet de serre et qui est utilisée depuis des décennies.", "fr"},
		{"Die Kernenergie ist eine Form der Stromerzeugung, die keine Treibhausgase ausstößt und seit Jahrzehnten genutzt wird.", "de"},
		{"L'energia nucleare è una forma di produzione di elettricità che non emette gas serra e che è usata da decenni.", "it"},
		{"Kernenergie is een manier om elektriciteit op te wekken die geen broeikasgassen uitstoot en die al decennia wordt gebruikt.", "nl"},
		{"uranium reactor 1234", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, conf := DetectLanguage(tt.text)
		if got != tt.want {
			t.Errorf("DetectLanguage(%.40q…) = %q (%.2f), want %q", tt.text, got, conf, tt.want)
		}
		if got != "" && (conf <= 0.3 || conf > 1) || got == "" && conf != 0 {
			t.Errorf("DetectLanguage(%.40q…) confidence %.2f", tt.text, conf)
		}
	}
}

// TestDetectLanguageReadsTheFirstWords: DetectLanguage judges a text by its first
// detectWords words, so a long text's tail in another language does not change it, and
// reading stops there (eachWord stops when its callback says so).
func TestDetectLanguageReadsTheFirstWords(t *testing.T) {
	en := strings.Repeat("the reactor is in the plant and it has a core of fuel ", 200) // 2,400 words
	pt := strings.Repeat("a usina tem um reator e o reator tem uma parte de combustível ", 2000)
	if got, _ := DetectLanguage(en + pt); got != "en" {
		t.Errorf("English for %d words, then Portuguese: detected %q, want en", detectWords, got)
	}
	if got, _ := DetectLanguage(pt + en); got != "pt" {
		t.Errorf("Portuguese first: detected %q, want pt", got)
	}
	for _, stopAt := range []int{1, 3, 7} {
		calls := 0
		eachWord("one two three four five six seven eight", func(_, _, pos int) bool {
			calls++
			return pos < stopAt
		})
		if calls != stopAt {
			t.Errorf("eachWord told to stop after word %d called back %d times", stopAt, calls)
		}
	}
}

func TestVectors(t *testing.T) {
	v := TF([]string{"a", "b", "a"})
	if v["a"] != 2 || v["b"] != 1 || len(v) != 2 {
		t.Fatalf("TF = %v", v)
	}
	if n := v.Norm(); math.Abs(n-math.Sqrt(5)) > 1e-12 {
		t.Errorf("Norm = %v", n)
	}
	tests := []struct {
		a, b Vector
		want float64
	}{
		{Vector{"x": 1}, Vector{"x": 3}, 1},
		{Vector{"x": 1}, Vector{"y": 1}, 0},
		{Vector{"x": 1, "y": 1}, Vector{"x": 1}, 1 / math.Sqrt2},
		{nil, Vector{"x": 1}, 0},
		{Vector{"x": 0}, Vector{"x": 1}, 0},
	}
	for _, tt := range tests {
		if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if c := Cosine(v, v); math.Abs(c-1) > 1e-12 {
		t.Errorf("Cosine(v, v) = %v", c)
	}
	u := v.Normalized()
	if math.Abs(u.Norm()-1) > 1e-12 || Vector(nil).Normalized() != nil {
		t.Error("Normalized")
	}
	sum := Vector(nil).Add(v, 2).Add(Vector{"c": 1}, 1)
	if sum["a"] != 4 || sum["c"] != 1 {
		t.Errorf("Add = %v", sum)
	}
	top := Vector{"b": 1, "a": 1, "c": 5}.Top(2)
	if len(top) != 2 || top[0].Term != "c" || top[1].Term != "a" {
		t.Errorf("Top = %v", top)
	}
}

func TestDocFreq(t *testing.T) {
	var d DocFreq
	d.Add([]string{"reactor", "power", "power"})
	d.Add([]string{"power", "cake"})
	if d.Docs != 2 || d.DF["power"] != 2 || d.DF["reactor"] != 1 {
		t.Fatalf("DocFreq = %+v", d)
	}
	if got, want := d.IDF("power"), 1.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("IDF(power) = %v, want %v (in every document)", got, want)
	}
	if got, want := d.IDF("reactor"), math.Log(1.5)+1; math.Abs(got-want) > 1e-12 {
		t.Errorf("IDF(reactor) = %v, want %v", got, want)
	}
	if d.IDF("unseen") <= d.IDF("reactor") {
		t.Error("an unseen term must weigh most")
	}
	w := d.TFIDF(Vector{"power": 2, "reactor": 1})
	if w["power"] != 2 || w["reactor"] != d.IDF("reactor") {
		t.Errorf("TFIDF = %v", w)
	}
	if n := d.Prune(2); n != 2 || len(d.DF) != 1 {
		t.Errorf("Prune dropped %d, left %v", n, d.DF)
	}
}

func TestCutBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"}, // é is two bytes: not split
		{"aé", 3, "aé"},
		{"日本", 4, "日"},
		{"日本", 2, ""},
		{"", 0, ""},
	} {
		if got := CutBytes(tc.s, tc.n); got != tc.want {
			t.Errorf("CutBytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestMemoConcurrent: analyzers of every memo size (one word per shard, a few, the
// default) used from many goroutines at once give the terms an analyzer without a memo
// gives, and a memo holds at most its size.
func TestMemoConcurrent(t *testing.T) {
	var words []string
	for i := range 3000 {
		words = append(words, fmt.Sprintf("reactors%d", i%1500), "the", "Usinas", "nucleares", "São")
	}
	s := strings.Join(words, " ")
	want := NewAnalyzerOptions(Options{Lang: "en", CacheSize: -1}).Terms(s)
	for _, size := range []int{1, 7, 0} {
		a := NewAnalyzerOptions(Options{Lang: "en", CacheSize: size})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					if got := a.Terms(s); !reflect.DeepEqual(got, want) {
						t.Errorf("memo of %d, goroutine %d: the terms differ from an analyzer without a memo", size, g)
						return
					}
				}
			}()
		}
		wg.Wait()
		most := size
		if size == 0 {
			most = 1 << 17
		}
		most = max(most/len(a.memo.shards), 1) * len(a.memo.shards) // each shard takes its share
		n := 0
		for i := range a.memo.shards {
			n += len(a.memo.shards[i].m)
		}
		if n > most || (size == 0 && n < 1500) {
			t.Errorf("memo of %d: %d entries, at most %d", size, n, most)
		}
	}
}
