package volunteer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/testweb"
	"github.com/sonda-search/sonda/urlnorm"
)

// Tamper is what the lying workers of these tests insert: a sentence and a link.
const (
	tamperWord = "TAMPEREDBYWORKER"
	tamperLink = `<p>` + tamperWord + ` buy cheap pills now</p><a href="http://spam.example/win">win</a>`
)

// liar returns a Mutate that rewrites about rate of the pages it fetches (deterministically
// by count), consistently: body and digest agree, so only a check can catch it.
// It answers its first honest tasks truthfully, to earn a reputation.
func liar(rate float64, honest int64) func(*Task, *Result) {
	var mu sync.Mutex // a worker runs tasks concurrently: count lies exactly
	var n, lied int64
	return func(t *Task, r *Result) {
		mu.Lock()
		n++
		i := n - honest
		if i <= 0 || float64(lied) >= rate*float64(i) || r.Status != 200 {
			mu.Unlock()
			return
		}
		lied++
		mu.Unlock()
		res := r.decoded(t.URL, 0)
		if !strings.Contains(res.MediaType, "html") {
			return
		}
		body := bytes.Replace(res.UTF8, []byte("</body>"), []byte(tamperLink+"</body>"), 1)
		body = bytes.Replace(body, []byte("<p>"), []byte("<p>"+tamperWord+" "), 3)
		Rewrite(r, t.URL, body)
	}
}

// quarantineBound is the most tasks a liar of these tests completes before it is
// quarantined once it starts lying (measured over 4 runs: rate 0.5 from the start, 4
// tasks; rate 0.25 after 10 honest tasks, 5 to 26 tasks after its first lie).
const quarantineBound = 40

// sleeperHonest is how many tasks the second liar answers truthfully first, so that it is
// checked rarely when it starts lying and some of its pages get through (to be purged).
const sleeperHonest = 10

type rig struct {
	t     *testing.T
	srv   *cluster.Server
	auth  *cluster.Auth
	node  *nats.Conn
	js    jetstream.JetStream
	web   *testweb.Web
	fopts fetch.Options
}

func newRig(t *testing.T, wc testweb.Config) *rig {
	t.Helper()
	dir := t.TempDir()
	a, err := cluster.InitAuth(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cluster.StartServer(cluster.ServerOptions{Addr: "127.0.0.1:0", Dir: filepath.Join(dir, "js"), Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.URL(), nats.UserCredentials(a.NodeCreds()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	web := testweb.New(wc)
	if _, err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	fo, err := crawl.FetchOptions(web.CrawlConfig(config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, srv: s, auth: a, node: nc, js: js, web: web, fopts: fo}
}

// openDB opens a node's database in dir, closed at the end of the test.
func openDB(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// worker admits a worker and runs it in this process on its own connection.
func (r *rig) worker(ctx context.Context, name string, mutate func(*Task, *Result)) *Worker {
	r.t.Helper()
	creds, err := cluster.AddWorker(ctx, r.js, r.auth, "c", name)
	if err != nil {
		r.t.Fatal(err)
	}
	path := filepath.Join(r.t.TempDir(), name+".creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		r.t.Fatal(err)
	}
	id, err := ReadIdentity(path)
	if err != nil {
		r.t.Fatal(err)
	}
	if id.Name != name || id.Cluster != "c" {
		r.t.Fatalf("identity %+v", id)
	}
	nc, err := nats.Connect(r.srv.URL(), nats.UserCredentials(path))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(nc.Close)
	w := NewWorker(nc, id, WorkerOptions{Fetch: r.fopts, Concurrency: 2, Mutate: mutate})
	r.t.Cleanup(w.Close)
	return w
}

// running admits a worker and runs it in this process until stop is called or the test
// ends.
func (r *rig) running(name string, mutate func(*Task, *Result)) (stop func()) {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := r.worker(ctx, name, mutate)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	stop = func() { cancel(); <-done }
	r.t.Cleanup(stop)
	return stop
}

// own is a node's own fetcher, closed when the test ends.
func (r *rig) own() *fetch.Fetcher {
	r.t.Helper()
	f, err := fetch.New(r.fopts)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { f.Close() })
	return f
}

// purgeCounts counts, by URL, the pages a test's dispatcher purged.
type purgeCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *purgeCounts) purge(_ context.Context, items []frontier.Item) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	for _, it := range items {
		p.n[it.URL]++
	}
	return nil
}

// startNode starts node n1's dispatcher on db, with the node's own fetcher own, counting
// its purges in p. Canaries are off and the checks' seed fixed.
func (r *rig) startNode(ctx context.Context, own *fetch.Fetcher, db *pebble.DB, p *purgeCounts) *Dispatcher {
	r.t.Helper()
	d, err := Start(ctx, r.node, r.js, Options{Cluster: "c", Node: "n1", Fetcher: own, UserAgent: "sonda-test",
		TaskTimeout: 2 * time.Second, Seed: 7, Canary: -1, DB: db, Purge: p.purge})
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// waitHello waits until d heard worker name announce itself.
func waitHello(t *testing.T, ctx context.Context, d *Dispatcher, name string) {
	t.Helper()
	waitFor(t, ctx, name+"'s hello", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		ws := d.workers[name]
		return ws != nil && !ws.lastSeen.IsZero() && ws.state == cluster.WorkerActive
	})
}

// TestDispatcherValidates runs a node's dispatcher over real workers on a secured NATS
// server and a loopback test web: honest workers, two liars that rewrite pages
// consistently (so only checks catch them) and one that takes tasks and never answers.
func TestDispatcherValidates(t *testing.T) {
	r := newRig(t, testweb.Config{Seed: 3, Hosts: 12, PagesPerHost: 20,
		Disable: testweb.Slow | testweb.Traps | testweb.Errors | testweb.Redirects | testweb.NonHTML | testweb.Compression | testweb.Charsets})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	run := func(w *Worker) {
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(wctx) }()
	}
	for _, name := range []string{"h1", "h2", "h3"} {
		run(r.worker(ctx, name, nil))
	}
	run(r.worker(ctx, "liar50", liar(0.5, 0)))
	run(r.worker(ctx, "liar25", liar(0.25, sleeperHonest)))
	// The vanishing worker: announces itself, takes tasks, answers none.
	vcreds, _ := cluster.AddWorker(ctx, r.js, r.auth, "c", "gone")
	vpath := filepath.Join(t.TempDir(), "gone.creds")
	os.WriteFile(vpath, vcreds, 0o600)
	vnc, err := nats.Connect(r.srv.URL(), nats.UserCredentials(vpath))
	if err != nil {
		t.Fatal(err)
	}
	defer vnc.Close()
	var vanished atomic.Int64
	vnc.Subscribe(taskSubject("c", "gone"), func(*nats.Msg) { vanished.Add(1) })
	hello, _ := json.Marshal(Hello{Concurrency: 4, Free: 4})
	go func() {
		for wctx.Err() == nil {
			vnc.Publish(helloSubject("c", "gone"), hello)
			sleep(wctx, 500*time.Millisecond)
		}
	}()

	own, err := fetch.New(r.fopts)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	var purgeMu sync.Mutex
	purged := map[string]bool{}
	d, err := Start(ctx, r.node, r.js, Options{Cluster: "c", Node: "n1", Fetcher: own, UserAgent: "sonda-test",
		TaskTimeout: 1500 * time.Millisecond, Seed: 1, Canary: 0.2, DB: openDB(t, t.TempDir()).Pebble(),
		Purge: func(_ context.Context, items []frontier.Item) error {
			purgeMu.Lock()
			defer purgeMu.Unlock()
			for _, it := range items {
				purged[it.URL] = true
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Wait until every worker announced itself (their hellos, not a sleep).
	for {
		d.mu.Lock()
		n := 0
		for _, w := range d.workers {
			if !w.lastSeen.IsZero() && w.state == cluster.WorkerActive {
				n++
			}
		}
		d.mu.Unlock()
		if n == 6 {
			break
		}
		if !sleep(ctx, 20*time.Millisecond) {
			t.Fatal("workers did not announce themselves")
		}
	}

	// Each host's pages one after the other (the crawl's politeness), hosts in parallel.
	norm := urlnorm.New(urlnorm.DefaultOptions())
	byHost := map[string][]string{}
	for _, u := range r.web.Reachable() {
		nu, err := norm.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		byHost[nu.HostKey()] = append(byHost[nu.HostKey()], u)
	}
	const rest = 30 * time.Millisecond
	var mu sync.Mutex
	got := map[string]*fetch.Result{}
	var hosts sync.WaitGroup
	for host, urls := range byHost {
		hosts.Add(1)
		go func() {
			defer hosts.Done()
			rest := max(rest, r.web.PolitenessDelay(host)) // a host's Crawl-delay
			for _, u := range urls {
				nu, _ := norm.Parse(u)
				res := d.FetchPage(ctx, frontier.Item{URL: u, Key: nu.Key(), Host: host}, fetch.Request{URL: u}, rest)
				mu.Lock()
				got[u] = res
				mu.Unlock()
				sleep(ctx, rest)
			}
		}()
	}
	hosts.Wait()
	stopWorkers()
	wg.Wait()
	d.flushStats(ctx)

	// Every page came back, from a worker or the node.
	for u, res := range got {
		if res.Err != nil || res.Status != 200 {
			t.Errorf("%s: status %d, error %v", u, res.Status, res.Err)
		}
	}
	if len(got) != len(r.web.Reachable()) {
		t.Fatalf("%d pages of %d", len(got), len(r.web.Reachable()))
	}
	// The liars are quarantined, the honest workers not; what a liar slipped through is
	// purged (to be fetched again).
	list, err := cluster.ListWorkers(ctx, r.js, "c")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list {
		t.Logf("%s: %s tasks %d reissued %d checked %d (canaries %d) failed %d lies %d (%s)", w.Name, w.State, w.Tasks, w.Reissued, w.Checked, w.Canaries, w.Failed, w.Lies, w.Reason)
		liar := strings.HasPrefix(w.Name, "liar")
		if liar != (w.State == cluster.WorkerQuarantined) {
			t.Errorf("worker %s: state %s", w.Name, w.State)
		}
		honest := map[string]int64{"liar25": sleeperHonest}[w.Name]
		if liar && w.Tasks-honest > quarantineBound {
			t.Errorf("liar %s quarantined only after %d tasks since it began to lie (bound %d)", w.Name, w.Tasks-honest, quarantineBound)
		}
	}
	d.purging.Wait()
	purgeMu.Lock()
	defer purgeMu.Unlock()
	tampered := 0
	for u, res := range got {
		if bytes.Contains(res.UTF8, []byte(tamperWord)) {
			tampered++
			if !purged[u] {
				t.Errorf("%s: a tampered page was kept and not purged", u)
			}
		}
	}
	t.Logf("%d pages, %d tampered copies accepted and purged, %d purged in all, %d tasks to the vanished worker",
		len(got), tampered, len(purged), vanished.Load())
	canaries := int64(0)
	for name, st := range d.Stats() {
		canaries += st.Canaries
		if !strings.HasPrefix(name, "liar") && st.Failed > 0 {
			t.Errorf("honest worker %s failed %d checks", name, st.Failed)
		}
	}
	if canaries == 0 {
		t.Error("no canary was sent")
	}
	t.Logf("%d canaries", canaries)
	if vanished.Load() == 0 {
		t.Error("the vanishing worker never got a task: reissue untested")
	}
	st := d.Stats()["gone"]
	if st.Reissued != vanished.Load() {
		t.Errorf("vanished worker: %d tasks, %d reissued", vanished.Load(), st.Reissued)
	}
	// The per-worker metrics say the same.
	reg := prometheus.NewRegistry()
	reg.MustRegister(d)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	metric := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetValue()
			}
			metric[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	if metric["sonda_volunteer_quarantined,liar50"] != 1 || metric["sonda_volunteer_quarantined,h1"] != 0 ||
		metric["sonda_volunteer_tasks_total,h1"] != float64(d.Stats()["h1"].Tasks) || metric["sonda_volunteer_reissued_total,gone"] == 0 {
		t.Errorf("metrics: %v", metric)
	}
	if v := r.web.CheckPoliteness(rest, 1); len(v) > 0 {
		for _, x := range v[:min(len(v), 5)] {
			t.Error(x)
		}
	}
}

func TestConvicted(t *testing.T) {
	for _, c := range []struct {
		passed, failed int64
		want           bool
	}{
		{0, 1, false},  // one failure may be a page that changed
		{1, 2, true},   // two of three: a liar
		{40, 1, false}, // an honest worker on a changing web
		{60, 3, false}, // 5%: what changing pages explain
		{38, 7, true},  // 15%: a liar
		{20, 4, true},
	} {
		if got := Convicted(c.passed, c.failed); got != c.want {
			t.Errorf("Convicted(passed %d, failed %d) = %v, want %v (P(rate>%.2f) = %.4f)", c.passed, c.failed, got, c.want,
				HonestChange, betaAbove(HonestChange, c.failed+1, c.passed+1))
		}
	}
	// betaAbove against a closed form: Beta(1, b) has P(X > x) = (1-x)^b.
	if got, want := betaAbove(0.1, 1, 5), 0.59049; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("betaAbove(0.1, 1, 5) = %v, want %v", got, want)
	}
}

func TestAgree(t *testing.T) {
	page := func(text string, links ...string) *fetch.Result {
		body := "<html><body><p>" + text + "</p>"
		for _, l := range links {
			body += `<a href="` + l + `">x</a>`
		}
		body += "</body></html>"
		return &fetch.Result{URL: "http://www.a.test/p", Status: 200, MediaType: "text/html", UTF8: []byte(body), Body: []byte(body)}
	}
	var words []string // a page of 60 distinct words
	for i := range 60 {
		words = append(words, fmt.Sprintf("word%d", i))
	}
	long := strings.Join(words, " ")
	links := []string{"http://www.a.test/1", "http://www.a.test/2", "http://docs.a.test/3", "http://www.b.test/4"}
	for _, c := range []struct {
		name string
		w, n *fetch.Result
		want bool
	}{
		{"same page", page(long, links...), page(long, links...), true},
		{"a date changed", page(long+" 2026-11-26", links...), page(long+" 2026-11-27", links...), true},
		{"a rotated link on a known site", page(long, append(links[:3:3], "http://www.b.test/9")...), page(long, links...), true},
		{"an injected link to a new site", page(long, append(links, "http://spam.example/win")...), page(long, links...), false},
		{"rewritten text", page("buy cheap pills now at the lowest price ever seen", links...), page(long, links...), false},
		{"another status", &fetch.Result{Status: 404}, page(long, links...), false},
	} {
		if got, why := agree(c.w, c.n); got != c.want {
			t.Errorf("%s: agree = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
}
