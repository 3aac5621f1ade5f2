// Package exteval owns the evaluation of article extraction against a test set laid out
// like Mozilla Readability's (one folder per page with source.html, expected.html and
// expected-metadata.json) or Dragnet's (pages and gold texts): body precision, recall and F1
// with the shingle metric used in the field, and per-field accuracy for title, byline,
// publication time, site name and language; and against go-trafilatura's own benchmark,
// scored by the strings each body must and must not contain (snippets.go).
// `sonda eval extraction` prints its results; docs/benchmarks.md reports them.
//
// Body metric: both texts are tokenized with the Unicode \w+ rule (letters, numbers,
// underscore), split into multisets of 4-word shingles; per page tp counts shared shingles,
// fp extra ones in the output and fn missing ones; precision and recall are averaged over
// pages and F1 is computed from the two means. A ratio whose denominator is zero (no
// output, or an empty expected text) counts 1 when both sides are empty and 0 otherwise,
// so an extractor cannot gain by returning nothing.
//
// Field comparison is normalized: white space collapsed and case folded everywhere; a
// leading "by" dropped from bylines (Readability keeps it, the cascade does not); times
// compared as instants when the expected value has a zone and as wall-clock time when it
// has none, to the precision the expected value gives (a day, a minute, a second);
// languages compared by primary subtag ("en-US" and "en" name one language).
package exteval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/sonda-search/sonda/extract"
	"github.com/sonda-search/sonda/fetch"
)

// TunedOn is the test set the cascade's decisions are tuned on (a folder name under
// ../shared/testdata); every other set is held out. Issue 13: tune on one set, check on
// another, report both.
const TunedOn = "dragnet"

// Role says whether the test set in dir is the one the cascade is tuned on ("tuned") or
// held out ("held-out").
func Role(dir string) string {
	if filepath.Base(filepath.Clean(dir)) == TunedOn {
		return "tuned"
	}
	return "held-out"
}

// SetName is how reports name the test set in dir: its folder's name, or
// "trafilatura-bench" for go-trafilatura's benchmark.
func SetName(dir string) string {
	if isSnippetSet(dir) {
		return "trafilatura-bench"
	}
	return filepath.Base(filepath.Clean(dir))
}

// Case is one page of the test set.
type Case struct {
	Name     string
	URL      string // where the page was fetched, when the set says
	Source   []byte // the page as fetched
	Expected string // the expected body as plain text
	Meta     Expected
	// Snippets, when set, is the page's ground truth instead of Expected: strings its
	// body must and must not contain.
	Snippets *Snippets
}

// Expected is the metadata ground truth; nil fields are not evaluated for the page.
type Expected struct {
	Title         *string `json:"title"`
	Byline        *string `json:"byline"`
	PublishedTime *string `json:"publishedTime"`
	SiteName      *string `json:"siteName"`
	Lang          *string `json:"lang"`
	Readerable    *bool   `json:"readerable"`
}

// Load reads a test set in any layout it knows: go-trafilatura's benchmark when dir is
// that module's folder (loadSnippetSet), Dragnet's (dir/html/ID.html pages and
// dir/gold/ID.txt main texts cut by MainText, no metadata) when dir has both folders, else Readability's
// (one folder per page with source.html, expected.html and expected-metadata.json; folders
// without source.html are skipped). Pages are decoded to UTF-8 as a browser would decode a
// saved file, as the crawler decodes a page
// whose server declared no charset (fetch.ToUTF8): Dragnet's pages come in several charsets.
func Load(dir string) ([]Case, error) { return load(dir, false) }

// LoadWithComments is Load keeping each Dragnet gold text whole, the readers' comments
// after its separator included: how the set was scored before issue 13, kept to compare
// with those figures.
func LoadWithComments(dir string) ([]Case, error) { return load(dir, true) }

func load(dir string, keepComments bool) ([]Case, error) {
	if isSnippetSet(dir) {
		return loadSnippetSet(dir)
	}
	if isDir(filepath.Join(dir, "html")) && isDir(filepath.Join(dir, "gold")) {
		return loadDragnet(dir, keepComments)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("exteval: read test set: %w", err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, err := loadCase(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("exteval: no cases in %s (expected folders with source.html, expected.html and expected-metadata.json)", dir)
	}
	return cases, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// loadDragnet reads html/ID.html with gold/ID.txt (cut by MainText unless keepComments)
// as its expected body; a page without
// its gold text is an error (the set is incomplete), not a silent skip.
func loadDragnet(dir string, keepComments bool) ([]Case, error) {
	pages, err := filepath.Glob(filepath.Join(dir, "html", "*.html"))
	if err != nil {
		return nil, fmt.Errorf("exteval: read test set: %w", err)
	}
	sort.Strings(pages)
	cases := make([]Case, 0, len(pages))
	for _, p := range pages {
		id := strings.TrimSuffix(filepath.Base(p), ".html")
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("exteval: case %s: %w", id, err)
		}
		gold, err := os.ReadFile(filepath.Join(dir, "gold", id+".txt"))
		if err != nil {
			return nil, fmt.Errorf("exteval: case %s: page without its gold text: %w", id, err)
		}
		text := string(fetch.ToUTF8(gold, "text/plain"))
		if !keepComments {
			text = MainText(text)
		}
		cases = append(cases, Case{Name: id, Source: fetch.ToUTF8(src, "text/html"), Expected: text})
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("exteval: no pages in %s/html (expected ID.html pages with gold/ID.txt texts)", dir)
	}
	return cases, nil
}

// MainText is a Dragnet gold text without its readers' comments. The Dragnet study
// annotated the main content and the comments of each page in one file, the comments
// after a separator line of punctuation, usually "!@#$%^&*()  COMMENTS" (424 of the
// 1,381 files have one; a few spell it with characters missing or a different word).
// The set's README defines the gold as the main content without comments, and sonda,
// like go-trafilatura with ExcludeComments, leaves comments out of the body; scoring
// against the whole file would count every comment a page has as text both missed.
func MainText(gold string) string {
	for off := 0; off < len(gold); {
		end := strings.IndexByte(gold[off:], '\n')
		if end < 0 {
			end = len(gold)
		} else {
			end += off
		}
		if strings.Contains(gold[off:end], "^&*") {
			return gold[:off]
		}
		off = end + 1
	}
	return gold
}

func loadCase(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir)}
	var err error
	if c.Source, err = os.ReadFile(filepath.Join(dir, "source.html")); err != nil {
		return c, err
	}
	c.Source = fetch.ToUTF8(c.Source, "text/html")
	exp, err := os.ReadFile(filepath.Join(dir, "expected.html"))
	if err != nil {
		return c, fmt.Errorf("exteval: case %s: %w", c.Name, err)
	}
	c.Expected = HTMLText(exp)
	meta, err := os.ReadFile(filepath.Join(dir, "expected-metadata.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("exteval: case %s: %w", c.Name, err)
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &c.Meta); err != nil {
			return c, fmt.Errorf("exteval: case %s: expected-metadata.json: %w", c.Name, err)
		}
	}
	return c, nil
}

// HTMLText is the text of an HTML fragment, with a space at every element boundary so
// that words in adjacent blocks stay apart.
func HTMLText(b []byte) string {
	doc, err := nethtml.Parse(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(n *nethtml.Node, depth int)
	walk = func(n *nethtml.Node, depth int) {
		if depth > 512 {
			return
		}
		if n.Type == nethtml.TextNode {
			sb.WriteString(n.Data)
			return
		}
		if n.Type == nethtml.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
		if n.Type == nethtml.ElementNode {
			sb.WriteByte(' ')
		}
	}
	walk(doc, 0)
	return sb.String()
}

// Tokens splits text on the Unicode \w+ rule, lowercased (extract.Words: the extractor's
// vote compares bodies in the same tokens).
func Tokens(text string) []string { return extract.Words(text) }

// ShingleSize is the number of tokens in a shingle.
const ShingleSize = 4

// shingles is the multiset of n-token shingles of tokens; texts shorter than n give one
// shingle of all their tokens.
func shingles(tokens []string, n int) map[string]int {
	m := map[string]int{}
	if len(tokens) == 0 {
		return m
	}
	if len(tokens) < n {
		m[strings.Join(tokens, " ")]++
		return m
	}
	for i := 0; i+n <= len(tokens); i++ {
		m[strings.Join(tokens[i:i+n], " ")]++
	}
	return m
}

// BodyCounts compares an extracted text with the expected one: shared, extra and missing
// shingles.
func BodyCounts(got, want string) (tp, fp, fn int) {
	g, w := shingles(Tokens(got), ShingleSize), shingles(Tokens(want), ShingleSize)
	for k, gc := range g {
		wc := w[k]
		tp += min(gc, wc)
		fp += max(gc-wc, 0)
	}
	for k, wc := range w {
		fn += max(wc-g[k], 0)
	}
	return tp, fp, fn
}

func ratio(num, den int, otherEmpty bool) float64 {
	if den == 0 {
		if otherEmpty {
			return 1
		}
		return 0
	}
	return float64(num) / float64(den)
}

// Fields evaluated, in report order.
var Fields = []string{"title", "byline", "published", "site_name", "language"}

// PageResult is one page's outcome.
type PageResult struct {
	Name      string            `json:"name"`
	Precision float64           `json:"precision"`
	Recall    float64           `json:"recall"`
	Fields    map[string]bool   `json:"fields"`        // evaluated fields: correct or not
	Got       map[string]string `json:"got,omitempty"` // extracted values of wrong fields
	Want      map[string]string `json:"want,omitempty"`
	IsArticle bool              `json:"is_article"`
	Kind      string            `json:"kind"`
	BodyFrom  string            `json:"body_from,omitempty"`
	Err       string            `json:"error,omitempty"`
	Snippets  *SnippetCounts    `json:"snippets,omitempty"` // a snippet set's page: its strings
}

// FieldScore is the accuracy of one field.
type FieldScore struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
}

// Accuracy is Correct/Total (0 when no page has the field).
func (f FieldScore) Accuracy() float64 {
	if f.Total == 0 {
		return 0
	}
	return float64(f.Correct) / float64(f.Total)
}

// Result is an extractor's score on a test set.
type Result struct {
	Mode      extract.Mode          `json:"mode"`
	Pages     int                   `json:"pages"`
	Precision float64               `json:"precision"`
	Recall    float64               `json:"recall"`
	F1        float64               `json:"f1"`
	Fields    map[string]FieldScore `json:"fields"`
	// PublishedDay is published time judged by its calendar day only, which shows what an
	// extractor that finds dates but not times gets right.
	PublishedDay FieldScore `json:"published_day"`
	// Readerable counts pages whose IsArticle agrees with Readability's readerable flag.
	Readerable FieldScore `json:"readerable_agreement"`
	// Snippets pools the strings of a snippet set; Precision, Recall and F1 are then its
	// pooled scores rather than means over pages.
	Snippets *SnippetCounts `json:"snippets,omitempty"`
	Elapsed  time.Duration  `json:"elapsed_ns"`
	CPU      time.Duration  `json:"cpu_ns"` // process CPU time during the extraction (0 if unknown)
	Workers  int            `json:"workers"`
	PerPage  []PageResult   `json:"per_page,omitempty"`
}

// DocsPerSecond is the extraction rate over the run.
func (r Result) DocsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Pages) / r.Elapsed.Seconds()
}

// DocsPerCPUSecond is the extraction rate per second of CPU time: the rate one core
// sustains, whatever else the machine is running.
func (r Result) DocsPerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Pages) / r.CPU.Seconds()
}

// MetadataAccuracy is the mean accuracy over Fields.
func (r Result) MetadataAccuracy() float64 {
	sum := 0.0
	for _, f := range Fields {
		sum += r.Fields[f].Accuracy()
	}
	return sum / float64(len(Fields))
}

// Run extracts every case with ex on workers goroutines (at least 1) and scores the
// results. Only the extraction is timed, after one untimed warm-up extraction (the first
// call pays for lazily compiled patterns in the dependencies).
func Run(cases []Case, ex *extract.Extractor, workers int) Result {
	workers = max(workers, 1)
	if len(cases) > 0 {
		_, _ = ex.Extract(cases[0].Source, "")
	}
	arts := make([]*extract.Article, len(cases))
	errs := make([]error, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	start, cpuStart := time.Now(), cpuTime()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				arts[i], errs[i] = ex.Extract(cases[i].Source, cases[i].URL)
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	res := Result{Mode: ex.Mode(), Pages: len(cases), Elapsed: time.Since(start), CPU: cpuTime() - cpuStart, Workers: workers, Fields: map[string]FieldScore{}}
	var sumP, sumR float64
	for i, c := range cases {
		pr := score(c, arts[i], errs[i], &res)
		sumP += pr.Precision
		sumR += pr.Recall
		res.PerPage = append(res.PerPage, pr)
	}
	switch {
	case res.Snippets != nil:
		res.Precision, res.Recall = res.Snippets.scores()
	case len(cases) > 0:
		res.Precision, res.Recall = sumP/float64(len(cases)), sumR/float64(len(cases))
	}
	if res.Precision+res.Recall > 0 {
		res.F1 = 2 * res.Precision * res.Recall / (res.Precision + res.Recall)
	}
	return res
}

func score(c Case, a *extract.Article, err error, res *Result) PageResult {
	pr := PageResult{Name: c.Name, Fields: map[string]bool{}}
	if err != nil || a == nil {
		a = &extract.Article{}
		if err != nil {
			pr.Err = err.Error()
		}
	}
	pr.IsArticle, pr.Kind, pr.BodyFrom = a.IsArticle, a.Kind, a.Sources["body"]
	got := a.Text()
	if c.Snippets != nil {
		sc := CountSnippets(got, *c.Snippets)
		pr.Precision, pr.Recall = sc.scores()
		pr.Snippets = &sc
		if res.Snippets == nil {
			res.Snippets = &SnippetCounts{}
		}
		res.Snippets.add(sc)
	} else {
		tp, fp, fn := BodyCounts(got, c.Expected)
		gotEmpty, wantEmpty := tp+fp == 0, tp+fn == 0
		pr.Precision = ratio(tp, tp+fp, wantEmpty)
		pr.Recall = ratio(tp, tp+fn, gotEmpty)
	}

	check := func(field string, want *string, gotV string, equal func(got, want string) bool) {
		if want == nil || strings.TrimSpace(*want) == "" {
			return
		}
		ok := equal(gotV, *want)
		pr.Fields[field] = ok
		fs := res.Fields[field]
		fs.Total++
		if ok {
			fs.Correct++
		} else {
			if pr.Got == nil {
				pr.Got, pr.Want = map[string]string{}, map[string]string{}
			}
			pr.Got[field], pr.Want[field] = gotV, *want
		}
		res.Fields[field] = fs
	}
	published := ""
	if !a.Published.IsZero() {
		published = a.Published.Format(time.RFC3339Nano)
	}
	check("title", c.Meta.Title, a.Title, SameText)
	check("byline", c.Meta.Byline, strings.Join(a.Authors, ", "), SameByline)
	check("published", c.Meta.PublishedTime, published, SameTime)
	if w := c.Meta.PublishedTime; w != nil && strings.TrimSpace(*w) != "" {
		res.PublishedDay.Total++
		if SameDay(published, *w) {
			res.PublishedDay.Correct++
		}
	}
	check("site_name", c.Meta.SiteName, a.SiteName, SameText)
	check("language", c.Meta.Lang, a.Language, SameLanguage)
	if c.Meta.Readerable != nil {
		res.Readerable.Total++
		if *c.Meta.Readerable == a.IsArticle {
			res.Readerable.Correct++
		}
	}
	return pr
}

func normText(s string) string { return strings.ToLower(collapseSpace(s)) }

// SameText compares with white space collapsed and case folded.
func SameText(got, want string) bool { return normText(got) == normText(want) }

// SameByline is SameText after dropping a leading "by" and the punctuation around names.
func SameByline(got, want string) bool {
	strip := func(s string) string {
		s = normText(s)
		s = strings.TrimPrefix(s, "by:")
		s = strings.TrimPrefix(s, "by ")
		return strings.Trim(s, " ,.;:|-")
	}
	return strip(got) == strip(want)
}

// SameLanguage compares primary language subtags.
func SameLanguage(got, want string) bool {
	p := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if i := strings.IndexAny(s, "-_"); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return p(got) != "" && p(got) == p(want)
}

// SameTime compares an extracted RFC 3339 time with an expected one (see the package doc).
func SameTime(got, want string) bool {
	g, w, ok := parseTimes(got, want)
	if !ok {
		return false
	}
	precision := timePrecision(want)
	if precision == 24*time.Hour {
		return SameDay(got, want)
	}
	if hasZone(want) {
		return g.UTC().Truncate(precision).Equal(w.UTC().Truncate(precision))
	}
	// No zone: the expected value is a wall-clock reading; compare ours in its own zone.
	gw := time.Date(g.Year(), g.Month(), g.Day(), g.Hour(), g.Minute(), g.Second(), 0, time.UTC)
	return gw.Truncate(precision).Equal(w.Truncate(precision))
}

// SameDay reports whether an extracted RFC 3339 time falls on the expected day: in the
// expected value's zone when it has one, on the extracted wall clock otherwise.
func SameDay(got, want string) bool {
	g, w, ok := parseTimes(got, want)
	if !ok {
		return false
	}
	if hasZone(want) {
		g = g.In(w.Location())
	}
	return g.Year() == w.Year() && g.Month() == w.Month() && g.Day() == w.Day()
}

// parseTimes reads an extracted RFC 3339 time and an expected value in any format
// extract.ParseDate reads (zoneless values as UTC wall clock).
func parseTimes(got, want string) (g, w time.Time, ok bool) {
	g, err := time.Parse(time.RFC3339Nano, got)
	if err != nil {
		return g, w, false
	}
	w, ok = extract.ParseDate(want, "", time.UTC)
	return g, w, ok
}

// timePrecision is the unit of the last component an ISO 8601 value states.
func timePrecision(s string) time.Duration {
	s = strings.TrimSpace(s)
	t := strings.IndexAny(s, "T ")
	if t < 0 {
		return 24 * time.Hour
	}
	clock := s[t+1:]
	if i := strings.IndexAny(clock, "Z+-"); i >= 0 {
		clock = clock[:i]
	}
	if strings.Count(clock, ":") >= 2 {
		return time.Second
	}
	return time.Minute
}

// hasZone reports whether an ISO 8601 value ends with a zone designator.
func hasZone(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return true
	}
	t := strings.IndexAny(s, "T ")
	if t < 0 {
		return false
	}
	return strings.ContainsAny(s[t:], "+-")
}

// SortedFailures lists, for one field, the pages where it was wrong: name, got, want.
func (r Result) SortedFailures(field string) [][3]string {
	var out [][3]string
	for _, p := range r.PerPage {
		if ok, evaluated := p.Fields[field]; evaluated && !ok {
			out = append(out, [3]string{p.Name, p.Got[field], p.Want[field]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// F1 is the page's body F1 (0 when precision and recall are both 0).
func (p PageResult) F1() float64 {
	if p.Precision+p.Recall == 0 {
		return 0
	}
	return 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
}

// PageDiff is one page scored by an extractor and by the baseline.
type PageDiff struct {
	Name      string
	BodyFrom  string // the stage of the extractor that produced its body
	F1, Base  float64
	Precision float64
	Recall    float64
}

// Loss is how much the page's F1 falls below the baseline's (negative: a gain).
func (d PageDiff) Loss() float64 { return d.Base - d.F1 }

// Compare pairs r's pages with the baseline's, worst loss first. Both must come from one
// test set (the pages are matched by name).
func Compare(r, base Result) []PageDiff {
	baseF1 := make(map[string]float64, len(base.PerPage))
	for _, p := range base.PerPage {
		baseF1[p.Name] = p.F1()
	}
	out := make([]PageDiff, 0, len(r.PerPage))
	for _, p := range r.PerPage {
		out = append(out, PageDiff{Name: p.Name, BodyFrom: p.BodyFrom, F1: p.F1(), Base: baseF1[p.Name], Precision: p.Precision, Recall: p.Recall})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Loss() > out[j].Loss() })
	return out
}

// StageScore sums the pages whose body one stage of the cascade produced: how many, how
// many lose or gain against the baseline by more than 0.01 F1, and the mean F1 of each.
type StageScore struct {
	Stage              string
	Pages, Lost, Won   int
	MeanF1, MeanBaseF1 float64
}

// ByStage groups a comparison by the stage that produced each page's body.
func ByStage(diffs []PageDiff) []StageScore {
	idx := map[string]int{}
	var out []StageScore
	for _, d := range diffs {
		stage := d.BodyFrom
		if stage == "" {
			stage = "(none)"
		}
		i, ok := idx[stage]
		if !ok {
			i = len(out)
			idx[stage] = i
			out = append(out, StageScore{Stage: stage})
		}
		s := &out[i]
		s.Pages++
		s.MeanF1 += d.F1
		s.MeanBaseF1 += d.Base
		switch {
		case d.Loss() > 0.01:
			s.Lost++
		case d.Loss() < -0.01:
			s.Won++
		}
	}
	for i := range out {
		out[i].MeanF1 /= float64(out[i].Pages)
		out[i].MeanBaseF1 /= float64(out[i].Pages)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pages > out[j].Pages })
	return out
}
