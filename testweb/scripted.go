package testweb

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScriptWeb is a web whose content is built by JavaScript, for testing rendering, next to
// static sites that need none. It is served on loopback like Web, choosing the site by Host
// header:
//
//   - www.spa.test: a single-page app. Every path is the same empty shell
//     (<div id="root"></div> and a script); the script reads /api/articles?page=N (JSON),
//     lists the articles with links, loads the next page when scrolled to the bottom
//     (infinite scroll), and on /article/ID reads /api/article/ID and writes the article's
//     title and text. Links are handled by a client-side router (history.pushState).
//   - data.portal.test: a data portal in the manner of CKAN: the dataset list and each
//     dataset's page (with links to its GeoJSON and zipped shapefile) are filled in by
//     script from /api/3/action/package_search and package_show.
//   - www.hostile.test: a page whose script tries to reach a private address (the IP of
//     this server, and the cloud metadata address) and a path robots.txt disallows; and,
//     not linked, /poll.html, which polls an API for ever, and /nasty.html, which opens
//     dialogs and a pop-up, asks for the location and starts a download.
//   - www.thin.test: short pages with a script that adds nothing: they look script-built,
//     and rendering them never pays.
//   - www.staticN.test: ordinary server-built pages, half of them with an analytics-style
//     script, which must not be rendered.
//
// Every site's robots.txt disallows /private/. The ground truth is in the exported
// methods; requests are counted per host and path (Hits).
type ScriptWeb struct {
	// Articles, Datasets, StaticHosts and StaticPages size the web. Defaults: 12, 6, 4, 6.
	Articles, Datasets, StaticHosts, StaticPages int

	mu    sync.Mutex
	srv   *http.Server
	addr  string
	hits  map[string]int         // "host path" → requests
	times map[string][]time.Time // host → arrival of each request
}

// PerScroll is how many articles one page of the SPA's list API returns.
const PerScroll = 5

func (w *ScriptWeb) defaults() {
	if w.Articles == 0 {
		w.Articles = 12
	}
	if w.Datasets == 0 {
		w.Datasets = 6
	}
	if w.StaticHosts == 0 {
		w.StaticHosts = 4
	}
	if w.StaticPages == 0 {
		w.StaticPages = 6
	}
}

// Start serves the web on a new loopback listener and returns its address.
func (w *ScriptWeb) Start() (string, error) {
	w.defaults()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testweb: listen on 127.0.0.1:0: %w", err)
	}
	w.mu.Lock()
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	w.addr = l.Addr().String()
	w.hits, w.times = map[string]int{}, map[string][]time.Time{}
	srv := w.srv
	w.mu.Unlock()
	go srv.Serve(l)
	return l.Addr().String(), nil
}

// Close stops serving.
func (w *ScriptWeb) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return nil
	}
	return w.srv.Close()
}

// Resolve is the dial mapping that sends every .test host to the web.
func (w *ScriptWeb) Resolve() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return "*.test=" + w.addr
}

// Hits is how many requests host answered for path (query included when the request
// had one).
func (w *ScriptWeb) Hits(host, path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[host+" "+path]
}

// Times are the arrival times of host's requests, in order.
func (w *ScriptWeb) Times(host string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.times[host]...)
}

// UnknownHits is how many requests reached the server for a host it does not serve (an
// IP address): what a blocked script request must never produce.
func (w *ScriptWeb) UnknownHits() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for k, v := range w.hits {
		if !strings.Contains(strings.SplitN(k, " ", 2)[0], ".test") {
			n += v
		}
	}
	return n
}

// Seeds are the home pages of every site.
func (w *ScriptWeb) Seeds() []string {
	w.defaults()
	s := []string{"http://www.spa.test/", "http://data.portal.test/", "http://www.hostile.test/", "http://www.thin.test/"}
	for h := 0; h < w.StaticHosts; h++ {
		s = append(s, fmt.Sprintf("http://www.static%d.test/", h))
	}
	return s
}

// ArticleURLs are the SPA's article pages, reachable only through script-built links.
func (w *ScriptWeb) ArticleURLs() []string {
	w.defaults()
	out := make([]string, w.Articles)
	for i := range out {
		out[i] = fmt.Sprintf("http://www.spa.test/article/%d", i+1)
	}
	return out
}

// ArticlePhrase is a phrase only article id's text contains (and only after rendering).
func ArticlePhrase(id int) string {
	return fmt.Sprintf("rendered-article-%d reports on river %d", id, id*7)
}

// DatasetURLs are the portal's dataset pages.
func (w *ScriptWeb) DatasetURLs() []string {
	w.defaults()
	out := make([]string, w.Datasets)
	for i := range out {
		out[i] = fmt.Sprintf("http://data.portal.test/dataset/%s", datasetName(i))
	}
	return out
}

// GeoFileURLs are the GeoJSON and shapefile links of the portal's datasets.
func (w *ScriptWeb) GeoFileURLs() []string {
	w.defaults()
	var out []string
	for i := 0; i < w.Datasets; i++ {
		n := datasetName(i)
		out = append(out, "http://data.portal.test/files/"+n+".geojson", "http://data.portal.test/files/"+n+".zip")
	}
	return out
}

// StaticURLs are the static sites' pages, script or not.
func (w *ScriptWeb) StaticURLs() []string {
	w.defaults()
	var out []string
	for h := 0; h < w.StaticHosts; h++ {
		for p := 0; p < w.StaticPages; p++ {
			out = append(out, staticURL(h, p))
		}
	}
	return out
}

// ThinURLs are www.thin.test's pages.
func (w *ScriptWeb) ThinURLs() []string {
	out := make([]string, thinPages)
	for i := range out {
		out[i] = fmt.Sprintf("http://www.thin.test/p%d.html", i)
	}
	out[0] = "http://www.thin.test/"
	return out
}

const thinPages = 8

func datasetName(i int) string { return fmt.Sprintf("rivers-basin-%02d", i+1) }

func staticURL(h, p int) string {
	if p == 0 {
		return fmt.Sprintf("http://www.static%d.test/", h)
	}
	return fmt.Sprintf("http://www.static%d.test/page%d.html", h, p)
}

// ServeHTTP answers for every host of the web.
func (w *ScriptWeb) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	host := canonicalHost(r.Host)
	target := r.URL.Path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.mu.Lock()
	w.hits[host+" "+target]++
	w.times[host] = append(w.times[host], time.Now())
	w.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		writeBody(rw, r, http.StatusOK, textType, []byte("User-agent: *\nDisallow: /private/\n"))
		return
	}
	switch {
	case host == "www.spa.test":
		w.serveSPA(rw, r)
	case host == "data.portal.test":
		w.servePortal(rw, r)
	case host == "www.hostile.test":
		w.serveHostile(rw, r)
	case host == "www.thin.test":
		w.serveThin(rw, r)
	case strings.HasPrefix(host, "www.static") && strings.HasSuffix(host, ".test"):
		h, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "www.static"), ".test"))
		if err != nil || h >= w.StaticHosts {
			http.NotFound(rw, r)
			return
		}
		w.serveStatic(rw, r, h)
	default:
		writeBody(rw, r, http.StatusMisdirectedRequest, htmlType, tinyPage(nil, "421 Misdirected Request", "secret: this server does not serve "+host))
	}
}

func writeJSON(rw http.ResponseWriter, r *http.Request, v any) {
	b, _ := json.Marshal(v)
	writeBody(rw, r, http.StatusOK, []string{"application/json"}, b)
}

// shell is an app's page as the server sends it: no text, no links, a mount point and
// a script.
func shell(title, script string) []byte {
	return []byte(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>` + title + `</title>
<script src="` + script + `" defer></script></head>
<body><div id="root"></div>
<noscript>This site needs JavaScript to run.</noscript>
</body></html>`)
}

// spaJS is the SPA: a client-side router, an infinite-scroll article list and an
// article view, all from the JSON API.
const spaJS = `
const root = document.getElementById("root");
function link(href, text) {
  const a = document.createElement("a");
  a.href = href; a.textContent = text;
  a.addEventListener("click", (e) => { e.preventDefault(); history.pushState({}, "", href); route(); });
  return a;
}
let next = 1, loading = false, done = false;
async function more(list) {
  if (loading || done) return;
  loading = true;
  const r = await fetch("/api/articles?page=" + next);
  const data = await r.json();
  for (const it of data.items) {
    const li = document.createElement("li");
    li.style.height = "600px";
    li.appendChild(link("/article/" + it.id, it.title));
    list.appendChild(li);
  }
  next++; done = !data.more; loading = false;
}
async function route() {
  root.textContent = "";
  const m = location.pathname.match(/^\/article\/(\d+)$/);
  if (m) {
    const r = await fetch("/api/article/" + m[1]);
    if (!r.ok) { root.textContent = "not found"; return; }
    const a = await r.json();
    const art = document.createElement("article");
    const h = document.createElement("h1"); h.textContent = a.title; art.appendChild(h);
    for (const p of a.paragraphs) { const e = document.createElement("p"); e.textContent = p; art.appendChild(e); }
    document.title = a.title;
    root.appendChild(art);
    root.appendChild(link("/", "All articles"));
    if (a.related) root.appendChild(link("/article/" + a.related, "Related article"));
    return;
  }
  const h = document.createElement("h1"); h.textContent = "River news"; root.appendChild(h);
  const list = document.createElement("ul"); root.appendChild(list);
  await more(list);
  window.addEventListener("scroll", () => {
    if (window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 50) more(list);
  });
}
window.addEventListener("popstate", route);
route();
`

func (w *ScriptWeb) articleTitle(id int) string { return fmt.Sprintf("River report %d", id) }

func (w *ScriptWeb) serveSPA(rw http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/static/app.js":
		writeBody(rw, r, http.StatusOK, []string{"text/javascript"}, []byte(spaJS))
	case p == "/api/articles":
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 {
			page = 1
		}
		type item struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
		}
		var items []item
		for id := (page-1)*PerScroll + 1; id <= page*PerScroll && id <= w.Articles; id++ {
			items = append(items, item{id, w.articleTitle(id)})
		}
		writeJSON(rw, r, map[string]any{"items": items, "more": page*PerScroll < w.Articles})
	case strings.HasPrefix(p, "/api/article/"):
		id, err := strconv.Atoi(strings.TrimPrefix(p, "/api/article/"))
		if err != nil || id < 1 || id > w.Articles {
			http.NotFound(rw, r)
			return
		}
		g := newTextGen(uint64(id)*7919, -1)
		paras := []string{ArticlePhrase(id) + "."}
		for i := 0; i < 3; i++ {
			paras = append(paras, string(g.sentences(nil, 4)))
		}
		writeJSON(rw, r, map[string]any{"title": w.articleTitle(id), "paragraphs": paras, "related": id%w.Articles + 1})
	case p == "/" || strings.HasPrefix(p, "/article/"):
		writeBody(rw, r, http.StatusOK, htmlType, shell("River news", "/static/app.js"))
	default:
		http.NotFound(rw, r)
	}
}

// portalJS fills the dataset list and the dataset pages of the portal.
const portalJS = `
const root = document.getElementById("root");
function a(href, text) { const e = document.createElement("a"); e.href = href; e.textContent = text; return e; }
async function main() {
  const m = location.pathname.match(/^\/dataset\/([\w-]+)$/);
  if (m) {
    const r = await fetch("/api/3/action/package_show?id=" + m[1]);
    const d = (await r.json()).result;
    const h = document.createElement("h1"); h.textContent = d.title; root.appendChild(h);
    const p = document.createElement("p"); p.textContent = d.notes; root.appendChild(p);
    const ul = document.createElement("ul");
    for (const res of d.resources) { const li = document.createElement("li"); li.appendChild(a(res.url, res.format + " download")); ul.appendChild(li); }
    root.appendChild(ul);
    return;
  }
  const r = await fetch("/api/3/action/package_search?rows=1000");
  const data = (await r.json()).result;
  const ul = document.createElement("ul");
  for (const d of data.results) { const li = document.createElement("li"); li.appendChild(a("/dataset/" + d.name, d.title)); ul.appendChild(li); }
  root.appendChild(ul);
}
main();
`

func (w *ScriptWeb) servePortal(rw http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	type resource struct {
		URL    string `json:"url"`
		Format string `json:"format"`
	}
	type pkg struct {
		Name      string     `json:"name"`
		Title     string     `json:"title"`
		Notes     string     `json:"notes,omitempty"`
		Resources []resource `json:"resources,omitempty"`
	}
	dataset := func(i int) pkg {
		n := datasetName(i)
		return pkg{Name: n, Title: fmt.Sprintf("River basin %d boundaries", i+1),
			Notes:     fmt.Sprintf("Boundaries of river basin %d, as polygons in WGS 84.", i+1),
			Resources: []resource{{"/files/" + n + ".geojson", "GeoJSON"}, {"/files/" + n + ".zip", "SHP"}}}
	}
	switch {
	case p == "/assets/portal.js":
		writeBody(rw, r, http.StatusOK, []string{"application/javascript"}, []byte(portalJS))
	case p == "/api/3/action/package_search":
		var res []pkg
		for i := 0; i < w.Datasets; i++ {
			d := dataset(i)
			res = append(res, pkg{Name: d.Name, Title: d.Title})
		}
		writeJSON(rw, r, map[string]any{"success": true, "result": map[string]any{"count": len(res), "results": res}})
	case p == "/api/3/action/package_show":
		for i := 0; i < w.Datasets; i++ {
			if d := dataset(i); d.Name == r.URL.Query().Get("id") {
				writeJSON(rw, r, map[string]any{"success": true, "result": d})
				return
			}
		}
		http.NotFound(rw, r)
	case strings.HasPrefix(p, "/files/") && strings.HasSuffix(p, ".geojson"):
		n := strings.TrimSuffix(strings.TrimPrefix(p, "/files/"), ".geojson")
		gj := `{"type":"FeatureCollection","name":"` + n + `","features":[{"type":"Feature","properties":{"name":"` + n +
			`"},"geometry":{"type":"Polygon","coordinates":[[[-47.1,-23.2],[-46.9,-23.2],[-46.9,-23.0],[-47.1,-23.0],[-47.1,-23.2]]]}}]}`
		writeBody(rw, r, http.StatusOK, []string{"application/geo+json"}, []byte(gj))
	case strings.HasPrefix(p, "/files/") && strings.HasSuffix(p, ".zip"):
		writeBody(rw, r, http.StatusOK, []string{"application/zip"}, emptyZip)
	case p == "/" || strings.HasPrefix(p, "/dataset/"):
		writeBody(rw, r, http.StatusOK, htmlType, shell("Open data portal", "/assets/portal.js"))
	default:
		http.NotFound(rw, r)
	}
}

// emptyZip is a zip archive with no entries (its end-of-central-directory record).
var emptyZip = []byte{0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

func (w *ScriptWeb) serveHostile(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	self := w.addr
	w.mu.Unlock()
	switch r.URL.Path {
	case "/":
		js := `<script>
for (const u of ["http://` + self + `/secret", "http://169.254.169.254/latest/meta-data/", "/private/data.json"]) {
  fetch(u).then(r => r.text()).then(t => { const p = document.createElement("p"); p.textContent = "leaked " + t; document.body.appendChild(p); }).catch(() => {});
}
const a = document.createElement("a"); a.href = "/after.html"; a.textContent = "after the attempts"; document.body.appendChild(a);
</script>`
		writeBody(rw, r, http.StatusOK, htmlType, []byte(`<!DOCTYPE html><html><head><title>Hostile</title></head><body><div id="app"></div>`+js+`</body></html>`))
	case "/poll.html": // never quiet: polls for ever (not linked: for render's own tests)
		writeBody(rw, r, http.StatusOK, htmlType, []byte(`<!DOCTYPE html><html><head><title>Poll</title></head><body><p id="n">0</p><script>
let n = 0; setInterval(() => fetch("/api/poll?n=" + (++n)).then(() => { document.getElementById("n").textContent = "polled " + n; }), 100);
</script></body></html>`))
	case "/nasty.html": // dialogs, a pop-up, a permission prompt, a download (not linked)
		writeBody(rw, r, http.StatusOK, htmlType, []byte(`<!DOCTYPE html><html><head><title>Nasty</title></head><body><script>
alert("hello"); confirm("sure?"); prompt("name?");
window.open("/opened.html", "_blank");
if (navigator.geolocation) navigator.geolocation.getCurrentPosition(() => {}, () => {});
const d = document.createElement("a"); d.href = "/file.bin"; d.download = "file.bin"; document.body.appendChild(d); d.click();
const p = document.createElement("p"); p.textContent = "survived the dialogs"; document.body.appendChild(p);
</script></body></html>`))
	case "/opened.html", "/file.bin":
		writeBody(rw, r, http.StatusOK, []string{"application/octet-stream"}, []byte("should never be asked for"))
	case "/api/poll":
		writeJSON(rw, r, map[string]bool{"ok": true})
	case "/after.html":
		writeBody(rw, r, http.StatusOK, htmlType, tinyPage(nil, "After", "The page after the attempts."))
	case "/private/data.json":
		writeJSON(rw, r, map[string]string{"secret": "robots.txt disallows this"})
	default:
		http.NotFound(rw, r)
	}
}

func (w *ScriptWeb) serveThin(rw http.ResponseWriter, r *http.Request) {
	urls := w.ThinURLs()
	for i, u := range urls {
		if strings.TrimPrefix(u, "http://www.thin.test") != r.URL.Path {
			continue
		}
		next := urls[(i+1)%len(urls)]
		body := `<!DOCTYPE html><html><head><title>Thin ` + strconv.Itoa(i) + `</title><script>window.dataLayer = [];</script></head>` +
			`<body><p>Short note ` + strconv.Itoa(i) + `.</p><a href="` + next + `">next</a></body></html>`
		writeBody(rw, r, http.StatusOK, htmlType, []byte(body))
		return
	}
	http.NotFound(rw, r)
}

func (w *ScriptWeb) serveStatic(rw http.ResponseWriter, r *http.Request, h int) {
	for p := 0; p < w.StaticPages; p++ {
		u := staticURL(h, p)
		if strings.TrimPrefix(u, fmt.Sprintf("http://www.static%d.test", h)) != r.URL.Path {
			continue
		}
		g := newTextGen(uint64(h*1000+p), -1)
		var b []byte
		b = append(b, "<!DOCTYPE html><html><head><title>Static "...)
		b = append(b, fmt.Sprintf("%d.%d", h, p)...)
		b = append(b, "</title>"...)
		if p%2 == 1 { // half the pages carry an analytics-style script, as real sites do
			b = append(b, `<script>window.dataLayer = window.dataLayer || []; dataLayer.push({event: "view"});</script>`...)
		}
		b = append(b, "</head><body><h1>Static page</h1><p>"...)
		b = g.sentences(b, 30)
		b = append(b, "</p><ul>"...)
		links := []string{staticURL(h, (p+1)%w.StaticPages), staticURL(h, (p+2)%w.StaticPages), staticURL((h+1)%w.StaticHosts, p)}
		sort.Strings(links)
		for _, l := range links {
			b = append(b, `<li><a href="`+l+`">a static link</a></li>`...)
		}
		b = append(b, "</ul></body></html>"...)
		writeBody(rw, r, http.StatusOK, htmlType, b)
		return
	}
	http.NotFound(rw, r)
}
