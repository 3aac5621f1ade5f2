// Package web owns sonda's HTTP face: the JSON API under /api (search, documents, link
// relations, statistics, crawl control), its OpenAPI description, the HTML user interface
// (search, results, document view, relations page, crawl dashboard), Prometheus /metrics,
// and the security policy every response carries.
//
// The package consumes small interfaces (Searcher, Documents, Relations, StatsSource,
// CrawlControl) and imports no storage package; web/local implements them over a data
// directory and `sonda serve` wires them. Pages are rendered with html/template, so
// everything a crawl brought in is escaped; the few HTML fragments that come from the
// backend (search snippets) are sanitized again here down to text plus <mark>. Assets are
// embedded and served from this origin only: the Content-Security-Policy forbids inline
// scripts and styles, other origins and framing, so a crawled page cannot run code in the UI
// even if escaping failed.
//
// The charts of the crawl dashboard are SVG drawn by a small hand-written script from
// /api/crawl/status, which it polls once a second; no chart library is worth its weight
// for five line and bar charts.
package web

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure a Server. Backends left nil make their pages and endpoints answer
// 503 with a message saying what is missing.
type Options struct {
	Searcher  Searcher
	Documents Documents
	Relations Relations
	Stats     StatsSource
	Analyzer  TermAnalyzer // for highlighting in the document view (optional)
	Crawl     CrawlControl
	News      News     // topic monitoring (optional: its pages and API answer 503 without it)
	Datasets  Datasets // dataset search, map and downloads (optional: 503 without it)
	Workers   Workers  // volunteer workers listed on the dashboard (optional)
	Cluster   Cluster  // the cluster's nodes and partitions on the dashboard (optional)

	// Token authorizes write requests (crawl control): they must carry
	// "Authorization: Bearer TOKEN". Required, at least 16 characters; there is no default.
	Token string

	// Hosts, when not nil, is the DNS-rebinding guard: a request whose Host header names
	// neither an IP address, nor localhost, nor one of these (exact names, or "*.example.org"
	// for its subdomains) is refused with 421, so a web page whose own name was made to
	// resolve to this server cannot read the API from a visitor's browser. sonda serve always
	// sets it (serve.hosts); nil checks nothing.
	Hosts []string

	Logger     *slog.Logger // default: discard
	PerPage    int          // results per page; default 10
	MaxResults int          // deepest result served; default 1000 (seed 002's cap)
}

// Server serves the UI, the API and /metrics. It is an http.Handler.
type Server struct {
	o       Options
	mux     *http.ServeMux
	routes  []route
	log     *slog.Logger
	reg     *prometheus.Registry // the server's own metrics
	process *prometheus.Registry // Go and process metrics, when no crawl registry has them
	pages   *templates

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// route is one endpoint. The table of routes is what the OpenAPI test compares the
// published description against.
type route struct {
	method, path string
	name         string // metrics label
	write        bool   // needs the token
	handler      http.HandlerFunc
}

// MinTokenLength is the shortest write token New accepts.
const MinTokenLength = 16

// New builds a server.
func New(o Options) (*Server, error) {
	if len(o.Token) < MinTokenLength {
		return nil, fmt.Errorf("web: the write token must have at least %d characters (set serve.token in sonda.yaml or SONDA_SERVE_TOKEN; sonda serve generates one when unset)", MinTokenLength)
	}
	if o.PerPage <= 0 {
		o.PerPage = 10
	}
	if o.MaxResults <= 0 {
		o.MaxResults = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, mux: http.NewServeMux(), log: o.Logger, pages: pages,
		reg: prometheus.NewRegistry(), process: prometheus.NewRegistry()}
	s.process.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sonda_http_requests_total", Help: "HTTP requests served by sonda serve, by route and status code.",
	}, []string{"route", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sonda_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10),
	}, []string{"route"})
	s.reg.MustRegister(s.requests, s.latency)

	s.routes = []route{
		{"GET", "/{$}", "home", false, s.home},
		{"GET", "/search", "search-page", false, s.searchPage},
		{"GET", "/doc", "document-page", false, s.documentPage},
		{"GET", "/relations", "relations-page", false, s.relationsPage},
		{"GET", "/dashboard", "dashboard", false, s.dashboardPage},
		{"GET", "/static/{file...}", "static", false, serveStatic},
		{"GET", "/api/search", "api-search", false, s.apiSearch},
		{"GET", "/api/document", "api-document", false, s.apiDocument},
		{"GET", "/api/relations", "api-relations", false, s.apiRelations},
		{"GET", "/api/stats", "api-stats", false, s.apiStats},
		{"GET", "/api/crawl/status", "api-crawl-status", false, s.apiCrawlStatus},
		{"GET", "/api/crawl/seeds", "api-crawl-seeds", false, s.apiSeeds},
		{"POST", "/api/crawl/seeds", "api-crawl-add-seeds", true, s.apiAddSeeds},
		{"POST", "/api/crawl/start", "api-crawl-start", true, s.apiCrawlStart},
		{"POST", "/api/crawl/stop", "api-crawl-stop", true, s.apiCrawlStop},
		{"GET", "/api/openapi.json", "api-openapi", false, serveOpenAPI},
		{"GET", "/metrics", "metrics", false, s.metrics},
	}
	s.routes = append(s.routes, s.newsRoutes()...)
	s.routes = append(s.routes, s.datasetRoutes()...)
	for _, rt := range s.routes {
		s.mux.Handle(rt.method+" "+rt.path, s.instrument(rt))
	}
	s.mux.HandleFunc("/", s.notFound)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", "path", r.URL.Path, "panic", v)
			s.fail(w, r, http.StatusInternalServerError, "internal error; see the server log")
		}
	}()
	if s.o.Hosts != nil && !hostAllowed(r.Host, s.o.Hosts) {
		s.fail(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("this server does not answer to the name %q: "+
			"add it to serve.hosts in sonda.yaml if it is yours (a name that is not is how DNS rebinding reads a local server)", r.Host))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// hostAllowed reports whether the Host header hostport names this server: an IP address
// (no name was resolved, so none was rebound), localhost, or one of hosts.
func hostAllowed(hostport string, hosts []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return true
		}
	}
	return false
}

// contentSecurityPolicy allows scripts, styles, images and fetches from this origin only:
// no inline script or style (the templates carry none), no plugins, no framing, no
// <base> rewriting, forms posting only here.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY") // for browsers older than frame-ancestors
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

// statusRecorder remembers the status code for the metrics.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets server-sent or streamed answers through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) instrument(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		if rt.write && !s.authorized(r) {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="sonda"`)
			s.fail(rec, r, http.StatusUnauthorized, "this endpoint changes the crawl: send the serve token as 'Authorization: Bearer TOKEN' (sonda serve prints it at start, or set serve.token / SONDA_SERVE_TOKEN)")
		} else {
			rt.handler(rec, r)
		}
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		s.requests.WithLabelValues(rt.name, fmt.Sprint(rec.code)).Inc()
		s.latency.WithLabelValues(rt.name).Observe(time.Since(start).Seconds())
	})
}

// authorized checks the bearer token in constant time. The token is only ever read from
// the Authorization header, never from a cookie or the URL, so another site cannot make a
// browser send it (no CSRF) and it does not end up in logs or Referer headers.
func (s *Server) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.o.Token)) == 1
}

// notFound answers paths no route has: 405 when the path exists with another method.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, rt := range s.routes {
		if rt.path == r.URL.Path && rt.method != r.Method {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		return
	}
	s.fail(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
}

// fail answers an error: JSON under /api/, an HTML page elsewhere.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if isAPI(r) {
		writeJSON(w, code, apiError{Error: msg})
		return
	}
	s.renderError(w, r, code, msg)
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

type apiError struct {
	Error    string `json:"error"`
	Position *int   `json:"position,omitempty"` // byte offset of a query error
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b = []byte(`{"error":"cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// metrics serves the server's own metrics with the running crawl's (which include the Go
// and process collectors), or with the process collectors when no crawl runs.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	gs := prometheus.Gatherers{s.reg}
	var crawl prometheus.Gatherer
	if s.o.Crawl != nil {
		crawl = s.o.Crawl.Gatherer()
	}
	if crawl != nil {
		gs = append(gs, crawl)
	} else {
		gs = append(gs, s.process)
	}
	promhttp.HandlerFor(gs, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}).ServeHTTP(w, r)
}
