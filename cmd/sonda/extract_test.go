package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const extractPage = `<html lang="pt-BR"><head><meta charset="iso-8859-1">
<meta property="og:title" content="Chuva forte atinge a capital">
<meta property="article:published_time" content="2018-05-12T05:00:00-03:00">
<link rel="canonical" href="/noticias/chuva.html"></head><body><article>
<p>A chuva forte atingiu a capital nesta madrugada e deixou vários bairros sem energia elétrica durante horas.</p>
<p>Segundo a defesa civil, não houve feridos, mas árvores caíram em ruas do centro e da zona norte da cidade.</p>
<p>A previsão indica que o tempo deve continuar instável até o fim de semana, com possibilidade de novas tempestades.</p>
</article></body></html>`

func writePages(t *testing.T) (dir string, files []string) {
	t.Helper()
	dir = t.TempDir()
	latin1 := strings.NewReplacer("á", "\xe1", "ã", "\xe3", "é", "\xe9", "í", "\xed", "ç", "\xe7", "õ", "\xf5").Replace(extractPage)
	for i, body := range []string{latin1, "<html><body><nav><a href='/'>Home</a></nav></body></html>"} {
		f := filepath.Join(dir, []string{"a.html", "b.html"}[i])
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

func TestExtractOneFile(t *testing.T) {
	_, files := writePages(t)
	out, stderr, code := run(t, nil, "extract", "--url", "https://news.example/x/chuva", files[0])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("one file must print one JSON object: %v\n%s", err, out)
	}
	if a["title"] != "Chuva forte atinge a capital" || a["published"] != "2018-05-12T05:00:00-03:00" ||
		a["canonical_url"] != "https://news.example/noticias/chuva.html" || a["url"] != "https://news.example/x/chuva" ||
		a["language"] != "pt-BR" || a["is_article"] != true || a["file"] != nil {
		t.Errorf("extracted %v", a)
	}
	if body, _ := json.Marshal(a["body"]); !strings.Contains(string(body), "não houve feridos") {
		t.Errorf("ISO-8859-1 page not decoded: %s", body)
	}
	if text, _ := a["text"].(string); !strings.Contains(text, "não houve feridos") || strings.Contains(text, `"kind"`) {
		t.Errorf("text must be the body as one plain string: %q", text)
	}
}

// TestExtractUndeclaredUTF8 reads a UTF-8 page that declares no charset and has no byte
// above 0x7F in its first 1024: it must be read as UTF-8, as the crawler reads it. `sonda
// extract` once decoded such pages as windows-1252 (every "ã" became "Ã£"), which cost
// 0.035 body F1 on the Readability pages (issue 13).
func TestExtractUndeclaredUTF8(t *testing.T) {
	page := "<html><head><title>Chuva</title>" + strings.Repeat("<!-- padding -->", 80) + "</head><body><article>" +
		strings.Repeat("<p>A chuva forte atingiu a região metropolitana, mas não houve feridos segundo a Defesa Civil.</p>", 8) +
		"</article></body></html>"
	f := filepath.Join(t.TempDir(), "utf8.html")
	if err := os.WriteFile(f, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, nil, "extract", f)
	var a map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if text, _ := a["text"].(string); !strings.Contains(text, "região metropolitana, mas não houve feridos") {
		t.Errorf("undeclared UTF-8 page misread: %q", text)
	}
}

func TestExtractSeveralFiles(t *testing.T) {
	dir, files := writePages(t)
	missing := filepath.Join(dir, "missing.html")
	out, stderr, code := run(t, nil, "extract", "--workers", "2", files[0], files[1], missing)
	if code != 1 || !strings.Contains(stderr, "missing.html") {
		t.Errorf("a missing file: exit %d, stderr %q; want 1 and the file named", code, stderr)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON lines: %v: %s", err, sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines for 3 files:\n%s", len(lines), out)
	}
	for i, f := range append(files, missing) {
		if lines[i]["file"] != f {
			t.Errorf("line %d is for %v, want %s (input order)", i, lines[i]["file"], f)
		}
	}
	if lines[0]["is_article"] != true || lines[1]["is_article"] != false || lines[1]["kind"] != "empty" || lines[2]["error"] == nil {
		t.Errorf("lines: %v", lines)
	}
}

func TestExtractUsage(t *testing.T) {
	_, files := writePages(t)
	for _, args := range [][]string{
		{"extract", "--url", "https://a/", "--url", "https://b/", files[0]},
		{"extract", "--mode", "magic", files[0]},
		{"extract"},
	} {
		if _, _, code := run(t, nil, args...); code != 2 {
			t.Errorf("sonda %v: exit %d, want 2", args, code)
		}
	}
	out, _, code := run(t, nil, "extract", "--mode", "thesis", files[0])
	if code != 0 || !strings.Contains(out, `"mode": "thesis"`) || !strings.Contains(out, "Descrição indisponível") {
		t.Errorf("thesis mode: exit %d\n%s", code, out)
	}
}

func TestEvalExtraction(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "testdata", "readability")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("test set %s not found: %v", dir, err)
	}
	// A copy of three cases keeps the command test quick; the full evaluation is exteval's.
	small := t.TempDir()
	for _, c := range []string{"aclu", "nytimes-1", "lemonde-1"} {
		if err := os.CopyFS(filepath.Join(small, c), os.DirFS(filepath.Join(dir, c))); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := run(t, nil, "eval", "extraction", small)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"body F1", "sonda", "trafilatura", "thesis", "docs/cpu-s", "vs base", "held-out"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval extraction output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, nil, "eval", "extraction", "--modes", "sonda", "--per-page", "2", small)
	if code != 0 || !strings.Contains(out, "by the stage that produced the body") || !strings.Contains(out, "trafilatura") {
		t.Errorf("--per-page: exit %d:\n%s", code, out)
	}
	out, _, code = run(t, nil, "eval", "extraction", "--modes", "sonda", "--baseline", "", "--json", small)
	var r map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r["pages"] != 3.0 || r["f1"].(float64) < 0.8 {
		t.Errorf("--json: exit %d: %s", code, out)
	}
	// A folder laid out like go-trafilatura's module is its benchmark, scored by strings.
	bench := t.TempDir()
	page := "<html><body><article>" + strings.Repeat("<p>The harbour reopened after the storm, and the ferries ran again on the old timetable for the whole week.</p>", 5) + "</article><footer>Impressum</footer></body></html>"
	for name, text := range map[string]string{
		"scripts/comparison/data.go":         "package main\n\nvar comparisonData = map[string]ComparisonEntry{\n\t\"https://example.org/harbour\": {File: \"harbour.html\", With: []string{\"The harbour reopened\"}, Without: []string{\"Impressum\"}},\n}\n",
		"test-files/comparison/harbour.html": page,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(bench, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bench, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code = run(t, nil, "eval", "extraction", "--modes", "sonda", bench)
	if code != 0 || !strings.Contains(out, "trafilatura-bench") || !strings.Contains(out, "1.000") {
		t.Errorf("eval extraction of a go-trafilatura-like set: exit %d:\n%s%s", code, out, stderr)
	}
}
