package exteval

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sonda-search/sonda/extract"
)

func TestTokens(t *testing.T) {
	got := Tokens("Vacinação contra a gripe: 40 milhões! snake_case, 東京 tower")
	want := []string{"vacinação", "contra", "a", "gripe", "40", "milhões", "snake_case", "東京", "tower"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
}

func TestBodyCounts(t *testing.T) {
	tests := []struct {
		got, want  string
		tp, fp, fn int
	}{
		{"a b c d e", "a b c d e", 2, 0, 0},
		{"a b c d e", "a b c d", 1, 1, 0},
		{"x y z w", "a b c d", 0, 1, 1},
		{"", "a b c d e", 0, 0, 2},
		{"a b c d a b c d", "a b c d", 1, 4, 0}, // multisets: a repeated shingle counts twice
		{"A, b. C d!", "a b c d", 1, 0, 0},      // case and punctuation do not matter
		{"a b", "a b", 1, 0, 0},                 // shorter than a shingle: one shingle of all tokens
	}
	for _, tt := range tests {
		tp, fp, fn := BodyCounts(tt.got, tt.want)
		if tp != tt.tp || fp != tt.fp || fn != tt.fn {
			t.Errorf("BodyCounts(%q, %q) = %d,%d,%d want %d,%d,%d", tt.got, tt.want, tp, fp, fn, tt.tp, tt.fp, tt.fn)
		}
	}
}

func TestEmptyOutputScoresZero(t *testing.T) {
	res := Result{Fields: map[string]FieldScore{}}
	pr := score(Case{Name: "x", Expected: "one two three four five"}, &extract.Article{}, nil, &res)
	if pr.Precision != 0 || pr.Recall != 0 {
		t.Errorf("no output on a page with text: P=%v R=%v, want 0 and 0", pr.Precision, pr.Recall)
	}
	pr = score(Case{Name: "y"}, &extract.Article{}, nil, &res)
	if pr.Precision != 1 || pr.Recall != 1 {
		t.Errorf("no output on a page without text: P=%v R=%v, want 1 and 1", pr.Precision, pr.Recall)
	}
}

func TestSameTime(t *testing.T) {
	tests := []struct {
		got, want string
		same      bool
	}{
		{"2018-05-12T05:00:00-03:00", "2018-05-12T08:00:00Z", true},     // one instant, two zones
		{"2018-05-12T05:00:00-03:00", "2018-05-12T05:00:00Z", false},    // same wall clock, other instant
		{"2018-04-05T06:00:00-04:00", "2018-04-05T06:00", true},         // no zone: wall clock to the minute
		{"2018-04-05T06:00:59Z", "2018-04-05T06:00", true},              // precision of the expected value
		{"2018-04-05T06:01:00Z", "2018-04-05T06:00", false},             //
		{"2015-03-17T16:27:40Z", "2015-03-17T16:27:40.294Z", true},      // fractions beyond the second
		{"2024-06-25T23:30:00-03:00", "2024-06-25", true},               // a day: the extracted wall clock's day
		{"2019-10-18T17:23:34.816Z", "2019-10-18T17:23:34.816Z", true},  //
		{"2017-11-03T03:01:00Z", "2017-11-03 03:01:00.000000", true},    //
		{"2021-11-01T10:52:50+01:00", "2021-11-01T10:52:50+0100", true}, //
		{"", "2021-11-01T10:52:50+0100", false},                         //
		{"2021-11-01T00:00:00Z", "2021-11-01T10:52:50+0100", false},     // a date without its time is not the time
	}
	for _, tt := range tests {
		if got := SameTime(tt.got, tt.want); got != tt.same {
			t.Errorf("SameTime(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.same)
		}
	}
	if !SameDay("2021-11-01T00:00:00Z", "2021-11-01T10:52:50+0100") {
		t.Error("SameDay must accept the right day without the time")
	}
}

func TestNormalizedComparisons(t *testing.T) {
	if !SameText("  The   Guardian ", "the guardian") || SameText("Guardian", "The Guardian") {
		t.Error("SameText normalizes white space and case only")
	}
	if !SameByline("Scott Cunningham", "By\n\t\t\tScott Cunningham") || !SameByline("Jane Doe", "by: Jane Doe") || SameByline("Jane", "Jane Doe") {
		t.Error("SameByline drops a leading by")
	}
	if !SameLanguage("en", "en-US") || !SameLanguage("pt-BR", "pt") || SameLanguage("", "en") || SameLanguage("es", "en") {
		t.Error("SameLanguage compares primary subtags")
	}
}

func testSet(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "testdata", name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("test set %s not found (%v): the extraction evaluation needs ../shared/testdata/%s", dir, err, name)
	}
	return dir
}

func TestLoad(t *testing.T) {
	cases, err := Load(testSet(t, "readability"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases loaded", len(cases))
	}
	for _, c := range cases {
		if c.Name == "aclu" {
			if c.Meta.Title == nil || *c.Meta.Title == "" || c.Meta.PublishedTime == nil || len(Tokens(c.Expected)) < 100 {
				t.Errorf("aclu case incomplete: %+v", c.Meta)
			}
		}
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("an empty folder must be an error")
	}
}

func TestLoadDragnet(t *testing.T) {
	cases, err := Load(testSet(t, "dragnet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1381 {
		t.Errorf("%d dragnet pages, want 1381", len(cases))
	}
	for _, c := range cases {
		if !utf8.Valid(c.Source) || !utf8.ValidString(c.Expected) {
			t.Errorf("page %s not decoded to UTF-8", c.Name)
		}
		if c.Name == "158" && !strings.Contains(c.Expected, "Forgiving your enemies") { // gold in UTF-16
			t.Errorf("page 158's UTF-16 gold text not decoded: %q", c.Expected[:min(60, len(c.Expected))])
		}
		if c.Name == "131" && (!strings.Contains(c.Expected, "Nation Is Losing Its Toolbox") || strings.Contains(c.Expected, "Cheech Wizard")) {
			t.Errorf("page 131's gold must keep the story and drop the comments after its separator: %d bytes", len(c.Expected))
		}
	}
	whole, err := LoadWithComments(testSet(t, "dragnet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range whole {
		if c.Name == "131" && !strings.Contains(c.Expected, "Cheech Wizard") {
			t.Errorf("LoadWithComments must keep page 131's comments: %d bytes", len(c.Expected))
		}
	}
	// A page without its gold text is an error, not a page that scores 0.
	dir := t.TempDir()
	for _, sub := range []string{"html", "gold"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "html", "1.html"), []byte("<p>x</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "gold") {
		t.Errorf("a page without gold text: err = %v", err)
	}
}

func TestCompareByStage(t *testing.T) {
	r := Result{PerPage: []PageResult{
		{Name: "a", Precision: 1, Recall: 1, BodyFrom: "article"},
		{Name: "b", Precision: 0.5, Recall: 0.5, BodyFrom: "article"},
		{Name: "c", Precision: 1, Recall: 1, BodyFrom: "trafilatura"},
	}}
	base := Result{PerPage: []PageResult{
		{Name: "a", Precision: 0.5, Recall: 0.5},
		{Name: "b", Precision: 1, Recall: 1},
		{Name: "c", Precision: 1, Recall: 1},
	}}
	d := Compare(r, base)
	if d[0].Name != "b" || d[0].Loss() != 0.5 || d[2].Name != "a" {
		t.Errorf("Compare must put the worst loss first: %+v", d)
	}
	st := ByStage(d)
	want := []StageScore{
		{Stage: "article", Pages: 2, Lost: 1, Won: 1, MeanF1: 0.75, MeanBaseF1: 0.75},
		{Stage: "trafilatura", Pages: 1, MeanF1: 1, MeanBaseF1: 1},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("ByStage = %+v, want %+v", st, want)
	}
}

// heldOutSets are the test sets the acceptance runs on: every Readability page, and every
// fourth Dragnet page (345 of 1,381, in name order) to keep the test within seconds.
func heldOutSets(t *testing.T) map[string][]Case {
	sets := map[string][]Case{}
	for _, name := range []string{"readability", "dragnet"} {
		cases, err := Load(testSet(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "dragnet" {
			var every4 []Case
			for i := 0; i < len(cases); i += 4 {
				every4 = append(every4, cases[i])
			}
			cases = every4
		}
		sets[name] = cases
	}
	return sets
}

// minGain is issue 13's goal: sonda's body F1 at least go-trafilatura's plus this, on
// every test set.
const minGain = 0.015

// minStagePages is the fewest pages a cascade stage must decide for its own comparison
// with the baseline to be asserted (fewer pages make a mean that one page can swing).
const minStagePages = 5

// TestAcceptance is the extraction's promise on both test sets, the one it is tuned on
// (TunedOn) and the one held out (issues 6 and 13): on each, sonda's body F1 is at least
// go-trafilatura's plus minGain, and on the pages each stage of the cascade decided
// (go-trafilatura kept, or overruled by the vote for Readability or DOM Distiller) the
// mean F1 is at least go-trafilatura's: a stage trusted without evidence, like the
// <article> fast path was on Dragnet, fails here. On Readability its metadata is clearly
// better; the thesis mode trails both.
func TestAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the full evaluation takes seconds")
	}
	if raceEnabled {
		t.Skip("the race detector makes the full evaluation take minutes; scripts/test.sh runs it without -race")
	}
	run := func(cases []Case, o extract.Options) Result {
		ex, err := extract.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return Run(cases, ex, runtime.GOMAXPROCS(0))
	}
	for name, cases := range heldOutSets(t) {
		sonda := run(cases, extract.Options{})
		traf := run(cases, extract.Options{Mode: extract.ModeTrafilatura})
		t.Logf("%s (%s, %d pages): body F1 sonda %.4f, go-trafilatura %.4f (%+.4f)", name, Role(name), len(cases), sonda.F1, traf.F1, sonda.F1-traf.F1)
		if sonda.F1 < traf.F1+minGain {
			t.Errorf("%s: sonda body F1 %.4f is not go-trafilatura's %.4f + %.3f", name, sonda.F1, traf.F1, minGain)
		}
		for _, st := range ByStage(Compare(sonda, traf)) {
			t.Logf("%s: stage %s decided %d pages: F1 %.4f, go-trafilatura %.4f on them", name, st.Stage, st.Pages, st.MeanF1, st.MeanBaseF1)
			if st.Pages >= minStagePages && st.MeanF1 < st.MeanBaseF1 {
				t.Errorf("%s: on the %d pages the %s stage decided sonda's F1 is %.4f, below go-trafilatura's %.4f there", name, st.Pages, st.Stage, st.MeanF1, st.MeanBaseF1)
			}
		}
		if name != "readability" {
			continue
		}
		thesis := run(cases, extract.Options{Mode: extract.ModeThesis})
		t.Logf("metadata: sonda %.3f, go-trafilatura %.3f, thesis %.3f", sonda.MetadataAccuracy(), traf.MetadataAccuracy(), thesis.MetadataAccuracy())
		if sonda.MetadataAccuracy() < traf.MetadataAccuracy()+0.15 {
			t.Errorf("sonda metadata %.3f is not clearly better than go-trafilatura's %.3f", sonda.MetadataAccuracy(), traf.MetadataAccuracy())
		}
		for _, f := range Fields {
			if sonda.Fields[f].Accuracy() < traf.Fields[f].Accuracy() {
				t.Errorf("%s: sonda %.3f below go-trafilatura %.3f", f, sonda.Fields[f].Accuracy(), traf.Fields[f].Accuracy())
			}
		}
		if thesis.F1 >= sonda.F1 {
			t.Errorf("thesis mode F1 %.3f not below sonda's %.3f", thesis.F1, sonda.F1)
		}
	}
}

func TestMainText(t *testing.T) {
	tests := []struct{ gold, want string }{
		{"Title\n\nBody text.\n", "Title\n\nBody text.\n"},
		{"Title\nBody.\n\n!@#$%^&*()  COMMENTS\nReader one\nGreat post\n", "Title\nBody.\n\n"},
		{"Body.\r\n!@#$%^&*() COMMENTS\r\nReader\r\n", "Body.\r\n"},
		{"Body.\n!@ $%^&*()  COMMENTS\nReader\n", "Body.\n"}, // the separator as some files spell it
		{"Body.\n!@#$%^&*()  CORRECTED\nReader\n", "Body.\n"},
		{"Body.\n!@#$%^&*()\nReader\n", "Body.\n"},
		{"!@#$%^&*()  COMMENTS\nReader\n", ""}, // a page whose main content the annotators left empty
		{"Five comments below.\nBody.", "Five comments below.\nBody."},
	}
	for _, tt := range tests {
		if got := MainText(tt.gold); got != tt.want {
			t.Errorf("MainText(%q) = %q, want %q", tt.gold, got, tt.want)
		}
	}
}
