package web

import (
	"html"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeSnippet(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a <mark>solar</mark> panel", "a <mark>solar</mark> panel"},
		{"fish &amp; chips &lt;b&gt;", "fish &amp; chips &lt;b&gt;"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{`<img src=x onerror="alert(1)">`, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"},
		{"<mark>open", "<mark>open</mark>"},
		{"stray</mark> close", "stray close"},
		{"<mark>a<mark>b</mark>c</mark>", "<mark>ab</mark>c"},
		{"<MARK>upper</MARK>", "&lt;MARK&gt;upper&lt;/MARK&gt;"},
		{"<mark onclick=x>y</mark>", "&lt;mark onclick=x&gt;y"},
		{"&lt;mark&gt;x&lt;/mark&gt;", "&lt;mark&gt;x&lt;/mark&gt;"},
		{"", ""},
	} {
		if got := string(SafeSnippet(tc.in)); got != tc.want {
			t.Errorf("SafeSnippet(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"solar energy", "solar energy"},
		{`"solar energy" +panels -wind`, "solar energy panels"},
		{`solar OR wind AND NOT hail`, "solar wind"},
		{`(solar OR wind) site:example.org lang:pt`, "solar wind"},
		{`title:Energía title:"Grande Sertão"`, "energia grande sertao"},
		{`-"not this" after:2024-01-01 date:2024-01..2024-03 that`, "that"},
		{`SOLAR solar Solar`, "solar"},
		{`"unterminated phrase`, "unterminated phrase"},
		{`:weird field: -`, "weird"},
		{``, ""},
	} {
		if got := strings.Join(QueryTerms(tc.q), " "); got != tc.want {
			t.Errorf("QueryTerms(%q) = %q; want %q", tc.q, got, tc.want)
		}
	}
}

// suffixAnalyzer is a stand-in stemmer: lower case, "ing"/"s" removed.
type suffixAnalyzer struct{}

func (suffixAnalyzer) Terms(lang, s string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(s)) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "ing"), "s")
		out = append(out, w)
	}
	return out
}

func TestHighlight(t *testing.T) {
	for _, tc := range []struct {
		text  string
		terms []string
		an    TermAnalyzer
		want  string
	}{
		{"Solar panels & <b>solar</b> power", []string{"solar"}, nil, "<mark>Solar</mark> panels &amp; &lt;b&gt;<mark>solar</mark>&lt;/b&gt; power"},
		{"Ação e acao", []string{"acao"}, nil, "<mark>Ação</mark> e <mark>acao</mark>"},
		{"crawling crawls crawl crawler", []string{"crawl"}, suffixAnalyzer{}, "<mark>crawling</mark> <mark>crawls</mark> <mark>crawl</mark> crawler"},
		{"solarium solar", []string{"solar"}, nil, "solarium <mark>solar</mark>"},
		{"nothing here", nil, nil, "nothing here"},
		{"x<y", []string{"zzz"}, nil, "x&lt;y"},
	} {
		if got := string(Highlight(tc.text, tc.terms, "en", tc.an)); got != tc.want {
			t.Errorf("Highlight(%q, %q) = %q; want %q", tc.text, tc.terms, got, tc.want)
		}
	}
}

func TestInlineCodeDetector(t *testing.T) {
	for page, want := range map[string]int{
		`<p>fine</p><script src="/static/a.js"></script>`:  0,
		`<p>&lt;script&gt; onerror= as text</p>`:           0,
		`<style>p{}</style>`:                               1,
		`<p style="color:red">x</p>`:                       1,
		`<img src=x onerror="y">`:                          1,
		`<script>alert(1)</script>`:                        1,
		`<a href=" javascript:alert(1)">x</a>`:             1,
		`<script src="https://cdn.example/x.js"></script>`: 1,
	} {
		if got := inlineCode(page); len(got) != want {
			t.Errorf("inlineCode(%q) = %v; want %d problems", page, got, want)
		}
	}
}

// stripMarks removes the <mark> tags a safe snippet may contain and decodes entities: what
// is left is the text the reader sees.
func stripMarks(s string) string {
	return html.UnescapeString(strings.NewReplacer(markOpen, "", markClose, "").Replace(s))
}

// checkOnlyMarks fails when out has markup other than balanced <mark> elements.
func checkOnlyMarks(t *testing.T, out string) {
	t.Helper()
	rest := strings.NewReplacer(markOpen, "", markClose, "").Replace(out)
	if strings.ContainsAny(rest, "<>\"") {
		t.Fatalf("output has markup besides <mark>: %q", out)
	}
	if strings.Count(out, markOpen) != strings.Count(out, markClose) {
		t.Fatalf("unbalanced marks: %q", out)
	}
	depth := 0
	for s := out; s != ""; {
		switch {
		case strings.HasPrefix(s, markOpen):
			depth++
			s = s[len(markOpen):]
		case strings.HasPrefix(s, markClose):
			depth--
			s = s[len(markClose):]
		default:
			s = s[1:]
		}
		if depth < 0 || depth > 1 {
			t.Fatalf("marks nested or closed before opened: %q", out)
		}
	}
}

func FuzzSafeSnippet(f *testing.F) {
	for _, s := range []string{"a <mark>b</mark> c", "<script>x</script>", "&amp;&lt;mark&gt;", "<mark><mark></mark>", "&#0;&#x110000;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(SafeSnippet(s))
		checkOnlyMarks(t, out)
		// Idempotent: sanitizing a sanitized snippet changes nothing.
		if again := string(SafeSnippet(out)); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

func FuzzHighlight(f *testing.F) {
	f.Add("Solar <b>panels</b> & Ação", "solar ação")
	f.Add("x\xffy solar", `"solar" -x`)
	f.Fuzz(func(t *testing.T, text, query string) {
		if !utf8.ValidString(text) {
			return // documents are UTF-8 by the time they are indexed
		}
		out := string(Highlight(text, QueryTerms(query), "en", nil))
		checkOnlyMarks(t, out)
		if got := stripMarks(out); got != text {
			t.Fatalf("the text changed: %q -> %q", text, got)
		}
	})
}

func FuzzQueryTerms(f *testing.F) {
	for _, q := range []string{`"a b" -c d:e (f OR g)`, `title:"x`, `-`, `::`, `+"`} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, term := range QueryTerms(q) {
			if term == "" || strings.ContainsAny(term, " \"():") {
				t.Fatalf("QueryTerms(%q) gave %q", q, term)
			}
		}
	})
}

func BenchmarkHighlight(b *testing.B) {
	text := strings.Repeat("Solar panels convert light into electricity; ação and energía matter. ", 2000) // ~140 KB
	terms := QueryTerms("solar energia")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Highlight(text, terms, "en", nil)
	}
}
