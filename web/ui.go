package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// assetVersion maps each static file to a hash of its content: pages link to
// /static/app.css?v=HASH, which may then be cached for good.
var assetVersion = func() map[string]string {
	m := map[string]string{}
	fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[strings.TrimPrefix(p, "static/")] = hex.EncodeToString(sum[:6])
		return nil
	})
	return m
}()

func assetURL(name string) (string, error) {
	v, ok := assetVersion[name]
	if !ok {
		return "", fmt.Errorf("web: no static file %q", name)
	}
	return "/static/" + name + "?v=" + v, nil
}

var staticFiles = func() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	return http.FileServerFS(sub)
}()

func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	v, ok := assetVersion[name]
	if !ok {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	}
	if r.URL.Query().Get("v") == v {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+v+`"`)
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + name
	staticFiles.ServeHTTP(w, r2)
}

// templates are the parsed pages, each the layout plus its own content block.
type templates struct {
	byName map[string]*template.Template
}

var pageNames = []string{"home", "results", "document", "relations", "dashboard", "error", "topics", "article", "datasets"}

func parseTemplates() (*templates, error) {
	t := &templates{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		tp, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		t.byName[name] = tp
	}
	return t, nil
}

var templateFuncs = template.FuncMap{
	"asset":    assetURL,
	"num":      formatCount,
	"date":     func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"datetime": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"stamp":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"score":    func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
	"percent":  func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"snippet":  SafeSnippet,
	"short":    shorten,
	"add":      func(a, b int) int { return a + b },
	"divf":     func(a, b float64) float64 { return a / b },
	"value":    formatValue,
	"searchURL": func(q string, page int, kind string) string {
		return searchURL(q, page, kind)
	},
	"docURL": func(id, q string) string {
		v := url.Values{"id": {id}}
		if q != "" {
			v.Set("q", q)
		}
		return "/doc?" + v.Encode()
	},
	"relURL": func(u string) string { return "/relations?" + url.Values{"url": {u}}.Encode() },
	"idURL":  func(path, id string) string { return path + "?" + url.Values{"id": {id}}.Encode() },
}

func searchURL(q string, page int, kind string) string {
	v := url.Values{"q": {q}}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if kind != "" {
		v.Set("kind", kind)
	}
	return "/search?" + v.Encode()
}

// formatCount writes a count with thousands separators: 12,345.
func formatCount(n any) string {
	var s string
	switch v := n.(type) {
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	default:
		return fmt.Sprint(n)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// shorten cuts s to at most n characters, with an ellipsis.
func shorten(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// formatValue writes a kind-specific field value for display.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04 UTC")
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	case []string:
		return strings.Join(x, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

type field struct {
	Name  string
	Value string
}

func sortedFields(m map[string]any) []field {
	out := make([]field, 0, len(m))
	for k, v := range m {
		if s := formatValue(v); s != "" {
			out = append(out, field{k, s})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// page is what every page template gets.
type page struct {
	Title string // for <title>
	Query string // in the header's search box
	Kind  string
	Nav   string // the current section: search or dashboard
	Data  any

	// The verticals this server has: the header links only to those (a link to a section
	// that answers 503 is a dead end). render sets them.
	HasDatasets, HasNews bool
}

func (s *Server) render(w http.ResponseWriter, code int, name string, p page) {
	p.HasDatasets, p.HasNews = s.o.Datasets != nil, s.o.News != nil
	var buf bytes.Buffer
	if err := s.pages.byName[name].Execute(&buf, p); err != nil {
		s.log.Error("rendering a page failed", "page", name, "error", err)
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

type errorData struct {
	Code    int
	Status  string
	Message string
}

func (s *Server) renderError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.render(w, code, "error", page{Title: http.StatusText(code), Query: r.URL.Query().Get("q"),
		Data: errorData{Code: code, Status: http.StatusText(code), Message: msg}})
}

type homeData struct {
	Stats   *Stats
	Crawl   *CrawlStatus
	Example string
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	d := homeData{}
	if s.o.Stats != nil {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		if st, err := s.o.Stats.Stats(ctx); err == nil {
			d.Stats = &st
		} else {
			s.log.Warn("statistics for the home page failed", "error", err)
		}
	}
	if s.o.Crawl != nil {
		st := s.o.Crawl.Status()
		d.Crawl = &st
	}
	s.render(w, http.StatusOK, "home", page{Title: "Search", Nav: "home", Data: d})
}

// resultsData is the results page.
type resultsData struct {
	Result     *SearchResult
	Hits       []hitView
	Facets     []facetGroup
	First      int // rank of the first hit
	Last       int
	Pages      []pageLink
	Prev, Next string
	Capped     bool // more results exist than are served
	Error      *queryProblem
}

// hitView is a result as the page shows it. Its fields are its own rather than an
// embedded Hit: templates look fields of embedded structs up by a slow reflective search.
type hitView struct {
	ID, Kind, URL, Title, Snippet, Host string
	Score                               float64
	Fetched                             time.Time
	InLinks, Rank                       int
	FieldList                           []field
}

type facetGroup struct {
	Name   string
	Label  string
	Values []facetLink
}

type facetLink struct {
	Value, Label string
	Count        int
	URL          string // search with this filter added (or removed, when Active)
	Active       bool
}

type pageLink struct {
	Number  int
	URL     string
	Current bool
}

// queryProblem shows a malformed query with the place of the problem marked.
type queryProblem struct {
	Message            string
	Before, At, After  string
	HasPosition, AtEnd bool
}

var facetLabels = map[string]string{"site": "Site", "host": "Site", "type": "Type", "kind": "Kind", "lang": "Language", "date": "Date", "topic": "Topic",
	"format": "Format", "crs": "CRS", "producer": "Producer"}

// facetOrder puts the usual facets first; others follow by name.
var facetOrder = map[string]int{"site": 0, "host": 0, "kind": 1, "type": 2, "lang": 3, "date": 4, "topic": 5}

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	p, err := s.parseSearch(r.URL.Query(), false)
	p.noFacets = false // the results page shows them
	pg := page{Title: p.q, Query: p.q, Kind: p.kind, Nav: "search"}
	if err != nil {
		pg.Title = "Bad request"
		pg.Data = resultsData{Error: &queryProblem{Message: err.Error()}}
		s.render(w, http.StatusBadRequest, "results", pg)
		return
	}
	if p.q == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if s.o.Searcher == nil {
		s.renderError(w, r, http.StatusServiceUnavailable, "search is not available: this server has no index")
		return
	}
	res, err := s.search(r, p)
	if err != nil {
		code, msg, pos := s.backendError(w, r, "search", err)
		prob := &queryProblem{Message: msg}
		if pos != nil {
			at := max(0, min(*pos, len(p.q)))
			for at > 0 && !utf8.RuneStart(p.q[at]) && at < len(p.q) {
				at--
			}
			_, size := utf8.DecodeRuneInString(p.q[at:])
			prob.HasPosition = true
			prob.Before, prob.At, prob.After = p.q[:at], p.q[at:at+size], p.q[at+size:]
			prob.AtEnd = at >= len(p.q)
		}
		pg.Data = resultsData{Error: prob}
		s.render(w, code, "results", pg)
		return
	}
	d := resultsData{Result: res, First: (p.page-1)*p.perPage + 1}
	d.Last = d.First + len(res.Hits) - 1
	for i, h := range res.Hits {
		d.Hits = append(d.Hits, hitView{ID: h.ID, Kind: h.Kind, URL: h.URL, Title: h.Title, Snippet: h.Snippet, Host: h.Host,
			Score: h.Score, Fetched: h.Fetched, InLinks: h.InLinks, Rank: d.First + i, FieldList: sortedFields(h.Fields)})
	}
	d.Facets = facetGroups(p.q, res.Facets, func(q string) string { return searchURL(q, 1, p.kind) })
	total := int(min(res.Total, uint64(s.o.MaxResults)))
	d.Capped = res.Total > uint64(s.o.MaxResults)
	lastPage := max(1, (total+p.perPage-1)/p.perPage)
	for n := max(1, p.page-4); n <= min(lastPage, max(1, p.page-4)+9); n++ {
		d.Pages = append(d.Pages, pageLink{Number: n, URL: searchURL(p.q, n, p.kind), Current: n == p.page})
	}
	if p.page > 1 {
		d.Prev = searchURL(p.q, p.page-1, p.kind)
	}
	if p.page < lastPage {
		d.Next = searchURL(p.q, p.page+1, p.kind)
	}
	if len(d.Pages) == 1 {
		d.Pages = nil
	}
	s.render(w, http.StatusOK, "results", pg.with(d))
}

func (p page) with(d any) page { p.Data = d; return p }

// facetGroups turns the engine's facets into links that add the facet's filter to the
// query q (or remove it when q has it already); link makes the page's URL for a query.
func facetGroups(q string, facets map[string][]FacetCount, link func(q string) string) []facetGroup {
	var out []facetGroup
	for name, values := range facets {
		g := facetGroup{Name: name, Label: facetLabels[name]}
		if g.Label == "" {
			g.Label = strings.ToUpper(name[:1]) + name[1:]
		}
		for _, v := range values {
			if v.Filter == "" || v.Count == 0 {
				continue
			}
			l := facetLink{Value: v.Value, Label: v.Value, Count: v.Count}
			if has, without := removeClause(q, v.Filter); has {
				l.Active = true
				l.URL = link(without)
			} else {
				l.URL = link(q + " " + v.Filter)
			}
			g.Values = append(g.Values, l)
		}
		if len(g.Values) > 0 {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iok := facetOrder[out[i].Name]
		oj, jok := facetOrder[out[j].Name]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// removeClause reports whether q contains clause as a whole space-separated token
// sequence, and q without it.
func removeClause(q, clause string) (bool, string) {
	fields := strings.Fields(q)
	cf := strings.Fields(clause)
	if len(cf) == 0 {
		return false, q
	}
	for i := 0; i+len(cf) <= len(fields); i++ {
		match := true
		for j := range cf {
			if fields[i+j] != cf[j] {
				match = false
				break
			}
		}
		if match {
			rest := append(append([]string{}, fields[:i]...), fields[i+len(cf):]...)
			return true, strings.Join(rest, " ")
		}
	}
	return false, q
}

// maxShownBody bounds the cached text shown on the document view; the API returns all.
const maxShownBody = 256 << 10

type documentData struct {
	Doc       Document
	Body      template.HTML
	Truncated bool
	Fields    []field
	Relevance string
	Terms     []string
}

func (s *Server) documentPage(w http.ResponseWriter, r *http.Request) {
	d, ok := s.lookupDocument(w, r)
	if !ok {
		return
	}
	q := r.URL.Query().Get("q")
	body, truncated := d.Body, false
	if len(body) > maxShownBody {
		cut := maxShownBody
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body, truncated = body[:cut], true
	}
	terms := QueryTerms(q)
	data := documentData{Doc: d, Body: Highlight(body, terms, d.Lang, s.o.Analyzer), Truncated: truncated,
		Fields: sortedFields(d.Fields), Terms: terms}
	if d.Relevance >= 0 {
		data.Relevance = strconv.FormatFloat(d.Relevance, 'f', 3, 64)
	}
	title := d.Title
	if title == "" {
		title = d.URL
	}
	s.render(w, http.StatusOK, "document", page{Title: title, Query: q, Nav: "search", Data: data})
}

type relationsData struct {
	apiRelations
	Limit int
	Host  string
}

func (s *Server) relationsPage(w http.ResponseWriter, r *http.Request) {
	rel, ok := s.relations(w, r)
	if !ok {
		return
	}
	limit, _ := intParam(r.URL.Query(), "limit", 100, 1, 1000)
	host := ""
	if u, err := url.Parse(rel.URL); err == nil {
		host = u.Host
	}
	s.render(w, http.StatusOK, "relations", page{Title: "Links of " + rel.URL, Nav: "search",
		Data: relationsData{apiRelations: rel, Limit: limit, Host: host}})
}

type dashboardData struct {
	Status     CrawlStatus
	Seeds      []string // the first maxListedSeeds
	MoreSeeds  int      // how many more there are
	HasControl bool
	HasWorkers bool
	Workers    []Worker
	WorkersErr string
	HasCluster bool
	Cluster    ClusterView
	ClusterErr string
}

// maxListedSeeds bounds the seeds the dashboard lists (/api/crawl/seeds has them all).
const maxListedSeeds = 100

func (s *Server) dashboardPage(w http.ResponseWriter, r *http.Request) {
	d := dashboardData{HasControl: s.o.Crawl != nil}
	if s.o.Crawl != nil {
		d.Status = normalizeStatus(s.o.Crawl.Status())
		d.Seeds, _ = s.o.Crawl.Seeds(r.Context())
		if len(d.Seeds) > maxListedSeeds {
			d.Seeds, d.MoreSeeds = d.Seeds[:maxListedSeeds], len(d.Seeds)-maxListedSeeds
		}
	}
	if s.o.Workers != nil {
		d.HasWorkers = true
		var err error
		if d.Workers, err = s.o.Workers.Workers(r.Context()); err != nil {
			d.WorkersErr = err.Error()
		}
	}
	if s.o.Cluster != nil {
		d.HasCluster = true
		var err error
		if d.Cluster, err = s.o.Cluster.ClusterStatus(r.Context()); err != nil {
			d.ClusterErr = err.Error()
		}
	}
	s.render(w, http.StatusOK, "dashboard", page{Title: "Crawl dashboard", Nav: "dashboard", Data: d})
}
