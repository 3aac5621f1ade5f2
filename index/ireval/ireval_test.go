package ireval

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/index"
)

func TestAveragePrecision(t *testing.T) {
	gains := map[string]int{"a": 1, "b": 3, "c": 2}
	tests := []struct {
		ranking []string
		want    float64
	}{
		{[]string{"a", "b", "c"}, 1},
		{[]string{"x", "a", "y", "b"}, (1.0/2 + 2.0/4) / 3},
		{[]string{"x", "y"}, 0},
		{[]string{"a", "a", "a"}, 1.0 / 3}, // a repeated document counts once
	}
	for _, tt := range tests {
		if got := AveragePrecision(tt.ranking, gains); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("AP(%v) = %g, want %g", tt.ranking, got, tt.want)
		}
	}
}

func TestNDCG(t *testing.T) {
	gains := map[string]int{"a": 3, "b": 2, "c": 1}
	if got := NDCG([]string{"a", "b", "c"}, gains, 10); math.Abs(got-1) > 1e-12 {
		t.Errorf("ideal ranking: nDCG %g", got)
	}
	// Reversed: DCG = 1 + 2/log2(3) + 3/log2(4); IDCG = 3 + 2/log2(3) + 1/2.
	want := (1 + 2/math.Log2(3) + 3.0/2) / (3 + 2/math.Log2(3) + 1.0/2)
	if got := NDCG([]string{"c", "b", "a"}, gains, 10); math.Abs(got-want) > 1e-12 {
		t.Errorf("reversed: nDCG %g, want %g", got, want)
	}
	// Cut at 1: only the first result counts, against the best possible first result.
	if got := NDCG([]string{"b", "a"}, gains, 1); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("nDCG@1 = %g, want 2/3", got)
	}
	if got := NDCG([]string{"x"}, map[string]int{}, 10); got != 0 {
		t.Errorf("no judgements: %g", got)
	}
}

func TestBM25Textbook(t *testing.T) {
	// Three documents; "reactor" occurs in two. k1 = 1.2, b = 0.75, average length 2,
	// idf = ln(1 + (3 − 2 + 0.5)/(2 + 0.5)) = ln 1.6.
	bm, err := NewBM25([]string{"1", "2", "3"}, []string{"reactor reactor core", "reactor", "solar panel"}, 1.2, 0.75)
	if err != nil {
		t.Fatal(err)
	}
	idf := math.Log(1.6)
	want := map[int]float64{
		0: idf * 2 * 2.2 / (2 + 1.2*(0.25+0.75*3.0/2)), // tf 2, length 3
		1: idf * 1 * 2.2 / (1 + 1.2*(0.25+0.75*1.0/2)), // tf 1, length 1
	}
	got := bm.scores("Reactor")
	if len(got) != 2 {
		t.Fatalf("scores %v", got)
	}
	for d, w := range want {
		if math.Abs(got[d]-w) > 1e-12 {
			t.Errorf("document %d: score %g, want %g", d, got[d], w)
		}
	}
	if r := bm.Search("reactor the", 10); len(r) != 2 || r[0] != "2" {
		t.Errorf("ranking %v: the short document first", r)
	}
}

// cranfieldDir finds ../shared/testdata/cranfield from the module root.
func cranfieldDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "testdata", "cranfield")
	if _, err := os.Stat(filepath.Join(c, "cran.all.1400")); err != nil {
		t.Skipf("the Cranfield collection is not at %s (see the project README's test data notes): %v", c, err)
	}
	return c
}

func TestLoadCranfield(t *testing.T) {
	c, err := LoadCranfield(cranfieldDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) != 1400 || len(c.Queries) != 225 || len(c.Grades) != 225 {
		t.Fatalf("%d docs, %d queries, judgements for %d queries", len(c.Docs), len(c.Queries), len(c.Grades))
	}
	// The query-numbering pitfall: the third query is .I 004 and is judged as query 3.
	if q := c.Queries[2]; q.Num != 3 || q.ID != "004" {
		t.Errorf("third query: %+v", q)
	}
	// cranqrel: "1 184 2" is grade 2 → gain 3; "1 486 -1" is not a judgement.
	if g := c.Grades[1]["184"]; g != 3 {
		t.Errorf("gain of 184 for query 1 = %d, want 3", g)
	}
	if _, ok := c.Grades[1]["486"]; ok {
		t.Error("grade −1 kept as a judgement")
	}
	if d := c.Docs[0]; d.ID != "1" || d.Title != "experimental investigation of the aerodynamics of a wing in a slipstream ." {
		t.Errorf("first document: %+v", d)
	}
}

// TestSondaBeatsBaseline is the retrieval acceptance test: sonda's search beats plain BM25
// on MAP and nDCG@10, over all queries and over the half not used to tune the ranking.
func TestSondaBeatsBaseline(t *testing.T) {
	c, err := LoadCranfield(cranfieldDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := Load(ctx, ix, c); err != nil {
		t.Fatal(err)
	}
	rows, err := Compare(ctx, c, ix)
	if err != nil {
		t.Fatal(err)
	}
	base, sonda := rows[0], rows[1]
	for _, r := range rows {
		t.Logf("%-55s all MAP %.4f nDCG@10 %.4f | tune %.4f %.4f | test %.4f %.4f", r.System,
			r.All.MAP, r.All.NDCG10, r.Tune.MAP, r.Tune.NDCG10, r.Test.MAP, r.Test.NDCG10)
	}
	for _, cmp := range []struct {
		name        string
		sonda, base Scores
	}{{"all", sonda.All, base.All}, {"test half", sonda.Test, base.Test}} {
		if cmp.sonda.MAP <= cmp.base.MAP || cmp.sonda.NDCG10 <= cmp.base.NDCG10 {
			t.Errorf("%s: sonda MAP %.4f nDCG@10 %.4f does not beat the baseline's %.4f %.4f",
				cmp.name, cmp.sonda.MAP, cmp.sonda.NDCG10, cmp.base.MAP, cmp.base.NDCG10)
		}
	}
}

func TestSite(t *testing.T) {
	c := &Collection{}
	for i := 1; i <= SitePerList+3; i++ {
		id := strconv.Itoa(i)
		c.Docs = append(c.Docs, Doc{ID: id, Title: "title <" + id + ">", Text: "text of abstract " + id, Authors: "a. author"})
	}
	srv := httptest.NewServer(NewSite(c))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := get(DocPath("7"))
	for _, want := range []string{"<title>title &lt;7&gt;</title>", "<h1>title &lt;7&gt;</h1>", "text of abstract 7", `href="/doc/6"`, `href="/doc/8"`, `href="/list/1"`, "<nav>"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("doc page (%d) lacks %q:\n%s", code, want, body)
		}
	}
	if _, body := get("/list/2"); !strings.Contains(body, `href="/doc/51"`) || strings.Contains(body, `href="/doc/50"`) || !strings.Contains(body, `href="/list/1"`) {
		t.Errorf("second listing page:\n%s", body)
	}
	if _, body := get("/"); !strings.Contains(body, `href="/list/2"`) {
		t.Errorf("home page does not link every listing page:\n%s", body)
	}
	for _, p := range []string{"/doc/999", "/list/0", "/list/3", "/nothing"} {
		if code, _ := get(p); code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, code)
		}
	}
	// The portal template: the same pages in plain <div>s, with other abstracts' titles.
	portal := NewSite(c)
	portal.Template = TemplatePortal
	psrv := httptest.NewServer(portal)
	defer psrv.Close()
	res, err := http.Get(psrv.URL + DocPath("7"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(b)
	for _, want := range []string{"<title>title &lt;7&gt; - AeroPortal research library</title>", "<h2>title &lt;7&gt;</h2>", "text of abstract 7",
		`<a href="/doc/14">title &lt;14&gt;</a>`, "Popular topics", `href="/list/1"`} {
		if res.StatusCode != 200 || !strings.Contains(page, want) {
			t.Errorf("portal doc page (%d) lacks %q:\n%s", res.StatusCode, want, page)
		}
	}
	for _, landmark := range []string{"<nav", "<aside", "<footer", "<header", "<main", "<article"} {
		if strings.Contains(page, landmark) {
			t.Errorf("portal doc page has %s: it must be plain <div>s", landmark)
		}
	}
	if id, ok := DocOf("http://cranfield.test/doc/42"); !ok || id != "42" {
		t.Errorf("DocOf = %q, %v", id, ok)
	}
	if _, ok := DocOf("http://cranfield.test/list/1"); ok {
		t.Error("a listing page is no abstract")
	}
}
