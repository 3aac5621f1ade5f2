package volunteer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/frontier"
)

// Options configure a node's Dispatcher.
type Options struct {
	Cluster string
	Node    string // this node's id: results come back on its subject
	// Fetcher is the node's own fetcher, for checks and for pages no worker took.
	Fetcher *fetch.Fetcher
	// UserAgent is what workers send (the crawl's fetch.user-agent).
	UserAgent string
	// MaxBody bounds a page's decoded body (the crawl's fetch.max-body-bytes).
	MaxBody int64
	// TaskTimeout is how long a worker has for a task (default 15s).
	TaskTimeout time.Duration
	// MinCheck is the share of an established worker's results the node checks by
	// fetching the page itself (default 0.05).
	MinCheck float64
	// Canary is the share of tasks preceded by a canary: a page of the same host the node
	// fetched itself, whose copy from the worker must match (default 0.05; negative: none).
	Canary float64
	// Attempts is how many workers a page is offered to before the node fetches it
	// itself (default 3).
	Attempts int
	// Purge removes from the index the pages a quarantined worker delivered and queues
	// them to be fetched again. Required. Called with at most purgeBatch pages at a time;
	// an error keeps them for the next try (pages already done may come again).
	Purge func(ctx context.Context, items []frontier.Item) error
	// DB is the node's database: which worker delivered each page the node took unchecked
	// is recorded there (ledger.go), so a quarantine purges them even after a restart.
	// Required.
	DB *pebble.DB
	// Seed fixes the sampling randomness (tests); 0: random.
	Seed   uint64
	Logger *slog.Logger
}

// Dispatcher is a node's side of the volunteer workers: it implements crawl.PageFetcher,
// and crawl.Sink (to be given every page after the search index's sink: see Consume).
type Dispatcher struct {
	o      Options
	nc     *nats.Conn
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	log    *slog.Logger
	secret []byte
	subs   []*nats.Subscription
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu      sync.Mutex
	rng     *mrand.Rand
	workers map[string]*workerState
	pending map[string]*pendingTask
	known   map[string][]known // canaries by host
	expired map[string]expiredTask
	ledger  *ledger
	// taken are the pages this node took unchecked from a worker and the crawl has not
	// yet handed to its sinks (Consume), by URL key: the worker's ledger owner.
	taken map[[16]byte]string
	// purges are the ledger owners (worker incarnations: see owner) whose pages this
	// dispatcher purges or purged; dropped those whose records it dropped (revoked).
	purges  map[string]*purgeState
	dropped map[string]bool
	purging sync.WaitGroup
	// flushNow asks for the counters to be written at once: a failed check is evidence
	// the other nodes judge the worker on too, and a second's delay is tasks a liar gets.
	flushNow chan struct{}
	rctx     context.Context // ends at Close
}

// workerState is what this node knows of a worker.
type workerState struct {
	name     string
	state    string    // registry state ("" until the registry names it)
	lastSeen time.Time // last hello
	free     int       // free slots it announced
	inFlight int       // this node's tasks it holds
	assigned int64     // tasks this node gave it
	// missed counts its deadlines missed in a row; it gets no task before resume.
	missed int
	resume time.Time
	// rng draws its checks (its own stream: a test with a fixed seed draws the same
	// checks for a worker whatever the other workers do); probation counts results that
	// are all checked after a failed check.
	rng       *mrand.Rand
	probation int
	stats     cluster.WorkerStats
	others    map[string]cluster.WorkerStats // other nodes' counters (registry)
	dirty     bool
	// key is the public key of its current incarnation (registry): a name revoked and
	// admitted again is a new worker, whose pages are told apart from the old one's.
	key string
}

// purgeState is the purge of one ledger owner: runs while a goroutine purges, again
// when another pass was asked for meanwhile.
type purgeState struct{ runs, again bool }

// owner is the ledger's name for an incarnation of worker name: its name and its key.
// Records written before incarnations were told apart are under the name alone.
func owner(name, key string) string {
	if key == "" {
		return name
	}
	return name + "\x00" + key
}

// ownerName is the worker name of a ledger owner.
func ownerName(o string) string {
	name, _, _ := strings.Cut(o, "\x00")
	return name
}

// expiredTask is a task whose deadline passed without a result: a result for it that
// comes later tells that the worker worked past its deadline.
type expiredTask struct {
	worker, token string
	deadline      time.Time
}

type pendingTask struct {
	worker string
	token  string
	url    string
	sent   time.Time
	result chan *Result
}

// helloTTL is how long a worker counts as present after its last heartbeat (it sends one
// a second).
const helloTTL = 3 * time.Second

// Start subscribes to the workers' heartbeats and this node's results, and follows the
// registry.
func Start(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, o Options) (*Dispatcher, error) {
	if o.Purge == nil || o.Fetcher == nil || o.DB == nil {
		return nil, errors.New("volunteer: a dispatcher needs the node's fetcher, database and a purge")
	}
	if o.Cluster == "" {
		o.Cluster = cluster.DefaultCluster
	}
	if o.TaskTimeout <= 0 {
		o.TaskTimeout = 15 * time.Second
	}
	if o.MinCheck <= 0 {
		o.MinCheck = 0.05
	}
	if o.Canary == 0 {
		o.Canary = 0.05
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	kv, err := cluster.WorkerRegistry(ctx, js, o.Cluster)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{o: o, nc: nc, js: js, kv: kv, log: o.Logger, workers: map[string]*workerState{}, pending: map[string]*pendingTask{},
		known: map[string][]known{}, ledger: &ledger{db: o.DB}, expired: map[string]expiredTask{}, taken: map[[16]byte]string{},
		purges: map[string]*purgeState{}, dropped: map[string]bool{},
		flushNow: make(chan struct{}, 1)}
	d.secret = make([]byte, 32)
	rand.Read(d.secret)
	seed := o.Seed
	if seed == 0 {
		seed = mrand.Uint64()
	}
	d.rng = mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	hello, err := nc.Subscribe("sonda."+o.Cluster+".worker.*.out.hello", d.onHello)
	if err != nil {
		return nil, err
	}
	results, err := nc.Subscribe("sonda."+o.Cluster+".worker.*.out.res."+o.Node, d.onResult)
	if err != nil {
		hello.Unsubscribe()
		return nil, err
	}
	d.subs = []*nats.Subscription{hello, results}
	rctx, cancel := context.WithCancel(context.Background())
	d.rctx, d.cancel = rctx, cancel
	w, err := kv.WatchAll(ctx)
	if err != nil {
		d.Close()
		return nil, err
	}
	// The registry's current states before any task goes out, then its changes.
	for e := range w.Updates() {
		if e == nil {
			break
		}
		d.onRegistry(rctx, e)
	}
	d.done.Add(2)
	go func() {
		defer d.done.Done()
		defer w.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil {
					d.onRegistry(rctx, e)
				}
			}
		}
	}()
	go func() {
		defer d.done.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				d.flushStats(context.Background())
				return
			case <-t.C:
				d.flushStats(rctx)
			case <-d.flushNow:
				d.flushStats(rctx)
			}
		}
	}()
	return d, nil
}

// Close stops following workers; tasks in progress end at their deadline.
func (d *Dispatcher) Close() {
	for _, s := range d.subs {
		s.Unsubscribe()
	}
	if d.cancel != nil {
		d.cancel()
	}
	d.done.Wait()
	d.purging.Wait()
}

func workerOf(subject string) string {
	// sonda.<cluster>.worker.<name>.out....
	parts := strings.SplitN(subject, ".", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

func (d *Dispatcher) state(name string) *workerState {
	w := d.workers[name]
	if w == nil {
		w = &workerState{name: name}
		d.workers[name] = w
	}
	return w
}

func (d *Dispatcher) onHello(m *nats.Msg) {
	var h Hello
	if json.Unmarshal(m.Data, &h) != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.state(workerOf(m.Subject))
	w.lastSeen, w.free = time.Now(), h.Free
}

func (d *Dispatcher) onResult(m *nats.Msg) {
	var r Result
	if json.Unmarshal(m.Data, &r) != nil {
		return
	}
	name := workerOf(m.Subject)
	d.mu.Lock()
	p := d.pending[r.ID]
	if p == nil || p.worker != name || p.token != r.Token {
		e, expired := d.expired[r.ID]
		late := expired && e.worker == name && e.token == r.Token
		if late {
			delete(d.expired, r.ID)
		}
		d.mu.Unlock()
		if late {
			d.late(name, e, &r)
		}
		return // late, repeated, or not this worker's task: dropped
	}
	delete(d.pending, r.ID)
	d.mu.Unlock()
	p.result <- &r
}

// onRegistry follows a worker's state; a quarantine purges what this node took from it.
// Other nodes' counters join the evidence: a worker's checks are judged cluster-wide.
func (d *Dispatcher) onRegistry(ctx context.Context, e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	if rest, ok := strings.CutPrefix(e.Key(), "s."); ok {
		name, node, _ := strings.Cut(rest, ".")
		var st cluster.WorkerStats
		if node == d.o.Node || json.Unmarshal(e.Value(), &st) != nil {
			return
		}
		d.mu.Lock()
		w := d.state(name)
		if w.others == nil {
			w.others = map[string]cluster.WorkerStats{}
		}
		if st.Failed > w.others[node].Failed {
			// A check failed on another node: this one checks the worker's next results
			// too (on probation cluster-wide, not only where the lie was seen).
			w.probation = Probation
		}
		w.others[node] = st
		d.mu.Unlock()
		return
	}
	name, ok := strings.CutPrefix(e.Key(), "w.")
	if !ok {
		return
	}
	var rec cluster.WorkerRecord
	if json.Unmarshal(e.Value(), &rec) != nil {
		return
	}
	// The owners whose pages go (their incarnation was quarantined), those whose records
	// go (revoked, never quarantined): the current incarnation and the former ones. The
	// records under the name alone (before incarnations were told apart) go with any
	// quarantined incarnation.
	var purge, drop []string
	cur := owner(name, rec.Key)
	switch {
	case rec.State == cluster.WorkerQuarantined || !rec.Quarantined.IsZero():
		purge = append(purge, cur, name)
	case rec.State == cluster.WorkerRevoked:
		drop = append(drop, cur, name)
	}
	for _, f := range rec.Former {
		if !f.Quarantined.IsZero() {
			purge = append(purge, owner(name, f.Key), name)
		} else {
			drop = append(drop, owner(name, f.Key))
		}
	}
	d.mu.Lock()
	w := d.state(name)
	w.state = rec.State
	if w.key != rec.Key {
		w.key, w.probation = rec.Key, 0 // a new incarnation (or the first word of this one)
	}
	purge = d.newPurges(purge)
	var drops []string
	for _, o := range drop {
		if d.purges[o] == nil && !d.dropped[o] {
			d.dropped[o] = true
			drops = append(drops, o)
		}
	}
	d.mu.Unlock()
	for _, o := range purge {
		d.purge(o)
	}
	// Revoked, never caught lying: what it delivered stays; its records go (the ledger
	// keeps only what a quarantine could still purge).
	for _, o := range drops {
		d.dropAll(o)
	}
}

// newPurges returns the owners of os this dispatcher has not purged yet, and marks them
// purged (d.mu held).
func (d *Dispatcher) newPurges(os []string) []string {
	var out []string
	for _, o := range os {
		if d.purges[o] == nil {
			d.purges[o] = &purgeState{}
			out = append(out, o)
		}
	}
	return out
}

// purgeBatch bounds the pages of one call to Options.Purge.
const purgeBatch = 512

// purge removes from the index and queues again every page this node holds from the
// quarantined worker incarnation o (an owner), as the ledger says (so also those taken
// before a restart), dropping their records as it goes. A failure is retried while the
// dispatcher runs; the rest stays in the ledger for the next start. One purge of an owner
// at a time: a call while it runs makes it read the ledger once more before it ends.
func (d *Dispatcher) purge(o string) {
	name := ownerName(o)
	d.mu.Lock()
	p := d.purges[o]
	if p == nil {
		p = &purgeState{}
		d.purges[o] = p
	}
	if p.runs {
		p.again = true
		d.mu.Unlock()
		return
	}
	p.runs = true
	d.mu.Unlock()
	d.purging.Add(1)
	go func() {
		defer d.purging.Done()
		total, wait := 0, time.Second
		defer func() {
			d.mu.Lock()
			p.runs, p.again = false, false
			d.mu.Unlock()
			if total > 0 {
				d.log.Warn("volunteer: purged a quarantined worker's pages; they are fetched again", "worker", name, "pages", total)
			}
		}()
		for d.rctx.Err() == nil {
			items, err := d.ledger.pages(o, purgeBatch)
			if err == nil && len(items) == 0 {
				d.mu.Lock()
				again := p.again
				p.again = false
				d.mu.Unlock()
				if !again {
					return
				}
				continue
			}
			if err == nil {
				err = d.o.Purge(d.rctx, items)
			}
			if err == nil {
				err = d.ledger.drop(o, items)
			}
			if err != nil {
				if d.rctx.Err() == nil {
					d.log.Error("volunteer: purging a quarantined worker's pages failed; retrying", "worker", name, "error", err, "retry", wait)
				}
				if !sleep(d.rctx, wait) {
					return
				}
				wait = min(2*wait, time.Minute)
				continue
			}
			total += len(items)
		}
	}()
}

// Name implements crawl.Sink.
func (d *Dispatcher) Name() string { return "volunteer" }

// Consume implements crawl.Sink. The node gives it every page after the search index's
// sink, which has queued the page by then. A page taken unchecked from a worker whose
// purge began while the crawl still processed it (between FetchPage and the index's
// queue) may have reached the index after the purge deleted it; the page's refetch does
// not always replace it (another node may serve its partition by then, or the refetch
// may answer 5xx, which leaves the index as it is). Such a page is purged again here,
// now that the index has it.
func (d *Dispatcher) Consume(_ context.Context, doc *crawl.Document) error {
	d.mu.Lock()
	o, taken := d.taken[doc.Item.Key]
	delete(d.taken, doc.Item.Key)
	again := taken && d.purges[o] != nil
	d.mu.Unlock()
	if !again {
		return nil
	}
	name, it := ownerName(o), doc.Item
	// Recorded again first: if the process ends before the purge is done, the next start
	// purges the page (the worker's records are purged on every start).
	if err := d.ledger.accept(o, it); err != nil {
		d.log.Warn("volunteer: cannot record a page's provenance", "url", it.URL, "error", err)
	}
	if err := d.o.Purge(d.rctx, []frontier.Item{it}); err != nil {
		// The record stays: the worker's purge takes it, and retries.
		d.log.Warn("volunteer: purging a quarantined worker's page failed; retrying", "worker", name, "url", it.URL, "error", err)
		d.purge(o)
		return nil
	}
	if err := d.ledger.drop(o, []frontier.Item{it}); err != nil {
		d.log.Warn("volunteer: cannot update a page's provenance", "url", it.URL, "error", err)
	}
	d.log.Warn("volunteer: purged a quarantined worker's page that reached the index during its purge; it is fetched again", "worker", name, "url", it.URL)
	return nil
}

// dropAll forgets the records of owner o.
func (d *Dispatcher) dropAll(o string) {
	for {
		items, err := d.ledger.pages(o, purgeBatch)
		if err == nil && len(items) > 0 {
			err = d.ledger.drop(o, items)
		}
		if err != nil {
			d.log.Warn("volunteer: cannot forget a revoked worker's pages", "worker", ownerName(o), "error", err)
		}
		if err != nil || len(items) == 0 {
			return
		}
	}
}

// pick chooses a present, active worker with room that was not tried for this page: the
// one this node gives the least work.
func (d *Dispatcher) pick(tried map[string]bool) *workerState {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	var best *workerState
	for name, w := range d.workers {
		if tried[name] || w.state != cluster.WorkerActive || now.Sub(w.lastSeen) > helloTTL || w.free <= 0 || now.Before(w.resume) {
			continue
		}
		if best == nil || w.inFlight < best.inFlight || w.inFlight == best.inFlight && w.assigned < best.assigned {
			best = w
		}
	}
	if best != nil {
		best.inFlight++
		best.assigned++
		best.free-- // until its next hello says otherwise
	}
	return best
}

// FetchPage implements crawl.PageFetcher.
func (d *Dispatcher) FetchPage(ctx context.Context, it frontier.Item, req fetch.Request, rest time.Duration) *fetch.Result {
	d.mu.Lock()
	delete(d.taken, it.Key) // left by an earlier lease of the page that never reached the sinks
	d.mu.Unlock()
	tried := map[string]bool{}
	waited := false // whether a worker may have sent the host a request: wait rest before another
	for range d.o.Attempts {
		w := d.pick(tried)
		if w == nil {
			break
		}
		tried[w.name] = true
		if waited && !sleep(ctx, rest) {
			return canceled(req.URL, ctx)
		}
		if k, ok := d.canaryFor(w, it.Host, req.URL); ok {
			sent := d.canary(ctx, w, k)
			waited = waited || sent
			if sent && !sleep(ctx, rest) {
				return canceled(req.URL, ctx)
			}
			if !d.active(w) { // the canary convicted it
				continue
			}
		}
		r, sent := d.send(ctx, w, req)
		waited = waited || sent
		if ctx.Err() != nil {
			return canceled(req.URL, ctx)
		}
		if r == nil {
			continue
		}
		return d.judge(ctx, w, it, req, rest, r)
	}
	if waited && !sleep(ctx, rest) {
		return canceled(req.URL, ctx)
	}
	return d.mine(ctx, it, req, 0)
}

// mine fetches the page by the node itself (after the host's rest), whose copy replaces
// any worker's: the ledger forgets who delivered the page before.
func (d *Dispatcher) mine(ctx context.Context, it frontier.Item, req fetch.Request, rest time.Duration) *fetch.Result {
	res := d.trusted(ctx, it.Host, req, rest)
	if !replaces(res) {
		return res // the copy the node holds, and who delivered it, are unchanged
	}
	if err := d.ledger.forget(it.Key); err != nil {
		d.log.Warn("volunteer: cannot update a page's provenance", "url", it.URL, "error", err)
	}
	return res
}

// own fetches a page by the node itself and remembers it as a canary for its host.
func (d *Dispatcher) own(ctx context.Context, host string, req fetch.Request) *fetch.Result {
	res := d.o.Fetcher.Fetch(ctx, req)
	if res.Err == nil && res.Status == 200 && strings.Contains(res.MediaType, "html") && req.ETag == "" && req.LastModified == "" {
		k := known{url: req.URL, status: res.Status, page: digestOf(res)}
		d.mu.Lock()
		ks := d.known[host]
		if len(ks) >= canariesPerHost {
			ks = ks[1:]
		}
		d.known[host] = append(ks, k)
		d.mu.Unlock()
	}
	return res
}

// known is a page the node fetched itself: a canary, whose content a worker's copy must
// match (a worker cannot tell a canary from any other task).
type known struct {
	url    string
	status int
	page   page
}

// canariesPerHost bounds the canaries kept per host (the most recent ones).
const canariesPerHost = 4

// canaryFor draws whether w gets a canary before the task for url (probability
// Options.Canary) and picks one of the host's known pages other than url.
func (d *Dispatcher) canaryFor(w *workerState, host, url string) (known, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.o.Canary <= 0 || d.rng.Float64() >= d.o.Canary {
		return known{}, false
	}
	ks := d.known[host]
	if len(ks) == 0 {
		return known{}, false
	}
	k := ks[d.rng.IntN(len(ks))]
	return k, k.url != url
}

// canary sends w a known page and compares its copy with the node's: a check that costs
// the node no request. sent says whether the task went out.
func (d *Dispatcher) canary(ctx context.Context, w *workerState, k known) (sent bool) {
	d.mu.Lock()
	w.inFlight++ // as pick does: the canary holds a slot of the worker
	w.free--
	d.mu.Unlock()
	r, sent := d.send(ctx, w, fetch.Request{URL: k.url})
	if r == nil {
		return sent
	}
	res := r.decoded(k.url, d.o.MaxBody)
	if !digestOf(res).Digest.Equal(r.Digest) {
		d.mu.Lock()
		w.stats.Lies++
		d.mu.Unlock()
		d.quarantine(ctx, w, "a result contradicted its own body ("+k.url+")")
		return sent
	}
	ok, why := res.Status == k.status, "status "+strconv.Itoa(res.Status)
	if ok {
		ok, why = agreePages(digestOf(res), k.page)
	}
	d.verdict(ctx, w, ok, true, k.url, why)
	return sent
}

func (d *Dispatcher) active(w *workerState) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return w.state == cluster.WorkerActive
}

// send gives w the task and waits for its result until the deadline. sent says whether
// the task went out (so the host may have been asked).
func (d *Dispatcher) send(ctx context.Context, w *workerState, req fetch.Request) (r *Result, sent bool) {
	deadline := time.Now().Add(d.o.TaskTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl // this node's right to fetch from the host ends sooner
	}
	id := make([]byte, 12)
	rand.Read(id)
	t := Task{ID: hex.EncodeToString(id), Node: d.o.Node, URL: req.URL, Deadline: deadline, ETag: req.ETag,
		LastModified: req.LastModified, UserAgent: d.o.UserAgent, MaxBody: d.o.MaxBody}
	if time.Until(deadline) < min(minTaskTime, d.o.TaskTimeout/2) {
		// Too little of this node's right to the host is left for a fetch: the worker
		// is not told about the page (it could only fetch it late); the node fetches it.
		d.mu.Lock()
		w.inFlight--
		w.free++
		d.mu.Unlock()
		return nil, false
	}
	t.Token = sign(d.secret, w.name, &t)
	p := &pendingTask{worker: w.name, token: t.Token, url: req.URL, sent: time.Now(), result: make(chan *Result, 1)}
	d.mu.Lock()
	d.pending[t.ID] = p
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.pending, t.ID)
		w.inFlight--
		w.free++ // the slot is free again (until its next hello says how many it has)
		switch {
		case r != nil:
			w.missed = 0
		case ctx.Err() == nil:
			// A worker that takes tasks and answers none (gone, or a black hole that
			// still says hello) is left alone for a task timeout, doubling each time.
			w.stats.Reissued++
			w.dirty = true
			w.missed++
			w.resume = time.Now().Add(d.o.TaskTimeout << min(w.missed-1, 6))
		}
		d.mu.Unlock()
	}()
	b, _ := json.Marshal(t)
	if err := d.nc.Publish(taskSubject(d.o.Cluster, w.name), b); err != nil {
		return nil, false
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case r = <-p.result:
		d.mu.Lock()
		w.stats.Busy += time.Since(p.sent).Seconds()
		d.mu.Unlock()
		return r, true
	case <-timer.C:
		d.log.Info("volunteer: a worker missed its deadline; the page goes to another", "worker", w.name, "url", req.URL)
		d.mu.Lock()
		d.expire(t.ID, expiredTask{worker: w.name, token: t.Token, deadline: deadline})
		d.mu.Unlock()
		return nil, true
	case <-ctx.Done():
		return nil, true
	}
}

// judge validates a worker's result: recomputed digest, and on a sample a fetch by the
// node itself, whose copy is then what the crawl gets.
func (d *Dispatcher) judge(ctx context.Context, w *workerState, it frontier.Item, req fetch.Request, rest time.Duration, r *Result) *fetch.Result {
	res := r.decoded(req.URL, d.o.MaxBody)
	mine := digestOf(res)
	d.mu.Lock()
	w.stats.Tasks++
	w.stats.Bytes += int64(len(r.Wire))
	if w.stats.FirstTask.IsZero() {
		w.stats.FirstTask = time.Now().UTC()
	}
	w.dirty = true
	d.mu.Unlock()
	if !mine.Digest.Equal(r.Digest) {
		d.mu.Lock()
		w.stats.Lies++
		d.mu.Unlock()
		d.quarantine(ctx, w, "a result contradicted its own body ("+req.URL+")")
		return d.mine(ctx, it, req, rest)
	}
	if checkable(res) && d.mayCheck(w) {
		t := d.mine(ctx, it, req, rest)
		if ctx.Err() != nil || t.Err != nil && fetch.KindOf(t.Err) == fetch.KindCanceled {
			return t
		}
		ok, why := agree(res, t)
		d.verdict(ctx, w, ok, false, req.URL, why)
		return t
	}
	if !replaces(res) {
		return res // the copy the node holds stays, and so does its provenance
	}
	// Recorded under d.mu with the state read: a quarantine (which sets the state under
	// d.mu before its purge reads the ledger) either sees this record or comes first.
	d.mu.Lock()
	if w.state != cluster.WorkerActive {
		// Quarantined (or revoked) while this task ran: not kept.
		d.mu.Unlock()
		return d.mine(ctx, it, req, rest)
	}
	o := owner(w.name, w.key)
	err := d.ledger.accept(o, it)
	if err == nil {
		d.taken[it.Key] = o // until the crawl hands the page to its sinks (Consume)
	}
	d.mu.Unlock()
	if err != nil {
		// Unrecorded, the page could not be purged later: the node's own copy instead.
		d.log.Warn("volunteer: cannot record a page's provenance; fetching it myself", "url", it.URL, "error", err)
		return d.mine(ctx, it, req, rest)
	}
	return res
}

// lateGrace is how long after its deadline a complete result may come (the time to send
// it, on a loaded machine) before it counts as late; lateLimit is how many late results convict a worker, if
// they are more than a tenth of its results.
const (
	lateGrace = 2 * time.Second
	lateLimit = 3
)

// minTaskTime is the least time before its deadline a task is sent with (or half the task
// timeout, if less).
const minTaskTime = time.Second

// lateMemory is how long after its deadline a task that passed it is remembered, so that
// its result, if it comes, is counted late (or the task timeout, if longer). It is well
// beyond lateGrace: on a busy machine a result sent just after the grace may take a
// while to be read, and one that is not recognised is not counted at all.
const lateMemory = time.Minute

// expire remembers a task whose deadline passed, for lateMemory after its deadline (d.mu
// held). The map is bounded by the tasks whose deadline passed in that time.
func (d *Dispatcher) expire(id string, e expiredTask) {
	now := time.Now()
	for k, x := range d.expired {
		if now.Sub(x.deadline) > max(lateMemory, d.o.TaskTimeout) {
			delete(d.expired, k)
		}
	}
	d.expired[id] = e
}

// late handles a result that came after its task's deadline. A failed fetch (cut at the
// deadline: an honest worker's request ends there) or one that came within lateGrace is
// harmless; a complete page much later means the worker fetched after the deadline, when
// the node's right to ask the host may have ended and another node may be asking it. The
// node cannot stop such a request, but a worker that does it regularly is quarantined.
func (d *Dispatcher) late(name string, e expiredTask, r *Result) {
	if r.ErrKind != "" || time.Since(e.deadline) <= lateGrace {
		return
	}
	d.mu.Lock()
	w := d.state(name)
	w.stats.Late++
	w.dirty = true
	all := w.evidence()
	d.mu.Unlock()
	d.log.Warn("volunteer: a worker's complete result came after its deadline", "worker", name, "after", time.Since(e.deadline).Round(time.Millisecond))
	if all.Late >= lateLimit && 10*all.Late > all.Tasks {
		d.purging.Add(1) // Close waits for it
		go func() {
			defer d.purging.Done()
			d.quarantine(d.rctx, w, fmt.Sprintf("%d complete results came more than %s after their deadline: it fetches when the node may no longer ask the host", all.Late, lateGrace))
		}()
	}
}

// verdict counts a check of w (a trusted fetch, or a canary) and quarantines w when the
// evidence convicts it.
func (d *Dispatcher) verdict(ctx context.Context, w *workerState, ok, canary bool, url, why string) {
	d.mu.Lock()
	w.stats.Checked++
	if canary {
		w.stats.Canaries++
	}
	if ok {
		w.stats.Passed++
	} else {
		w.stats.Failed++
		w.probation = Probation
	}
	w.dirty = true
	all := w.evidence()
	failed, checked := all.Failed, all.Checked
	d.mu.Unlock()
	if ok {
		return
	}
	select {
	case d.flushNow <- struct{}{}:
	default: // a flush is due already
	}
	d.log.Warn("volunteer: a worker's page differs from the node's own copy", "worker", w.name, "url", url, "canary", canary, "why", why)
	if Convicted(checked-failed, failed) {
		d.quarantine(ctx, w, fmt.Sprintf("%d of %d checked pages differed from the node's own copy (last: %s: %s)", failed, checked, url, why))
	}
}

// replaces says whether the crawl replaces the copy the node holds of a page with this
// result (a page, a redirect, a page gone), as opposed to keeping it (304 Not Modified,
// 429, 5xx, other 4xx, a failed fetch: what index.Keep means). Only a result that replaces
// the copy changes who delivered it: a page a liar delivered, revisited with a 304 from
// the node or another worker, is still the liar's page.
func replaces(res *fetch.Result) bool {
	s := res.Status
	return s >= 200 && s < 400 && s != 304 || s == 404 || s == 410
}

// checkable says whether a result may be checked by fetching the page again: not a failed
// or transient answer (a 429 or 503 asks the host to be left alone, and the node's copy
// would differ for reasons of the server's).
func checkable(res *fetch.Result) bool {
	return res.Err == nil && res.Status != 429 && res.Status < 500
}

// mayCheck draws whether to check this result: probability min(1, max(MinCheck,
// 4·E[fail])) with E[fail] the Beta(1+failed, 1+passed) posterior mean.
// A worker that failed a check is checked on every one of its next Probation results.
func (d *Dispatcher) mayCheck(w *workerState) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.probation > 0 {
		w.probation--
		return true
	}
	if w.rng == nil {
		seed := d.o.Seed
		if seed == 0 {
			seed = d.rng.Uint64()
		}
		h := fnv.New64a()
		h.Write([]byte(w.name))
		w.rng = mrand.New(mrand.NewPCG(seed, h.Sum64()))
	}
	all := w.evidence()
	return w.rng.Float64() < CheckRate(all.Passed, all.Failed+all.Lies, d.o.MinCheck)
}

// evidence is what every node saw of w: this node's counters and the others' last ones.
func (w *workerState) evidence() cluster.WorkerStats {
	all := w.stats
	for _, st := range w.others {
		all.Checked += st.Checked
		all.Passed += st.Passed
		all.Failed += st.Failed
		all.Lies += st.Lies
		all.Late += st.Late
		all.Tasks += st.Tasks
	}
	return all
}

// Probation is how many results of a worker that failed a check are all checked, by every
// node (the others learn of the failure from the registry).
const Probation = 8

// CheckRate is the share of a worker's results a node checks, from the checks it passed
// and failed so far.
func CheckRate(passed, failed int64, minCheck float64) float64 {
	fail := float64(failed+1) / float64(passed+failed+2)
	return min(1, max(minCheck, 4*fail))
}

// HonestChange is the share of checks an honest worker may fail because the page changed
// between its fetch and the node's.
const HonestChange = 0.05

// Convicted says whether a worker that passed and failed so many checks lies: at least two
// failures, and the Beta(1+failed, 1+passed) posterior puts 99% of its mass on a failure
// rate above HonestChange (so a worker whose pages change now and then is not convicted,
// while one that lies on a fifth of its pages is, after a handful of failures).
func Convicted(passed, failed int64) bool {
	return failed >= 2 && betaAbove(HonestChange, failed+1, passed+1) >= 0.99
}

// betaAbove is P(X > x) for X ~ Beta(a, b) with integer a, b: the probability that fewer
// than a of a+b-1 Bernoulli(x) trials succeed.
func betaAbove(x float64, a, b int64) float64 {
	n := a + b - 1
	p := 0.0
	lx, l1x := math.Log(x), math.Log1p(-x)
	for j := int64(0); j < a; j++ {
		p += math.Exp(lchoose(n, j) + float64(j)*lx + float64(n-j)*l1x)
	}
	return min(1, p)
}

func lchoose(n, k int64) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// trusted fetches the page by the node itself, after the host's rest (the worker's
// request came just before).
func (d *Dispatcher) trusted(ctx context.Context, host string, req fetch.Request, rest time.Duration) *fetch.Result {
	if !sleep(ctx, rest) {
		return canceled(req.URL, ctx)
	}
	return d.own(ctx, host, req)
}

// quarantine marks w quarantined in the registry; every node, this one included, purges
// what it took from w when the registry says so.
func (d *Dispatcher) quarantine(ctx context.Context, w *workerState, reason string) {
	d.mu.Lock()
	already := w.state == cluster.WorkerQuarantined
	w.state = cluster.WorkerQuarantined // no more tasks from here at once
	purge := d.newPurges([]string{owner(w.name, w.key), w.name})
	d.mu.Unlock()
	for _, o := range purge {
		d.purge(o)
	}
	if already {
		return
	}
	d.log.Warn("volunteer: worker quarantined", "worker", w.name, "reason", reason)
	if err := cluster.SetWorkerState(ctx, d.js, d.o.Cluster, w.name, cluster.WorkerQuarantined, reason); err != nil {
		d.log.Error("volunteer: cannot record the quarantine", "worker", w.name, "error", err)
	}
}

// flushStats writes the counters that changed to the registry.
func (d *Dispatcher) flushStats(ctx context.Context) {
	type entry struct {
		name string
		st   cluster.WorkerStats
	}
	var out []entry
	d.mu.Lock()
	for name, w := range d.workers {
		if w.dirty {
			w.dirty = false
			w.stats.Updated = time.Now().UTC()
			out = append(out, entry{name, w.stats})
		}
	}
	d.mu.Unlock()
	for _, e := range out {
		if err := cluster.PutWorkerStats(ctx, d.kv, e.name, d.o.Node, e.st); err != nil && ctx.Err() == nil {
			d.log.Warn("volunteer: cannot record a worker's counters", "worker", e.name, "error", err)
		}
	}
}

// Stats returns what this node saw of each worker (for metrics and tests).
func (d *Dispatcher) Stats() map[string]cluster.WorkerStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]cluster.WorkerStats, len(d.workers))
	for name, w := range d.workers {
		out[name] = w.stats
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func canceled(url string, ctx context.Context) *fetch.Result {
	return &fetch.Result{URL: url, Err: &fetch.Error{Kind: fetch.KindCanceled, URL: url, Err: context.Cause(ctx)}}
}
