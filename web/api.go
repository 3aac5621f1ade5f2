package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// requestTimeout bounds how long one search or lookup may take before the client is told
// to retry; a query the engine cannot answer in this time is not worth waiting for.
const requestTimeout = 10 * time.Second

// maxQueryLength bounds queries: longer ones are refused before reaching the parser.
const maxQueryLength = 2000

// searchParams are the validated parameters of a search, shared by the API and the page.
type searchParams struct {
	q       string
	page    int
	perPage int
	kind    string
	// noFacets: the API client asked facets=false. Facets count every match of the
	// query (see index.Result.FacetsOver), a share of a search's time on a large index
	// (see docs/benchmarks.md); a client that does not show them need not wait for them.
	noFacets bool
}

// parseSearch reads q, page, per_page, kind and facets; the error is a message for the user.
func (s *Server) parseSearch(v url.Values, needQuery bool) (searchParams, error) {
	p := searchParams{q: strings.TrimSpace(v.Get("q")), page: 1, perPage: s.o.PerPage, kind: strings.TrimSpace(v.Get("kind"))}
	if needQuery && p.q == "" {
		return p, errors.New("give a query with q=, e.g. /api/search?q=solar+energy")
	}
	if len(p.q) > maxQueryLength {
		return p, fmt.Errorf("the query is %d bytes long; at most %d are accepted", len(p.q), maxQueryLength)
	}
	var err error
	if p.page, err = intParam(v, "page", 1, 1, s.o.MaxResults); err != nil {
		return p, err
	}
	if p.perPage, err = intParam(v, "per_page", s.o.PerPage, 1, 100); err != nil {
		return p, err
	}
	switch f := strings.ToLower(strings.TrimSpace(v.Get("facets"))); f {
	case "", "true", "1":
	case "false", "0":
		p.noFacets = true
	default:
		return p, fmt.Errorf("facets must be true or false, not %q", f)
	}
	if (p.page-1)*p.perPage >= s.o.MaxResults {
		return p, fmt.Errorf("only the first %d results are served (page %d with %d per page starts beyond them); refine the query instead", s.o.MaxResults, p.page, p.perPage)
	}
	return p, nil
}

// intParam reads an integer query parameter within [lo, hi], def when absent.
func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := strings.TrimSpace(v.Get(name))
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// search runs a validated search with the request's deadline.
func (s *Server) search(r *http.Request, p searchParams) (*SearchResult, error) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	return s.o.Searcher.Search(ctx, SearchRequest{Query: p.q, Page: p.page, PerPage: p.perPage, Kind: p.kind, Facets: !p.noFacets})
}

// backendError maps a backend failure to a status and a message for the user, logging
// what the user does not need to see.
func (s *Server) backendError(w http.ResponseWriter, r *http.Request, what string, err error) (int, string, *int) {
	var qe *QueryError
	switch {
	case errors.As(err, &qe):
		pos := qe.Pos
		return http.StatusBadRequest, qe.Msg, &pos
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", "1")
		return http.StatusServiceUnavailable, "the server is busy: " + strings.TrimSuffix(err.Error(), ": "+ErrBusy.Error()), nil
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, strings.TrimSuffix(err.Error(), ": "+ErrUnavailable.Error()), nil
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, what + " took too long; try a narrower query or again later", nil
	case errors.Is(err, context.Canceled):
		return 499, "request canceled", nil // nginx's code for a client that went away
	}
	s.log.Error(what+" failed", "path", r.URL.Path, "query", r.URL.RawQuery, "error", err)
	return http.StatusInternalServerError, what + " failed; the server log has the details", nil
}

// apiHit is a result as the API publishes it (docs/architecture.md's contract).
type apiHit struct {
	ID      string         `json:"id"`
	URL     string         `json:"url"`
	Title   string         `json:"title"`
	Snippet string         `json:"snippet"` // HTML: escaped text with <mark> around matches
	Score   float64        `json:"score"`
	Kind    string         `json:"kind"`
	Rank    int            `json:"rank"` // 1-based position in the whole result list
	Host    string         `json:"host"`
	Fetched time.Time      `json:"fetched,omitzero"`
	InLinks int            `json:"in_links"`
	Fields  map[string]any `json:"fields,omitempty"`
}

type apiFacet struct {
	Value  string `json:"value"`
	Count  int    `json:"count"`
	Filter string `json:"filter,omitempty"`
}

type apiSearchResult struct {
	Query   string  `json:"query"`
	Total   uint64  `json:"total"`
	TookMS  float64 `json:"took_ms"`
	Relaxed bool    `json:"relaxed,omitempty"` // fewer documents had every word than fill the page
	// AllWords is how many documents have every word when Relaxed (they come first).
	AllWords uint64 `json:"all_words,omitempty"`
	// Partial says the answer is incomplete: some nodes of a cluster did not answer in time
	// (MissingShards names them), or the search stopped at its time budget (Total is then
	// a lower bound).
	Partial       bool                  `json:"partial,omitempty"`
	MissingShards []string              `json:"missing_shards,omitempty"`
	Page          int                   `json:"page"`
	PerPage       int                   `json:"per_page"`
	Hits          []apiHit              `json:"hits"`
	Facets        map[string][]apiFacet `json:"facets"`
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) {
	if s.o.Searcher == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "search is not available: this server has no index")
		return
	}
	p, err := s.parseSearch(r.URL.Query(), true)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.search(r, p)
	if err != nil {
		code, msg, pos := s.backendError(w, r, "search", err)
		writeJSON(w, code, apiError{Error: msg, Position: pos})
		return
	}
	out := apiSearchResult{Query: p.q, Total: res.Total, TookMS: float64(res.Took.Microseconds()) / 1000, Relaxed: res.Relaxed, AllWords: res.AllWords,
		Partial: len(res.Missing) > 0 || res.Partial, MissingShards: res.Missing, Page: p.page, PerPage: p.perPage, Hits: []apiHit{}, Facets: apiFacets(res.Facets)}
	for i, h := range res.Hits {
		out.Hits = append(out.Hits, apiHit{ID: h.ID, URL: h.URL, Title: h.Title, Snippet: string(SafeSnippet(h.Snippet)),
			Score: h.Score, Kind: h.Kind, Rank: (p.page-1)*p.perPage + i + 1, Host: h.Host, Fetched: h.Fetched,
			InLinks: h.InLinks, Fields: h.Fields})
	}
	writeJSON(w, http.StatusOK, out)
}

// apiFacets converts facet counts to the API's (never nil, so JSON has an object).
func apiFacets(facets map[string][]FacetCount) map[string][]apiFacet {
	out := make(map[string][]apiFacet, len(facets))
	for name, values := range facets {
		fs := make([]apiFacet, 0, len(values))
		for _, v := range values {
			fs = append(fs, apiFacet(v))
		}
		out[name] = fs
	}
	return out
}

// apiDocument is a document as the API publishes it.
type apiDocument struct {
	ID          string         `json:"id"`
	Kind        string         `json:"kind"`
	URL         string         `json:"url"`
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Headings    string         `json:"headings,omitempty"`
	Body        string         `json:"body"`
	Host        string         `json:"host"`
	Lang        string         `json:"lang,omitempty"`
	ContentType string         `json:"content_type,omitempty"`
	Fetched     time.Time      `json:"fetched,omitzero"`
	Relevance   *float64       `json:"relevance"` // null when no topic is set
	Relevant    bool           `json:"relevant"`
	Topics      []string       `json:"topics,omitempty"`
	InLinks     int            `json:"in_links"`
	Anchors     []string       `json:"anchors,omitempty"`
	Fields      map[string]any `json:"fields,omitempty"`
}

func toAPIDocument(d Document) apiDocument {
	out := apiDocument{ID: d.ID, Kind: d.Kind, URL: d.URL, Title: d.Title, Description: d.Description, Headings: d.Headings,
		Body: d.Body, Host: d.Host, Lang: d.Lang, ContentType: d.ContentType, Fetched: d.Fetched, Relevant: d.Relevant,
		Topics: d.Topics, InLinks: d.InLinks, Anchors: d.Anchors, Fields: d.Fields}
	if d.Relevance >= 0 {
		rel := d.Relevance
		out.Relevance = &rel
	}
	return out
}

// lookupDocument reads ?id= and fetches the document; ok is false when an answer was sent.
func (s *Server) lookupDocument(w http.ResponseWriter, r *http.Request) (Document, bool) {
	if s.o.Documents == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "documents are not available: this server has no index")
		return Document{}, false
	}
	id := r.URL.Query().Get("id")
	if id == "" {
		s.fail(w, r, http.StatusBadRequest, "give a document id with id= (search results carry it)")
		return Document{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	d, found, err := s.o.Documents.Document(ctx, id)
	if err != nil {
		code, msg, _ := s.backendError(w, r, "document lookup", err)
		s.fail(w, r, code, msg)
		return Document{}, false
	}
	if !found {
		s.fail(w, r, http.StatusNotFound, "no document with id "+strconv.Quote(id)+" (it may have been removed since the search)")
		return Document{}, false
	}
	return d, true
}

func (s *Server) apiDocument(w http.ResponseWriter, r *http.Request) {
	if d, ok := s.lookupDocument(w, r); ok {
		writeJSON(w, http.StatusOK, toAPIDocument(d))
	}
}

type apiRelations struct {
	URL string `json:"url"`
	In  []Edge `json:"in"`
	Out []Edge `json:"out"`
}

// relations reads ?url= and ?limit= and looks the neighbourhood up; ok is false when an
// answer was sent.
func (s *Server) relations(w http.ResponseWriter, r *http.Request) (apiRelations, bool) {
	if s.o.Relations == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "relations are not available: this server has no link graph")
		return apiRelations{}, false
	}
	v := r.URL.Query()
	u := strings.TrimSpace(v.Get("url"))
	if u == "" {
		s.fail(w, r, http.StatusBadRequest, "give a page address with url=, e.g. /api/relations?url=https://example.org/")
		return apiRelations{}, false
	}
	limit, err := intParam(v, "limit", 100, 1, 1000)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return apiRelations{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	in, out, err := s.o.Relations.Relations(ctx, u, limit)
	if err != nil {
		code, msg, _ := s.backendError(w, r, "relations lookup", err)
		s.fail(w, r, code, msg)
		return apiRelations{}, false
	}
	if in == nil {
		in = []Edge{}
	}
	if out == nil {
		out = []Edge{}
	}
	return apiRelations{URL: u, In: in, Out: out}, true
}

func (s *Server) apiRelations(w http.ResponseWriter, r *http.Request) {
	if rel, ok := s.relations(w, r); ok {
		writeJSON(w, http.StatusOK, rel)
	}
}

type apiStats struct {
	Stats
	Crawl *CrawlStatus `json:"crawl,omitempty"`
}

func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) {
	var out apiStats
	if s.o.Stats != nil {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		st, err := s.o.Stats.Stats(ctx)
		if err != nil {
			code, msg, _ := s.backendError(w, r, "statistics", err)
			s.fail(w, r, code, msg)
			return
		}
		out.Stats = st
	}
	if s.o.Crawl != nil {
		st := s.o.Crawl.Status()
		st.History = nil // the dashboard's series are for /api/crawl/status
		out.Crawl = &st
	}
	writeJSON(w, http.StatusOK, out)
}

// crawlControl returns the crawl control, answering 503 when there is none.
func (s *Server) crawlControl(w http.ResponseWriter, r *http.Request) CrawlControl {
	if s.o.Crawl == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "crawl control is not available on this server")
	}
	return s.o.Crawl
}

func (s *Server) apiCrawlStatus(w http.ResponseWriter, r *http.Request) {
	if c := s.crawlControl(w, r); c != nil {
		writeJSON(w, http.StatusOK, normalizeStatus(c.Status()))
	}
}

// normalizeStatus gives empty collections instead of null, so clients need no checks.
func normalizeStatus(st CrawlStatus) CrawlStatus {
	if st.Errors == nil {
		st.Errors = map[string]int64{}
	}
	if st.TopHosts == nil {
		st.TopHosts = []HostCount{}
	}
	if st.History == nil {
		st.History = []Sample{}
	}
	return st
}

type apiSeeds struct {
	Seeds []string `json:"seeds"`
}

func (s *Server) apiSeeds(w http.ResponseWriter, r *http.Request) {
	c := s.crawlControl(w, r)
	if c == nil {
		return
	}
	seeds, err := c.Seeds(r.Context())
	if err != nil {
		code, msg, _ := s.backendError(w, r, "reading the seeds", err)
		s.fail(w, r, code, msg)
		return
	}
	if seeds == nil {
		seeds = []string{}
	}
	writeJSON(w, http.StatusOK, apiSeeds{Seeds: seeds})
}

// maxBody bounds request bodies of the write endpoints.
const maxBody = 1 << 20

// decodeBody reads a JSON body into v; an empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("cannot read the request body: %w", err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("the request body exceeds %d bytes", maxBody)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body must be a JSON object as described in /api/openapi.json: %w", err)
	}
	return nil
}

func (s *Server) apiAddSeeds(w http.ResponseWriter, r *http.Request) {
	c := s.crawlControl(w, r)
	if c == nil {
		return
	}
	var req apiSeeds
	if err := decodeBody(r, &req); err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if len(req.Seeds) == 0 {
		s.fail(w, r, http.StatusBadRequest, `give the seeds to add: {"seeds": ["https://example.org/"]}`)
		return
	}
	if err := c.AddSeeds(r.Context(), req.Seeds); err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	s.apiSeeds(w, r)
}

// apiStartRequest is the body of POST /api/crawl/start.
type apiStartRequest struct {
	Seeds    []string `json:"seeds"`
	MaxPages int64    `json:"max_pages"`
	Duration string   `json:"duration"` // Go duration: "30m", "2h"
}

func (s *Server) apiCrawlStart(w http.ResponseWriter, r *http.Request) {
	c := s.crawlControl(w, r)
	if c == nil {
		return
	}
	var req apiStartRequest
	if err := decodeBody(r, &req); err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	cr := CrawlRequest{Seeds: req.Seeds, MaxPages: req.MaxPages}
	if req.MaxPages < 0 {
		s.fail(w, r, http.StatusBadRequest, "max_pages must not be negative")
		return
	}
	if req.Duration != "" {
		d, err := time.ParseDuration(req.Duration)
		if err != nil || d < 0 {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("duration %q is not a positive Go duration such as 30m or 2h", req.Duration))
			return
		}
		cr.Duration = d
	}
	switch err := c.Start(context.WithoutCancel(r.Context()), cr); {
	case errors.Is(err, ErrCrawlRunning):
		s.fail(w, r, http.StatusConflict, err.Error())
	case err != nil:
		s.fail(w, r, http.StatusBadRequest, err.Error())
	default:
		writeJSON(w, http.StatusAccepted, normalizeStatus(c.Status()))
	}
}

func (s *Server) apiCrawlStop(w http.ResponseWriter, r *http.Request) {
	c := s.crawlControl(w, r)
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		code, msg, _ := s.backendError(w, r, "stopping the crawl", err)
		s.fail(w, r, code, msg)
		return
	}
	writeJSON(w, http.StatusOK, normalizeStatus(c.Status()))
}
