package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/store"
)

// Options configure a Node.
type Options struct {
	Cluster string // cluster name (default "sonda")
	NodeID  string // this node's id, unique in the cluster (required)
	// TTL is how long a silent node keeps its membership, for a new cluster (default 10s).
	// A cluster keeps the TTL it was created with; every node reads it from the server.
	// Fail-over takes about TTL plus a heartbeat.
	TTL time.Duration
	// Partitions is the number of host partitions, for a new cluster (default 64).
	Partitions int
	// ExitWhenDone makes Run return ErrDone once the whole cluster has no URL left.
	ExitWhenDone bool
	// Unconfirmed bounds the pages this node may be fetching plus the completed pages
	// whose new state JetStream has not acknowledged yet (default 8; sonda node uses twice
	// the crawl concurrency). A node that dies loses exactly those: its partitions' next
	// owner fetches them again, so a crash costs at most Unconfirmed duplicate fetches. A
	// lease waits for the relay when the bound is reached.
	Unconfirmed int
	Logger      *slog.Logger
}

// ErrDone is what Run returns when the cluster finished its crawl (Options.ExitWhenDone).
var ErrDone = errors.New("cluster: the whole cluster has no URL left")

// MemberInfo is what a node publishes about itself at each heartbeat.
type MemberInfo struct {
	Node        string    `json:"node"`
	Incarnation string    `json:"inc"`
	Started     time.Time `json:"started"`
	Partitions  []int     `json:"partitions"` // owned and serving
	Queued      int64     `json:"queued"`
	InFlight    int       `json:"in_flight"`
	Outbox      int64     `json:"outbox"`
	Pages       int64     `json:"pages"`
	Errors      int64     `json:"errors"`
	PagesPerSec float64   `json:"pages_per_sec"`
	Admitted    int64     `json:"admitted"`
	Published   int64     `json:"published"`
	FailOvers   int64     `json:"fail_overs"`      // partitions taken from a node whose membership expired
	Busy        bool      `json:"busy"`            // rebuilding or handing over a partition
	Idle        bool      `json:"idle"`            // nothing queued, in flight, unrelayed or moving
	Ranks       bool      `json:"ranks,omitempty"` // stores the cluster's ranks and may compute them (ReceiveRanks)
}

// Node is one crawler node of a cluster. It implements crawl.Router and crawl.Gate.
type Node struct {
	opts    Options
	names   names
	log     *slog.Logger
	nc      *nats.Conn
	js      jetstream.JetStream
	members jetstream.KeyValue
	// membersStream is the stream behind members: termination detection reads its last
	// revision.
	membersStream jetstream.Stream
	parts         jetstream.KeyValue
	seeds         jetstream.KeyValue
	links         jetstream.Stream
	state         jetstream.Stream
	ttl           time.Duration
	nparts        int

	crawler  *crawl.Crawler
	fr       *frontier.Frontier
	db       *pebble.DB
	attached chan struct{} // closed by Attach

	outMu     sync.Mutex // serializes outbox writers
	out       *outbox
	outCount  atomic.Int64 // records in the outbox
	wakeRelay chan struct{}
	// relayFrom is the lowest outbox number the relay may still find unpublished (see
	// outbox.low); lastFullScan is when it last read the outbox from its start. Only the
	// relay goroutine uses them.
	relayFrom    uint64
	lastFullScan time.Time
	// outboxReads counts the relay's reads of the outbox (TestIdleRelayReadsNothing).
	outboxReads atomic.Int64

	// unacked counts the completed pages whose state is in the outbox, not yet
	// acknowledged by JetStream; with inflight (leases entered, under mu) it is bounded by
	// Options.Unconfirmed. relayed is closed (and replaced) when either shrinks.
	unacked atomic.Int64

	mu         sync.Mutex
	inflight   int
	leases     map[[16]byte]*part // leases entered, by URL key: the tenure each entered under
	relayed    chan struct{}
	inc        string
	validUntil time.Time
	owned      map[int]*part
	memberView map[string]memberSeen
	partView   map[int]partEntry
	hostPart   sync.Map // host -> partition

	admitted  atomic.Int64
	published atomic.Int64
	failOvers atomic.Int64
	moving    atomic.Int64 // partitions being rebuilt or handed over
	holds     atomic.Int64 // Hold calls not released
	leaving   atomic.Bool  // Run is ending: claim nothing, stop heartbeats
	rate      rateMeter
	metrics   *metrics
	sent      *frontier.RecentKeys // URLs routed and acknowledged recently: not routed again
	skipped   atomic.Int64
	doneCh    chan struct{}
	doneOnce  sync.Once
	// started is set once the crawler handed over its seeds (its first Add): until then
	// the node is not idle, or the cluster could end before the seeds were routed.
	started atomic.Bool
	stale   atomic.Int64 // lease outcomes not recorded: the partition moved during the lease
	// rebuildMu serializes rebuilding partitions with forgetting lost ones.
	rebuildMu sync.Mutex
	inlinks   InLinkGraph // nil: links routed here are not recorded
	// skipOwnEdges: the crawler records its pages' links in inlinks itself, so the edges
	// this run sent are not read back (ReceiveInLinks).
	skipOwnEdges bool
	run          string       // this Node's id among its node's runs: a process, or a test's node
	follows      map[int]bool // partitions whose links are recorded here (under mu)
	// followedEarlier: partitions followed in an earlier run (under mu): the graph may hold
	// links into them that messages since replaced (links.go, recordEdges).
	followedEarlier map[int]bool
	edges           edgeFollow      // the follower that records them (links.go; under mu)
	edgesNew        atomic.Bool     // the state stream holds no links in the earlier format (migrateEdges)
	migrateMu       sync.Mutex      // one migrateEdges at a time
	runCtx          context.Context // the run the tenures and followers live in (under mu; nil before the first tenure)
	tenures         sync.WaitGroup  // the goroutines serving partitions: Run waits for them

	// The cluster's PageRank (ranks.go).
	rankStore   RankStore // nil: this node neither computes nor stores the cluster's ranks
	rankDir     string
	rankEvery   time.Duration
	rankKV      jetstream.KeyValue
	rankStream  jetstream.Stream
	lastRun     *rankRun     // the last run published (under mu)
	rankMu      sync.Mutex   // one rank step at a time; guards the fields below
	rankedAt    time.Time    // when this node last started a run
	storedRun   string       // the run whose ranks are stored here
	storedParts []int        // of these partitions
	rankedRuns  atomic.Int64 // runs stored here
}

// part is one tenure of this node on a partition: from the claim to the hand-over or the
// loss of its membership. A partition taken again is a new part.
type part struct {
	ready    bool // rebuilt and consuming: the gate is open
	inflight int  // leases entered under this tenure and not left yet
	stop     context.CancelFunc
	stopped  chan struct{}
	leaving  bool
	lost     bool   // the membership ended, or another node opened a later epoch
	epoch    uint64 // sequence of this tenure's epoch message: the fence of its state writes
	owner    string // "node/incarnation" this tenure claimed the partition as
}

type memberSeen struct {
	info MemberInfo
	rev  uint64
	at   time.Time // local receive time
}

type partEntry struct {
	owner string // "node/incarnation", "" when free
	rev   uint64
}

// Join connects a node to the cluster on nc, creating the cluster's streams and buckets if
// this is its first node. The node takes no partition until Run.
func Join(ctx context.Context, nc *nats.Conn, o Options) (*Node, error) {
	if o.Cluster == "" {
		o.Cluster = DefaultCluster
	}
	if err := CheckName("cluster name", o.Cluster); err != nil {
		return nil, err
	}
	if err := CheckName("node id", o.NodeID); err != nil {
		return nil, err
	}
	if o.TTL <= 0 {
		o.TTL = 10 * time.Second
	}
	if o.Partitions <= 0 {
		o.Partitions = DefaultPartitions
	}
	if o.Unconfirmed <= 0 {
		o.Unconfirmed = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	n := &Node{opts: o, names: names{o.Cluster}, log: o.Logger.With("node", o.NodeID), nc: nc, js: js,
		owned: map[int]*part{}, leases: map[[16]byte]*part{}, follows: map[int]bool{}, followedEarlier: map[int]bool{}, memberView: map[string]memberSeen{}, partView: map[int]partEntry{},
		wakeRelay: make(chan struct{}, 1), doneCh: make(chan struct{}), relayed: make(chan struct{}), attached: make(chan struct{})}
	if err := n.setup(ctx); err != nil {
		return nil, err
	}
	n.metrics = n.newMetrics()
	n.sent = frontier.NewRecentKeys(1 << 18)
	n.run = newIncarnation()
	return n, nil
}

// setup creates or opens the cluster's streams and buckets.
func (n *Node) setup(ctx context.Context) error {
	var err error
	if n.members, err = openKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: n.names.members(), TTL: n.opts.TTL, History: 1,
		Description: "sonda cluster " + n.names.cluster + ": live nodes (heartbeat with TTL)"}); err != nil {
		return err
	}
	st, err := n.members.Status(ctx)
	if err != nil {
		return jsError("read the membership bucket", err)
	}
	n.ttl = st.TTL()
	if n.ttl <= 0 {
		return fmt.Errorf("cluster: bucket %s has no TTL; delete it (nats kv del %s) and start again", n.names.members(), n.names.members())
	}
	if n.membersStream, err = n.js.Stream(ctx, "KV_"+n.names.members()); err != nil {
		return jsError("open the membership bucket's stream", err)
	}
	if n.parts, err = openKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: n.names.parts(), History: 1,
		Description: "sonda cluster " + n.names.cluster + ": partition owners"}); err != nil {
		return err
	}
	if n.seeds, err = openKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: n.names.seeds(), History: 1,
		Description: "sonda cluster " + n.names.cluster + ": seeds"}); err != nil {
		return err
	}
	// The partition count is fixed by the first node; the others read it.
	if _, err := n.parts.Create(ctx, "count", []byte(strconv.Itoa(n.opts.Partitions))); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return jsError("record the partition count", err)
	}
	e, err := n.parts.Get(ctx, "count")
	if err != nil {
		return jsError("read the partition count", err)
	}
	if n.nparts, err = strconv.Atoi(string(e.Value())); err != nil || n.nparts <= 0 {
		return fmt.Errorf("cluster: partition count %q in bucket %s is not a positive number", e.Value(), n.names.parts())
	}
	if n.links, err = n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.names.linksStream(), Subjects: []string{n.names.prefix() + "links.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		Description: "sonda cluster " + n.names.cluster + ": URLs routed to the owner of their host",
	}); err != nil {
		return jsError("create stream "+n.names.linksStream(), err)
	}
	if n.state, err = n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.names.stateStream(), Subjects: []string{n.names.prefix() + "url.>", n.names.prefix() + "rest.>", n.names.prefix() + "epoch.>", n.names.prefix() + "edges.>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1,
		Description: "sonda cluster " + n.names.cluster + ": last state of every URL, host rest times, partition epochs and pages' links",
	}); err != nil {
		return jsError("create stream "+n.names.stateStream(), err)
	}
	return n.openRanks(ctx)
}

func openKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, jsError("open bucket "+cfg.Bucket, err)
	}
	return kv, nil
}

// jsError explains the usual JetStream failures.
func jsError(doing string, err error) error {
	switch {
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("cluster: %s: JetStream is not enabled on the NATS server (start it with `nats-server -js` or use `sonda nats`): %w", doing, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("cluster: %s: the NATS server did not answer in time: %w", doing, err)
	}
	return fmt.Errorf("cluster: %s: %w", doing, err)
}

// TTL is the cluster's membership TTL.
func (n *Node) TTL() time.Duration { return n.ttl }

// Partitions is the cluster's partition count.
func (n *Node) Partitions() int { return n.nparts }

// AddSeeds records seeds cluster-wide (every node's scope follows them) and returns all the
// cluster's seeds.
func (n *Node) AddSeeds(ctx context.Context, urls []string) ([]string, error) {
	for _, u := range urls {
		h := fnv.New64a()
		h.Write([]byte(u))
		k := fmt.Sprintf("%x", h.Sum64())
		if _, err := n.seeds.Put(ctx, k, []byte(u)); err != nil {
			return nil, jsError("record seed "+u, err)
		}
	}
	return n.allSeeds(ctx)
}

func (n *Node) allSeeds(ctx context.Context) ([]string, error) {
	lister, err := n.seeds.ListKeys(ctx)
	if err != nil {
		return nil, jsError("list seeds", err)
	}
	var out []string
	for k := range lister.Keys() {
		e, err := n.seeds.Get(ctx, k)
		if err != nil {
			continue
		}
		out = append(out, string(e.Value()))
	}
	sort.Strings(out)
	return out, nil
}

// Attach connects the node to the crawler it routes for (built with WithRouter(n) and
// WithGate(n)): the node admits routed URLs into its frontier and keeps its outbox in its
// database.
func (n *Node) Attach(c *crawl.Crawler) error {
	n.crawler, n.fr, n.db = c, c.Frontier(), c.Store().Pebble()
	o, pending, err := openOutbox(n.db, n.opts.NodeID)
	if err != nil {
		return err
	}
	n.out = o
	n.outCount.Store(int64(pending))
	// A node starts owning nothing: what its frontier still holds from an earlier run is
	// stale (its hosts were taken over and rebuilt from JetStream) and is rebuilt again for
	// the partitions it takes back.
	if _, _, err := n.fr.Purge(func(string) bool { return true }); err != nil {
		return fmt.Errorf("cluster: forget the queues of an earlier run: %w", err)
	}
	close(n.attached)
	return nil
}

// partitionOf is host's partition, cached.
func (n *Node) partitionOf(host string) int {
	if p, ok := n.hostPart.Load(host); ok {
		return p.(int)
	}
	p := PartitionOf(host, n.nparts)
	n.hostPart.Store(host, p)
	return p
}

// Enter implements crawl.Gate. Besides ownership and the fence, it applies the bound on
// unconfirmed pages (Options.Unconfirmed): a lease waits up to a heartbeat period for the
// relay to catch up, then is handed back.
func (n *Node) Enter(it frontier.Item) bool {
	p := n.partitionOf(it.Host)
	deadline := time.Now().Add(n.tick())
	for {
		n.mu.Lock()
		pt := n.owned[p]
		if pt == nil || !pt.ready || !time.Now().Before(n.validUntil) {
			n.mu.Unlock()
			return false
		}
		// A lease that routed its completion counts twice until it leaves (in inflight
		// and in unacked): the bound errs on the safe side.
		if n.inflight+int(n.unacked.Load()) < n.opts.Unconfirmed {
			pt.inflight++
			n.inflight++
			n.leases[it.Key] = pt
			n.mu.Unlock()
			return true
		}
		relayed := n.relayed
		n.mu.Unlock()
		n.kick()
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		t := time.NewTimer(wait)
		select {
		case <-relayed:
		case <-t.C:
		}
		t.Stop()
	}
}

// signalLocked wakes the leases waiting in Enter; n.mu is held.
func (n *Node) signalLocked() {
	close(n.relayed)
	n.relayed = make(chan struct{})
}

// Leave implements crawl.Gate. The lease counts against the partition it entered under,
// which may no longer be the one this node serves (it lost its membership meanwhile).
func (n *Node) Leave(it frontier.Item) {
	// The lease's page batch is committed (or dropped) by now: its records may be relayed.
	// The relay's next round takes them (within relayEvery): a round per page would cost
	// an outbox read, two batch commits and a write to the server per page, where a round
	// takes the records of every page since the last one for about the price of one. A
	// lease waiting for the relay (Enter, at the bound on unconfirmed pages) wakes it.
	n.outMu.Lock()
	if n.out != nil {
		n.out.closed(it.Key)
	}
	n.outMu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	if pt := n.leases[it.Key]; pt != nil {
		pt.inflight--
		delete(n.leases, it.Key)
	}
	n.inflight--
	n.signalLocked()
}

// leaseFence is the fence of the partition tenure the lease of key entered under, when
// this node still serves it: what the lease writes about its URL and host is then
// current. False means the partition moved since (this node was expelled, or handed it
// over and took it back): its next owner rebuilt it without this lease's outcome and
// fetches the URL again.
func (n *Node) leaseFence(key [16]byte, host string) (fence, bool) {
	p := n.partitionOf(host)
	n.mu.Lock()
	defer n.mu.Unlock()
	pt := n.leases[key]
	if pt == nil || pt.lost || n.owned[p] != pt {
		return fence{}, false
	}
	return fence{part: p, epoch: pt.epoch}, true
}

// Valid implements crawl.Gate: the node owns host's partition and its membership is fresh.
func (n *Node) Valid(host string) bool {
	p := n.partitionOf(host)
	n.mu.Lock()
	defer n.mu.Unlock()
	pt := n.owned[p]
	return pt != nil && pt.ready && time.Now().Before(n.validUntil)
}

// errFenced ends a request that outlived this node's right to fetch.
var errFenced = errors.New("cluster: this node's membership lease ran out during the request")

// Fence implements crawl.Gate. The fence is Valid's: until TTL/2 after the last heartbeat
// the server accepted, while another node may take this node's hosts only a full TTL
// after it. A request may start until the fence and must end by the fence plus TTL/4, as
// the fence moves on with each heartbeat: the last quarter of the TTL is the margin for a
// host's politeness delay and for the time between the end of a request and its answer
// here. Only a process stalled between the context's last check and the send itself, for
// longer than that margin, could still reach a host its successor owns.
func (n *Node) Fence(ctx context.Context, host string) (context.Context, context.CancelFunc, bool) {
	if !n.Valid(host) {
		return nil, nil, false
	}
	rctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			n.mu.Lock()
			end := n.validUntil.Add(n.ttl / 4)
			n.mu.Unlock()
			d := time.Until(end)
			if d <= 0 {
				cancel(errFenced)
				return
			}
			t := time.NewTimer(d)
			select {
			case <-rctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return rctx, func() { cancel(nil) }, true
}

// Route implements crawl.Router: the discovered URLs, the leased URL's new state and its
// host's rest go to the outbox in the page's batch.
func (n *Node) Route(b *pebble.Batch, done frontier.Item, out frontier.Outcome) error {
	n.outMu.Lock()
	defer n.outMu.Unlock()
	n.out.opened(done.Key) // until Leave: the batch commits after Route returns
	now := time.Now()
	put := func(kind byte, subject string, payload []byte, f fence) error {
		n.outCount.Add(1)
		return n.out.put(b, kind, subject, payload, f)
	}
	for _, it := range out.Discovered {
		if n.known(it.Key) {
			n.skipped.Add(1)
			continue
		}
		if err := put(kindLink, n.names.links(n.partitionOf(it.Host)), encodeItem(toWire(it)), fence{}); err != nil {
			return err
		}
	}
	n.rate.add(now)
	p := n.partitionOf(done.Host)
	if out.Fetched {
		if err := n.fetchedIn(b, p); err != nil {
			return err
		}
	}
	f, current := n.leaseFence(done.Key, done.Host)
	if !current {
		// The partition moved during the lease: its owner rebuilt it without this outcome
		// and fetches the URL again; recording it would overwrite the owner's record.
		n.stale.Add(1)
		n.log.Debug("not recording the outcome of a lease whose partition moved", "url", done.URL, "partition", p)
		return nil
	}
	st := toWire(done)
	switch {
	case !out.Retry.IsZero(): // the frontier's rule: a retry wins over a revisit
		st.Due, st.Attempts = out.Retry, done.Attempts+1
	case !out.Revisit.IsZero():
		st.Due, st.Visits, st.Attempts = out.Revisit, done.Visits+1, 0
	default:
		// A rebuild needs only the key of a URL that is done (it joins the seen set), and
		// most URLs of a crawl end done: their record stays this small for good.
		st = wireItem{Key: done.Key[:], Done: true}
	}
	if err := put(kindState, n.names.urlState(p, done.Key), encodeItem(st), f); err != nil {
		return err
	}
	n.unacked.Add(1) // counted like outCount: a page batch that fails ends the crawl
	// The host's rest matters to a next owner only if it lasts until that owner may start:
	// no other node takes this node's hosts before its membership key expires, a full TTL
	// after the heartbeat that set validUntil (TTL/2 after it). Most rests (the politeness
	// delay) end long before; those are not recorded, which spares JetStream a message
	// per page. A hand-over records every host's rest (release).
	n.mu.Lock()
	successor := n.validUntil.Add(n.ttl / 2)
	n.mu.Unlock()
	until := crawl.HostRest(now, out)
	if !until.After(successor) {
		return nil
	}
	rest, _ := json.Marshal(restMsg{Host: done.Host, Until: until})
	return put(kindState, n.names.rest(p, done.Host), rest, f)
}

// known says a link need not be routed: its owner has it already. Either this node's seen
// set has it (every key there was first recorded in the cluster's state stream, by this
// node or by the owner it rebuilt a partition from), or this node routed it recently and
// JetStream acknowledged it (so a crash cannot lose it).
func (n *Node) known(k [16]byte) bool {
	if n.sent.Has(k) {
		return true
	}
	seen, err := n.fr.Seen(k)
	return err == nil && seen
}

// Add implements crawl.Router: seeds and sitemap URLs go to their owners through the outbox.
func (n *Node) Add(items []frontier.Item) error {
	n.outMu.Lock()
	defer n.outMu.Unlock()
	b := n.db.NewBatch()
	defer b.Close()
	for _, it := range items {
		if err := n.out.put(b, kindLink, n.names.links(n.partitionOf(it.Host)), encodeItem(toWire(it)), fence{}); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("cluster: outbox: %w", err)
	}
	n.outCount.Add(int64(len(items)))
	n.started.Store(true)
	n.kick()
	return nil
}

// routeRests records the rest times of hosts of partition f.part in the state stream,
// through the outbox.
func (n *Node) routeRests(rests map[string]time.Time, f fence) error {
	if len(rests) == 0 {
		return nil
	}
	n.outMu.Lock()
	defer n.outMu.Unlock()
	b := n.db.NewBatch()
	defer b.Close()
	for h, until := range rests {
		rest, _ := json.Marshal(restMsg{Host: h, Until: until})
		if err := n.out.put(b, kindState, n.names.rest(f.part, h), rest, f); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("cluster: outbox: %w", err)
	}
	n.outCount.Add(int64(len(rests)))
	n.kick()
	return nil
}

func (n *Node) kick() {
	select {
	case n.wakeRelay <- struct{}{}:
	default:
	}
}

// Run keeps the node in the cluster until ctx ends (or, with ExitWhenDone, until the whole
// cluster is done: it returns ErrDone). On the way out it hands its partitions over and
// leaves the membership, so the others need not wait for its TTL.
func (n *Node) Run(ctx context.Context) error {
	if n.fr == nil {
		return errors.New("cluster: Run before Attach")
	}
	n.inc = newIncarnation()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	loops := []func(context.Context){n.heartbeatLoop, n.watchMembers, n.watchParts, n.claimLoop, n.relayLoop, n.seedLoop}
	if n.opts.ExitWhenDone {
		loops = append(loops, n.doneLoop)
	}
	if n.rankStore != nil {
		loops = append(loops, n.watchRanks, n.rankLoop)
	}
	for _, loop := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); loop(ctx) }()
	}
	earlier := n.followed()
	n.mu.Lock()
	for _, p := range earlier {
		n.followedEarlier[p] = true
	}
	n.mu.Unlock()
	for _, p := range earlier { // the pages this node indexed then still count their in-links
		n.follow(ctx, p)
	}
	var err error
	select {
	case <-ctx.Done():
	case <-n.doneCh:
		err = ErrDone
		if n.rankStore != nil {
			n.finalRanks(ctx)
		}
	}
	n.leave(ctx)
	cancel()
	wg.Wait()
	n.tenures.Wait() // none may write to the crawler's database once Run returned
	return err
}

// leave hands over every partition and deletes the membership key.
func (n *Node) leave(ctx context.Context) {
	n.leaving.Store(true)
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.ttl)
	defer cancel()
	n.waitEdges(lctx, n.ttl/2)
	n.mu.Lock()
	var ps []int
	for p, pt := range n.owned {
		pt.ready = false
		ps = append(ps, p)
	}
	n.mu.Unlock()
	for _, p := range ps {
		n.release(lctx, p)
	}
	n.mu.Lock()
	n.validUntil = time.Time{}
	n.mu.Unlock()
	_ = n.members.Delete(lctx, n.opts.NodeID)
}

func newIncarnation() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (n *Node) self() string { return n.opts.NodeID + "/" + n.inc }

func (n *Node) every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *Node) tick() time.Duration { return max(n.ttl/6, 50*time.Millisecond) }

// heartbeatLoop refreshes the membership key with compare-and-set; it is the fence.
func (n *Node) heartbeatLoop(ctx context.Context) {
	var rev uint64
	warned := false
	n.every(ctx, n.tick(), func() {
		if n.leaving.Load() {
			return
		}
		sent := time.Now()
		info := n.info()
		val, _ := json.Marshal(info)
		hctx, cancel := context.WithTimeout(ctx, n.ttl/3)
		defer cancel()
		var err error
		if rev == 0 {
			rev, err = n.members.Create(hctx, n.opts.NodeID, val)
			if errors.Is(err, jetstream.ErrKeyExists) {
				if !warned {
					n.log.Warn("node id in use: waiting for its membership to expire (another process with this --node-id, or this node before a crash)", "ttl", n.ttl)
					warned = true
				}
				return
			}
		} else {
			var nrev uint64
			nrev, err = n.members.Update(hctx, n.opts.NodeID, val, rev)
			if err == nil {
				rev = nrev
			} else if r, ok := n.ownLatest(ctx, info.Incarnation, err); ok {
				// An earlier refresh reached the server after its caller gave up on it (a
				// loaded machine): the key is still this incarnation's. Carry on from its
				// revision; the fence moves only with a refresh answered in time.
				rev = r
				return
			} else if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) {
				// Our key expired (we were paused or cut off): others may own our partitions.
				n.log.Warn("membership lost; rejoining as a new incarnation", "error", err)
				n.expelled()
				rev = 0
				return
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn("heartbeat failed; fetching stops when the membership lease runs out, and resumes when NATS answers", "error", jsError("heartbeat", err))
			}
			return
		}
		warned = false
		n.mu.Lock()
		if until := sent.Add(n.ttl / 2); until.After(n.validUntil) {
			n.validUntil = until
		}
		n.mu.Unlock()
	})
}

// ownLatest says, after a refresh refused for a revision mismatch, whether the membership
// key still holds this incarnation (an earlier refresh that timed out here had landed), and
// its revision.
func (n *Node) ownLatest(ctx context.Context, inc string, err error) (uint64, bool) {
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return 0, false
	}
	gctx, cancel := context.WithTimeout(ctx, n.ttl/3)
	defer cancel()
	e, gerr := n.members.Get(gctx, n.opts.NodeID)
	if gerr != nil {
		return 0, false
	}
	var cur MemberInfo
	if json.Unmarshal(e.Value(), &cur) != nil || cur.Incarnation != inc {
		return 0, false
	}
	return e.Revision(), true
}

// expelled drops every partition: another node may already crawl them.
func (n *Node) expelled() {
	n.mu.Lock()
	n.validUntil = time.Time{}
	old := n.owned
	n.owned = map[int]*part{}
	for _, pt := range old {
		pt.lost, pt.ready = true, false
	}
	n.inc = newIncarnation()
	n.mu.Unlock()
	for _, pt := range old {
		pt.stop()
	}
	go n.forget(old)
}

func (n *Node) info() MemberInfo {
	// The order of the reads makes the report idle only if the node was, however the work
	// moves meanwhile (termination detection trusts it): busy before the partitions (a
	// rebuild queues its URLs, then marks the partition ready, then stops being busy), the
	// partitions before the queues, and the outbox both before the queues (a local link
	// is queued before its record is deleted) and after them (a page's records are put
	// before its lease ends).
	busy := n.moving.Load() > 0 || n.holds.Load() > 0
	n.mu.Lock()
	var ready []int
	for p, pt := range n.owned {
		if pt.ready {
			ready = append(ready, p)
		}
	}
	inc := n.inc
	n.mu.Unlock()
	sort.Ints(ready)
	before := n.outCount.Load()
	st := n.fr.Stats()
	pages, errs := n.crawler.Counts()
	outbox := n.outCount.Load()
	return MemberInfo{Node: n.opts.NodeID, Incarnation: inc, Started: time.Now(), Partitions: ready,
		Queued: st.Queued, InFlight: st.InFlight, Outbox: outbox, Pages: pages, Errors: errs, PagesPerSec: n.rate.perSecond(time.Now()),
		Admitted: n.admitted.Load(), Published: n.published.Load(), FailOvers: n.failOvers.Load(), Busy: busy, Ranks: n.rankStore != nil,
		Idle: n.started.Load() && st.Queued == 0 && st.InFlight == 0 && before == 0 && outbox == 0 && !busy}
}

// Hold keeps the node busy (not idle, so the cluster does not end) until release is
// called: for work that is about to queue pages, such as purging a quarantined worker's.
func (n *Node) Hold() (release func()) {
	n.holds.Add(1)
	var once sync.Once
	return func() { once.Do(func() { n.holds.Add(-1) }) }
}

// watchMembers keeps the view of members up to date.
func (n *Node) watchMembers(ctx context.Context) {
	n.watch(ctx, n.members, func(e jetstream.KeyValueEntry) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if e.Operation() != jetstream.KeyValuePut {
			delete(n.memberView, e.Key())
			return
		}
		var info MemberInfo
		if json.Unmarshal(e.Value(), &info) == nil {
			n.memberView[e.Key()] = memberSeen{info: info, rev: e.Revision(), at: time.Now()}
		}
	})
}

// watchParts keeps the view of partition owners up to date.
func (n *Node) watchParts(ctx context.Context) {
	n.watch(ctx, n.parts, func(e jetstream.KeyValueEntry) {
		k := e.Key()
		if !strings.HasPrefix(k, "p") {
			return
		}
		p, err := strconv.Atoi(k[1:])
		if err != nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if e.Operation() != jetstream.KeyValuePut {
			delete(n.partView, p)
			return
		}
		n.partView[p] = partEntry{owner: string(e.Value()), rev: e.Revision()}
	})
}

// watch runs f on every update of kv, rewatching after errors (a NATS restart).
func (n *Node) watch(ctx context.Context, kv jetstream.KeyValue, f func(jetstream.KeyValueEntry)) {
	for ctx.Err() == nil {
		w, err := kv.WatchAll(ctx)
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		for e := range w.Updates() {
			if e != nil {
				f(e)
			}
		}
		_ = w.Stop()
		sleep(ctx, n.tick())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// live lists the members seen within the TTL, by their last heartbeat's arrival here.
func (n *Node) live() map[string]MemberInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]MemberInfo{}
	for id, m := range n.memberView {
		if time.Since(m.at) < n.ttl {
			out[id] = m.info
		}
	}
	return out
}

// claimLoop takes the partitions this node should own and hands over those it should not.
func (n *Node) claimLoop(ctx context.Context) {
	n.every(ctx, n.tick(), func() { n.claim(ctx) })
}

func (n *Node) claim(ctx context.Context) {
	if n.leaving.Load() {
		return
	}
	n.mu.Lock()
	valid := time.Now().Before(n.validUntil)
	self := n.self()
	n.mu.Unlock()
	if !valid {
		return
	}
	live := n.live()
	live[n.opts.NodeID] = MemberInfo{Node: n.opts.NodeID, Incarnation: n.inc}
	ids := make([]string, 0, len(live))
	for id := range live {
		ids = append(ids, id)
	}
	dead := map[string]bool{} // owner "node/inc" -> dead, asked once per round
	for p := 0; p < n.nparts; p++ {
		if ctx.Err() != nil {
			return
		}
		want := Owner(p, ids) == n.opts.NodeID
		n.mu.Lock()
		e, known := n.partView[p]
		pt := n.owned[p]
		// The membership may have ended during the round (a lost heartbeat): claims made
		// in the name of the old incarnation must stop there.
		current := n.self() == self && time.Now().Before(n.validUntil)
		n.mu.Unlock()
		if !current {
			return
		}
		mine := known && e.owner == self
		switch {
		case mine && !want:
			if pt != nil && !pt.leaving && pt.ready {
				n.mu.Lock()
				pt.leaving = true
				n.mu.Unlock()
				go n.release(ctx, p)
			}
		case mine && pt == nil:
			n.take(ctx, p, self) // ours by a claim whose answer was lost
		case !mine && want && pt == nil:
			var err error
			var rev uint64
			failOver := false
			switch {
			case !known:
				rev, err = n.parts.Create(ctx, partKey(p), []byte(self))
			case e.owner == "":
				rev, err = n.parts.Update(ctx, partKey(p), []byte(self), e.rev)
			default:
				d, asked := dead[e.owner]
				if !asked {
					d = n.ownerDead(ctx, e.owner)
					dead[e.owner] = d
				}
				if !d {
					continue // its owner hands it over when it sees this node
				}
				failOver = true
				rev, err = n.parts.Update(ctx, partKey(p), []byte(self), e.rev)
			}
			if err != nil {
				continue // someone else claimed it first, or NATS is away: next round
			}
			if failOver {
				n.failOvers.Add(1)
				n.log.Info("took over a partition whose owner left without handing it over", "partition", p, "from", e.owner)
			}
			n.mu.Lock()
			if cur := n.partView[p]; cur.rev < rev {
				n.partView[p] = partEntry{owner: self, rev: rev}
			}
			n.mu.Unlock()
			n.take(ctx, p, self)
		}
	}
}

// ownerDead asks the server whether the membership behind owner ("node/inc") is gone.
func (n *Node) ownerDead(ctx context.Context, owner string) bool {
	node, inc, _ := strings.Cut(owner, "/")
	e, err := n.members.Get(ctx, node)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return true
	}
	if err != nil {
		return false
	}
	var info MemberInfo
	if json.Unmarshal(e.Value(), &info) != nil {
		return false
	}
	return info.Incarnation != inc
}

// take starts serving partition p: rebuild its queues from the state stream, then admit
// the URLs routed to it.
func (n *Node) take(ctx context.Context, p int, owner string) {
	pctx, stop := context.WithCancel(ctx)
	pt := &part{stop: stop, stopped: make(chan struct{}), owner: owner}
	n.mu.Lock()
	if n.owned[p] != nil || n.self() != owner {
		n.mu.Unlock()
		stop()
		return
	}
	n.owned[p] = pt
	n.runCtx = ctx // the followers of the partitions it fetches in live as long (fetchedIn)
	n.mu.Unlock()
	n.moving.Add(1)
	n.tenures.Add(1)
	go func() {
		defer n.tenures.Done()
		defer close(pt.stopped)
		started := time.Now()
		for {
			err := n.openEpoch(pctx, p, pt)
			if err == nil {
				err = n.rebuild(pctx, p)
			}
			if err == nil {
				break
			}
			if pctx.Err() != nil {
				n.moving.Add(-1)
				return
			}
			n.log.Warn("rebuilding a partition failed; retrying", "partition", p, "error", err)
			sleep(pctx, n.tick())
		}
		n.mu.Lock()
		pt.ready = true
		n.mu.Unlock()
		n.moving.Add(-1)
		n.log.Debug("partition ready", "partition", p, "rebuild", time.Since(started))
		n.consume(pctx, p, pt)
	}()
}

// openEpoch starts the tenure pt on p in the state stream: a message on p's epoch subject,
// published only if no other came after the last one this node read, so that of two nodes
// that both believe they took p, one fails. Every state this tenure writes expects that
// message to still be the last on the subject: once another node opened a later epoch,
// JetStream refuses what this node still sends about p (a node that was paused, or whose
// relay lags), so only the current owner's record counts. The rebuild reads the record
// after the epoch opened, so nothing the previous owner writes later can be missing from it.
func (n *Node) openEpoch(ctx context.Context, p int, pt *part) error {
	subj := n.names.epoch(p)
	var last uint64
	m, err := n.state.GetLastMsgForSubject(ctx, subj)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
	case err != nil:
		return jsError("read the epoch of partition "+strconv.Itoa(p), err)
	default:
		last = m.Sequence
	}
	// The claim must still hold, as the server sees it: this incarnation's membership is
	// fresh and the partition table names it. A tenure claimed by an incarnation that
	// ended meanwhile must not open an epoch: it would fence the partition's real owner.
	n.mu.Lock()
	valid := time.Now().Before(n.validUntil) && n.self() == pt.owner
	n.mu.Unlock()
	if !valid {
		n.abandon(p, pt)
		return errNotServing
	}
	if e, err := n.parts.Get(ctx, partKey(p)); err != nil || string(e.Value()) != pt.owner {
		if err == nil || errors.Is(err, jetstream.ErrKeyNotFound) {
			n.abandon(p, pt)
			return errNotServing
		}
		return jsError("read the owner of partition "+strconv.Itoa(p), err)
	}
	ack, err := n.js.Publish(ctx, subj, []byte(pt.owner), jetstream.WithExpectLastSequencePerSubject(last))
	if err != nil {
		return jsError("open an epoch on partition "+strconv.Itoa(p), err)
	}
	n.mu.Lock()
	pt.epoch = ack.Sequence
	n.mu.Unlock()
	return nil
}

// abandon ends a tenure that never opened its epoch: its claim no longer holds.
func (n *Node) abandon(p int, pt *part) {
	n.mu.Lock()
	pt.lost = true
	if n.owned[p] == pt {
		delete(n.owned, p)
	}
	n.mu.Unlock()
	pt.stop()
}

// fencedOut says JetStream refused a state write because another node opened a later epoch
// on its partition (or, for an epoch, because one was opened since it was read).
func fencedOut(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// lose ends the tenure pt on p without a hand-over: another node opened a later epoch
// there, so this node's view of p is no longer the record. It takes p again (a new epoch
// and a rebuild) if the partition table still says p is its own.
func (n *Node) lose(p int, pt *part) {
	n.mu.Lock()
	if pt.lost {
		n.mu.Unlock()
		return
	}
	pt.lost, pt.ready = true, false
	if n.owned[p] == pt {
		delete(n.owned, p)
	}
	n.mu.Unlock()
	n.log.Warn("another node opened a later epoch on a partition this node served; forgetting its queues", "partition", p)
	pt.stop()
	go n.forget(map[int]*part{p: pt})
}

// forget purges the local queues of tenures that ended without a hand-over (lost or
// expelled), once their consumers stopped and their leases ended; a partition taken again
// meanwhile is left to its own rebuild.
func (n *Node) forget(old map[int]*part) {
	for _, pt := range old {
		<-pt.stopped
	}
	for {
		n.rebuildMu.Lock()
		n.mu.Lock()
		gone := map[int]bool{}
		for p := range old {
			if n.owned[p] == nil {
				gone[p] = true
			}
		}
		n.mu.Unlock()
		_, busy, err := n.fr.Purge(func(h string) bool { return gone[n.partitionOf(h)] })
		n.rebuildMu.Unlock()
		if err != nil || busy == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rebuild replaces what the local frontier holds for p with the state stream's record.
func (n *Node) rebuild(ctx context.Context, p int) error {
	n.rebuildMu.Lock() // not while forget purges: it would drop what this restores
	defer n.rebuildMu.Unlock()
	match := func(h string) bool { return n.partitionOf(h) == p }
	for {
		_, busy, err := n.fr.Purge(match)
		if err != nil {
			return err
		}
		if busy == 0 {
			break
		}
		sleep(ctx, 20*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	pre := n.names.prefix()
	ps := strconv.Itoa(p)
	cons, err := n.state.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubjects: []string{pre + "url." + ps + ".>", pre + "rest." + ps + ".>"},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy, AckPolicy: jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute, MemoryStorage: true,
	})
	if err != nil {
		return jsError("read partition state", err)
	}
	defer func() { _ = n.state.DeleteConsumer(context.WithoutCancel(ctx), cons.CachedInfo().Name) }()
	// Read until the server says nothing is left (each message carries how many follow):
	// a count taken up front would stop short if messages arrived meanwhile.
	pending := cons.CachedInfo().NumPending
	var items []frontier.Item
	var seen [][16]byte
	rests := map[string]time.Time{}
	flush := func() error {
		err := n.fr.Restore(items, seen, rests)
		items, seen, rests = items[:0], seen[:0], map[string]time.Time{}
		return err
	}
	for pending > 0 {
		// Ask for exactly what is left: Fetch waits for its whole batch (or the timeout).
		batch, err := cons.Fetch(int(min(pending, 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return jsError("read partition state", err)
		}
		nb := 0
		for m := range batch.Messages() {
			nb++
			if meta, err := m.Metadata(); err == nil {
				pending = meta.NumPending
			} else if pending > 0 {
				pending--
			}
			if strings.HasPrefix(m.Subject(), pre+"rest.") {
				var r restMsg
				if json.Unmarshal(m.Data(), &r) == nil && r.Host != "" {
					rests[r.Host] = r.Until
				}
				continue
			}
			w, err := decodeItem(m.Data())
			if errors.Is(err, errNewerWire) {
				// Refuse rather than rebuild the partition without it (a URL lost): the
				// tenure retries, and this node must be upgraded.
				return fmt.Errorf("URL state %s: %w", m.Subject(), err)
			}
			if err != nil {
				n.log.Warn("skipping a malformed URL state", "subject", m.Subject(), "error", err)
				continue
			}
			if w.Done && len(w.Key) == 16 { // the key is all a done URL's record holds
				seen = append(seen, [16]byte(w.Key))
				continue
			}
			it, err := w.item()
			if err != nil {
				continue
			}
			items = append(items, it)
		}
		if err := batch.Error(); err != nil {
			return jsError("read partition state", err)
		}
		if nb == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if len(items)+len(seen) >= 4096 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// consume admits the URLs routed to p until ctx ends.
func (n *Node) consume(ctx context.Context, p int, pt *part) {
	for ctx.Err() == nil {
		if err := n.consumeOnce(ctx, p, pt); errors.Is(err, errNotServing) {
			sleep(ctx, n.tick())
		} else if err != nil && ctx.Err() == nil {
			n.log.Warn("reading routed URLs failed; retrying", "partition", p, "error", err)
			sleep(ctx, n.tick())
		}
	}
}

func (n *Node) consumeOnce(ctx context.Context, p int, pt *part) error {
	cons, err := n.links.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "part-" + strconv.Itoa(p), FilterSubject: n.names.links(p),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: linksAckWait, MaxAckPending: 4096,
	})
	if err != nil {
		return jsError("open routed URLs", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return jsError("read routed URLs", err)
	}
	defer it.Stop()
	stopIt := context.AfterFunc(ctx, it.Stop)
	defer stopIt()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return err
		}
		batch := []jetstream.Msg{m}
		for len(batch) < 512 {
			m, err := it.Next(jetstream.NextMaxWait(2 * time.Millisecond))
			if err != nil {
				break
			}
			batch = append(batch, m)
		}
		if err := n.admit(ctx, p, pt, batch); err != nil {
			return err
		}
	}
}

// linksAckWait is how long the server waits for a routed URL's acknowledgement before it
// delivers the URL again. It is what a cluster idles after a NATS restart, when URLs
// delivered just before it were never acknowledged (10 s made TestClusterNATSRestart idle
// that long); an admission that lasts longer says it is in progress (admit).
const linksAckWait = 3 * time.Second

// admit records the unseen URLs of batch in the state stream, then in the frontier, then
// acknowledges the messages: a crash anywhere redelivers them, and admission is idempotent.
func (n *Node) admit(ctx context.Context, p int, pt *part, batch []jetstream.Msg) error {
	// A slow admission (a loaded machine, a server slow to store) keeps its messages: the
	// server would deliver them again after linksAckWait, to be admitted twice.
	progress := make(chan struct{})
	defer close(progress)
	go func() {
		t := time.NewTicker(linksAckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-progress:
				return
			case <-t.C:
				for _, m := range batch {
					_ = m.InProgress()
				}
			}
		}
	}()
	items := make([]frontier.Item, 0, len(batch))
	var again []frontier.Item // to fetch again although seen (Node.Refetch)
	var newer []jetstream.Msg // in a wire format this node cannot read: left for an upgrade
	for _, m := range batch {
		w, err := decodeItem(m.Data())
		if errors.Is(err, errNewerWire) {
			newer = append(newer, m)
			continue
		}
		if err == nil {
			var it frontier.Item
			if it, err = w.item(); err == nil && n.partitionOf(it.Host) == p {
				if w.Refetch {
					again = append(again, it)
				} else {
					items = append(items, it)
				}
				continue
			}
		}
		n.log.Warn("dropping a malformed routed URL", "subject", m.Subject(), "error", err)
	}
	if !n.serving(pt) {
		return errNotServing
	}
	fresh, check, err := n.fr.Unseen(items)
	if err != nil {
		return err
	}
	futures := make([]jetstream.PubAckFuture, 0, len(fresh)+len(again))
	epoch := jetstream.WithExpectLastSequenceForSubject(pt.epoch, n.names.epoch(p))
	for _, it := range slices.Concat(fresh, again) {
		f, err := n.js.PublishAsync(n.names.urlState(p, it.Key), encodeItem(toWire(it)), epoch)
		if err != nil {
			return jsError("record admitted URL", err)
		}
		futures = append(futures, f)
	}
	if err := waitAcks(ctx, futures); fencedOut(err) {
		n.lose(p, pt)
		return errNotServing
	} else if err != nil {
		return jsError("record admitted URL", err)
	}
	if ctx.Err() != nil || !n.serving(pt) {
		return errNotServing // the partition moved: not acknowledged, the next owner admits them
	}
	// Unsynced: the state stream holds these URLs already, and a node rebuilds its
	// queues from it when it takes a partition, also after a crash (Attach purges). Each
	// call below commits a batch and wakes the crawler's workers, and Restore syncs the
	// WAL too: none is made for nothing (most batches hold no refetch, many no new URL).
	if len(fresh) > 0 {
		if _, err := n.fr.AddUnseen(fresh, check); err != nil {
			return err
		}
	}
	if len(again) > 0 {
		if err := n.fr.Restore(again, nil, nil); err != nil {
			return err
		}
	}
	n.admitted.Add(int64(len(fresh) + len(again)))
	if len(newer) > 0 {
		// Not dropped: JetStream delivers them again, to this node once it is upgraded or to
		// the partition's next owner. Meanwhile the cluster does not end (the links stream
		// is not empty).
		n.log.Error("routed URLs written by a newer sonda: left in JetStream, retried every minute; upgrade this node",
			"partition", p, "messages", len(newer), "subject", newer[0].Subject())
	}
	for _, m := range batch {
		if slices.Contains(newer, m) {
			_ = m.NakWithDelay(time.Minute)
			continue
		}
		_ = m.Ack()
	}
	return nil
}

var errNotServing = errors.New("cluster: this node no longer serves the partition")

// serving says whether the tenure pt is current and rebuilt, and the membership fresh.
func (n *Node) serving(pt *part) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return pt.ready && !pt.lost && time.Now().Before(n.validUntil)
}

func waitAcks(ctx context.Context, fs []jetstream.PubAckFuture) error {
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for _, f := range fs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return context.DeadlineExceeded
		}
	}
	return nil
}

// release hands p over: stop fetching from it, let requests in flight end, drain the
// outbox (so its state is complete), forget its queues and free it for the next owner.
func (n *Node) release(ctx context.Context, p int) {
	n.mu.Lock()
	pt := n.owned[p]
	if pt == nil {
		n.mu.Unlock()
		return
	}
	pt.ready, pt.leaving = false, true
	n.mu.Unlock()
	n.moving.Add(1)
	defer n.moving.Add(-1)
	pt.stop()
	<-pt.stopped
	match := func(h string) bool { return n.partitionOf(h) == p }
	for ctx.Err() == nil {
		n.mu.Lock()
		busy := pt.inflight > 0
		n.mu.Unlock()
		if !busy {
			break
		}
		sleep(ctx, 20*time.Millisecond)
	}
	// The hosts' rest times go with them: a completed page sent its host's rest already,
	// but a robots.txt request or a lease handed back only set it in the local frontier,
	// and the next owner must not ask such a host again before it is over.
	n.mu.Lock()
	f := fence{part: p, epoch: pt.epoch}
	n.mu.Unlock()
	if err := n.routeRests(n.fr.Rests(match), f); err != nil {
		n.log.Warn("recording the rest times of a handed-over partition failed", "partition", p, "error", err)
	}
	for ctx.Err() == nil && n.outCount.Load() > 0 {
		n.kick()
		sleep(ctx, 20*time.Millisecond)
	}
	// A host may still have a URL out of the frontier that never entered the gate (a
	// worker between its lease and Enter, or waiting in Enter): Purge leaves such a host
	// alone, and it must not stay queued here, where no one will ever fetch it.
	for {
		_, busy, err := n.fr.Purge(match)
		if err != nil {
			n.log.Warn("forgetting a handed-over partition failed", "partition", p, "error", err)
			break
		}
		if busy == 0 || ctx.Err() != nil {
			break
		}
		sleep(ctx, 20*time.Millisecond)
	}
	n.mu.Lock()
	e := n.partView[p]
	self := n.self()
	n.mu.Unlock()
	if e.owner == self {
		rev, err := n.parts.Update(context.WithoutCancel(ctx), partKey(p), nil, e.rev)
		if err != nil {
			n.log.Debug("freeing a partition failed (its next owner takes it when this node's membership ends)", "partition", p, "error", err)
		} else {
			n.mu.Lock()
			if cur := n.partView[p]; cur.rev < rev {
				n.partView[p] = partEntry{rev: rev}
			}
			n.mu.Unlock()
		}
	}
	n.mu.Lock()
	if n.owned[p] == pt {
		delete(n.owned, p)
	}
	n.mu.Unlock()
}

// relayLoop publishes the outbox to JetStream and deletes what the server acknowledged.
// relayEvery is how often the relay reads the outbox when nothing wakes it sooner (a lease
// waiting for it, seeds, a hand-over's rests): what a page found waits at most that long
// to be sent to its owners.
const relayEvery = 100 * time.Millisecond

func (n *Node) relayLoop(ctx context.Context) {
	t := time.NewTicker(relayEvery)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			sent, err := n.relayOnce(ctx)
			if err != nil {
				n.log.Warn("relaying links to their owners failed; they stay in the outbox and are retried", "error", err)
				sleep(ctx, n.tick())
				break
			}
			if sent < relayBatch {
				// It read all there was (or stopped at a record to retry later): what is
				// committed after the read kicks the relay again.
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.wakeRelay:
		}
	}
}

// relayFullScan is how often the relay reads the outbox from its start rather than from
// relayFrom: a safety net for a record committed below relayFrom by a writer the outbox
// does not track. Reading from the start steps over every record deleted since the last
// memtable flush, which is what made the relay the largest CPU cost of a node.
const relayFullScan = 2 * time.Second

// relayBatch is the most records the relay publishes before it waits for their acks.
const relayBatch = 2048

func (n *Node) relayOnce(ctx context.Context) (int, error) {
	if n.outCount.Load() <= 0 {
		// Nothing to publish: every writer counts its records (Route and Journal before
		// their batch commits, the others before they wake the relay), and the count
		// drops only when the relay settles them. An idle node's relay read the outbox
		// every round, a third of its CPU (9 ms a second per node).
		return 0, nil
	}
	n.outboxReads.Add(1)
	n.outMu.Lock()
	low, open := n.out.low(), len(n.out.open)
	n.outMu.Unlock()
	from := n.relayFrom
	full := time.Since(n.lastFullScan) >= relayFullScan
	if full {
		from = 0
		n.lastFullScan = time.Now()
	}
	it, err := n.db.NewIter(&pebble.IterOptions{LowerBound: outboxKey(from), UpperBound: store.PrefixEnd(prefixOutbox)})
	if err != nil {
		return 0, err
	}
	var msgs []outMsg
	more := false
	for it.First(); it.Valid(); it.Next() {
		if len(msgs) == relayBatch {
			more = true
			break
		}
		m, err := n.out.decode(it.Key(), it.Value())
		if err != nil {
			n.log.Warn("dropping a corrupt outbox record", "error", err)
			m = outMsg{key: append([]byte(nil), it.Key()...)}
			if len(m.key) == len(prefixOutbox)+8 {
				m.seq = binary.BigEndian.Uint64(m.key[len(prefixOutbox):])
			}
		}
		msgs = append(msgs, m)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		n.relayFrom = max(from, low)
		if !full && open == 0 && n.outCount.Load() > 0 && time.Since(n.lastFullScan) >= relayFullScan/8 {
			// Records are counted that no open batch explains and this read did not find:
			// read from the start next time rather than in relayFullScan.
			n.lastFullScan = time.Time{}
		}
		return 0, nil
	}
	local, check, err := n.localLinks(msgs)
	if err != nil {
		return 0, err
	}
	// Publish, then settle in order: a record is done once JetStream stored it, or refused
	// it as a state of a partition whose owner changed since it was written (fenced:
	// stale, dropped). The first other failure keeps that record and all after it for the
	// next round (those already stored are then duplicates, dropped by id).
	//
	// The links go first, and a URL's state only once every link before it is stored: a
	// page's state says it need not be fetched again, so it must never be recorded while
	// what the page found is still only here. The links and state streams store
	// independently (a server shutting down may keep one message and lose the other), and
	// a node cut off or killed now would otherwise leave the cluster done without them:
	// its hosts' next owner rebuilds from the state stream and does not fetch the page again.
	futures := make([]jetstream.PubAckFuture, len(msgs))
	publish := func(i int) error {
		m := msgs[i]
		if m.subject == "" {
			return nil
		}
		msg := &nats.Msg{Subject: m.subject, Data: m.payload}
		opts := []jetstream.PublishOpt{jetstream.WithMsgID(m.id)}
		switch l := local[i]; {
		case l.pt != nil && !l.fresh:
			return nil // admitted already: nothing to send
		case l.pt != nil:
			// The URL's state, as the consumer's admission records it, under the tenure.
			msg.Subject = n.names.urlState(l.fence.part, l.it.Key)
			opts = append(opts, jetstream.WithExpectLastSequenceForSubject(l.fence.epoch, n.names.epoch(l.fence.part)))
		case m.kind == kindState:
			opts = append(opts, jetstream.WithExpectLastSequenceForSubject(m.fence.epoch, n.names.epoch(m.fence.part)))
		}
		f, err := n.js.PublishMsgAsync(msg, opts...)
		futures[i] = f
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	acked := make([]bool, len(msgs)) // await's answers: a future answers once
	errs := make([]error, len(msgs))
	await := func(i int) error {
		if acked[i] || errs[i] != nil {
			return errs[i]
		}
		select {
		case <-futures[i].Ok():
			acked[i] = true
		case errs[i] = <-futures[i].Err():
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return context.DeadlineExceeded
		}
		return errs[i]
	}
	for i, m := range msgs {
		if m.kind != kindState {
			if err := publish(i); err != nil {
				return 0, err
			}
		}
	}
	upto := len(msgs) // states are published below the first link that failed
	for i, m := range msgs {
		if m.kind != kindState && futures[i] != nil && await(i) != nil {
			upto = i
			break
		}
	}
	for i, m := range msgs[:upto] {
		if m.kind == kindState {
			if err := publish(i); err != nil {
				return 0, err
			}
		}
	}
	urlStates := n.names.prefix() + "url."
	settled, confirmed, published := 0, int64(0), int64(0)
	var failed error
settle:
	for i, m := range msgs {
		if f := futures[i]; f != nil {
			if err := await(i); err == nil {
				published++
				if !m.written.IsZero() {
					n.metrics.routingLag.Observe(time.Since(m.written).Seconds())
				}
				if m.kind == kindLink && local[i].pt == nil {
					if w, err := decodeItem(m.payload); err == nil && len(w.Key) == 16 {
						n.sent.Add([16]byte(w.Key))
					}
				}
			} else {
				if l := local[i]; l.pt != nil && fencedOut(err) {
					// The partition moved: next round the link goes to its new owner.
					n.fenced(l.fence)
					n.kick()
					break settle
				}
				if m.kind != kindState || !fencedOut(err) {
					failed = err
					break settle
				}
				n.fenced(m.fence)
			}
		}
		if m.kind == kindState && strings.HasPrefix(m.subject, urlStates) {
			confirmed++
		}
		settled++
	}
	// The local links JetStream recorded join the frontier before their outbox records go
	// (a crash in between publishes them again: duplicates, admitted once).
	if err := n.admitLocal(local[:settled], check); err != nil {
		return 0, err
	}
	if settled > 0 {
		b := n.db.NewBatch()
		defer b.Close()
		for _, m := range msgs[:settled] {
			_ = b.Delete(m.key, nil)
		}
		n.outMu.Lock()
		err := n.out.saveSeq(b)
		n.outMu.Unlock()
		if err != nil {
			return 0, err
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return 0, err
		}
		n.published.Add(published)
		n.outCount.Add(-int64(settled))
	}
	// Next time, start at the first record left unpublished, or the first one after
	// those read, but never above a record that may still be committed.
	switch {
	case settled < len(msgs):
		n.relayFrom = min(low, msgs[settled].seq)
	case more:
		n.relayFrom = min(low, msgs[len(msgs)-1].seq+1)
	default:
		n.relayFrom = max(from, low)
	}
	if confirmed > 0 {
		n.unacked.Add(-confirmed)
		n.mu.Lock()
		n.signalLocked()
		n.mu.Unlock()
	}
	return settled, failed
}

// localLink is an outbox link for a partition this node serves: the relay admits it here
// rather than through the links stream, its delivery and its ack.
type localLink struct {
	pt    *part // nil: not local
	fence fence // the tenure's
	it    frontier.Item
	fresh bool // not seen here yet: its state is recorded, then it is admitted
}

// localLinks finds, among msgs, the links for partitions this node serves now, and which
// of them are new here (as of the check it returns, for admitLocal).
func (n *Node) localLinks(msgs []outMsg) ([]localLink, frontier.SeenCheck, error) {
	local := make([]localLink, len(msgs))
	for i, m := range msgs {
		if m.kind != kindLink || m.subject == "" {
			continue
		}
		w, err := decodeItem(m.payload)
		if err != nil {
			continue // the links stream's consumer drops it with a warning
		}
		if w.Refetch {
			continue // seen here: the consumer's admission queues it again (rare: sent)
		}
		it, err := w.item()
		if err != nil {
			continue
		}
		local[i].it = it
	}
	var cand []frontier.Item
	n.mu.Lock()
	valid := time.Now().Before(n.validUntil)
	for i := range local {
		l := &local[i]
		if !valid || l.it.URL == "" {
			continue
		}
		p := n.partitionOf(l.it.Host)
		if pt := n.owned[p]; pt != nil && pt.ready && !pt.lost {
			l.pt, l.fence = pt, fence{part: p, epoch: pt.epoch}
			cand = append(cand, l.it)
		}
	}
	n.mu.Unlock()
	if len(cand) == 0 {
		return local, frontier.SeenCheck{}, nil
	}
	fresh, check, err := n.fr.Unseen(cand) // each URL once
	if err != nil {
		return nil, check, err
	}
	first := make(map[[16]byte]bool, len(fresh))
	for _, it := range fresh {
		first[it.Key] = true
	}
	for i := range local {
		if l := &local[i]; l.pt != nil && first[l.it.Key] {
			l.fresh = true
			delete(first, l.it.Key)
		}
	}
	return local, check, nil
}

// admitLocal adds to the frontier the fresh local links whose state JetStream recorded,
// for the tenures this node still holds (a partition that moved meanwhile is rebuilt by
// its next owner from the state stream, which has them). A tenure whose membership merely
// went stale (heartbeats failing while NATS restarts) still holds: the links are its own,
// and nobody else would queue them, since their outbox records are deleted next. check is
// localLinks': the seen set is not read again for links it found new.
func (n *Node) admitLocal(local []localLink, check frontier.SeenCheck) error {
	type tenure struct {
		pt *part
		p  int
	}
	var by map[tenure][]frontier.Item
	for _, l := range local {
		if l.pt != nil && l.fresh {
			if by == nil {
				by = map[tenure][]frontier.Item{}
			}
			k := tenure{l.pt, l.fence.part}
			by[k] = append(by[k], l.it)
		}
	}
	for t, items := range by {
		n.mu.Lock()
		held := !t.pt.lost && n.owned[t.p] == t.pt
		n.mu.Unlock()
		if !held {
			continue
		}
		if _, err := n.fr.AddUnseen(items, check); err != nil {
			return err
		}
		n.admitted.Add(int64(len(items)))
	}
	return nil
}

// fenced handles a state record JetStream refused: another node opened a later epoch on
// its partition. If the record belongs to the tenure this node still serves there, that
// tenure is over.
func (n *Node) fenced(f fence) {
	n.stale.Add(1)
	n.mu.Lock()
	pt := n.owned[f.part]
	current := pt != nil && pt.epoch == f.epoch
	n.mu.Unlock()
	if current {
		n.lose(f.part, pt)
	}
}

// seedLoop gives the crawler seeds added on other nodes (its scope follows them): all of
// them once the watch has replayed the bucket, then each new one.
func (n *Node) seedLoop(ctx context.Context) {
	seeds := map[string]string{}
	apply := func() {
		all := make([]string, 0, len(seeds))
		for _, u := range seeds {
			all = append(all, u)
		}
		sort.Strings(all)
		if err := n.crawler.SetSeeds(all); err != nil {
			n.log.Warn("cluster seeds rejected", "error", err)
		}
	}
	for ctx.Err() == nil {
		w, err := n.seeds.WatchAll(ctx)
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		replayed := false
		for e := range w.Updates() {
			switch {
			case e == nil:
				replayed = true
				apply()
			case e.Operation() == jetstream.KeyValuePut && seeds[e.Key()] != string(e.Value()):
				seeds[e.Key()] = string(e.Value())
				if replayed {
					apply()
				}
			}
		}
		_ = w.Stop()
		sleep(ctx, n.tick())
	}
}

// doneLoop detects the end of the cluster's crawl (termination.step says when).
func (n *Node) doneLoop(ctx context.Context) {
	var d termination
	n.every(ctx, n.tick(), func() {
		r, ok := n.quiet(ctx)
		cur := &r
		if !ok {
			cur = nil
		}
		if d.step(cur) {
			n.log.Info("the whole cluster has no URL left", "members", len(r.revs), "activity", r.activity)
			n.doneOnce.Do(func() { close(n.doneCh) })
		}
	})
}

// quietRound is one look at a cluster where every live member said it is idle, every
// partition is served by one of them and no routed URL waits in JetStream.
type quietRound struct {
	revs     map[string]uint64 // each member's heartbeat revision
	incs     map[string]string // each member's incarnation
	activity int64             // the members' pages, admissions and publications, summed
	linksSeq uint64            // last sequence of the links stream (it held no message)
	stateSeq uint64            // last sequence of the state stream
	// membersSeq is the membership bucket's last revision, read after the streams: a
	// heartbeat stored later than it was stored after this look.
	membersSeq uint64
}

// same says nothing moved between two quiet rounds: the same members (and incarnations),
// the same activity, and no write to either stream (every admission, page outcome, host
// rest, routed URL and change of owner writes to one of them).
func (r *quietRound) same(o *quietRound) bool {
	if r.activity != o.activity || r.linksSeq != o.linksSeq || r.stateSeq != o.stateSeq || len(r.incs) != len(o.incs) {
		return false
	}
	for id, inc := range r.incs {
		if oinc, ok := o.incs[id]; !ok || oinc != inc {
			return false
		}
	}
	return true
}

// termination decides from successive quiet rounds that the cluster is done: nothing
// moved since a first look, and every member reported idle again in a heartbeat it
// computed after that look.
//
// A report stored after the look was not necessarily computed after it: a heartbeat
// computed before the look may reach the server, and this node, after it (a loaded
// machine, a NATS restart). Such a member may have admitted a URL between computing its
// report and the look (the look then sees the admission in the state stream already),
// and report idle twice. But a node's heartbeats are a chain of compare-and-set writes
// made one after the other, each computed once the previous one is known to be stored:
// so a report stored after another one that was stored after the look (revision above
// membersSeq) was computed after the look. That second report is what counts.
type termination struct {
	first *quietRound       // the look the others are compared with; nil: none yet
	fresh map[string]uint64 // per member, the revision of a report stored after first's look
}

// step takes the latest round (nil: the cluster is not quiet) and says whether the
// cluster is done.
func (d *termination) step(cur *quietRound) bool {
	if cur == nil {
		d.first = nil
		return false
	}
	if d.first == nil || !d.first.same(cur) {
		d.first, d.fresh = cur, map[string]uint64{}
		return false
	}
	done := true
	for id, rev := range cur.revs {
		switch f := d.fresh[id]; {
		case f == 0 && rev > d.first.membersSeq:
			d.fresh[id] = rev
			done = false
		case f == 0 || rev <= f:
			done = false
		}
	}
	return done
}

func (n *Node) quiet(ctx context.Context) (quietRound, bool) {
	n.mu.Lock()
	valid := time.Now().Before(n.validUntil)
	r := quietRound{revs: map[string]uint64{}, incs: map[string]string{}}
	served := map[int]bool{}
	for id, m := range n.memberView {
		if time.Since(m.at) >= n.ttl {
			continue
		}
		if !m.info.Idle {
			n.mu.Unlock()
			return r, false
		}
		r.revs[id], r.incs[id] = m.rev, m.info.Incarnation
		r.activity += m.info.Pages + m.info.Admitted + m.info.Published
		for _, p := range m.info.Partitions {
			served[p] = true
		}
	}
	n.mu.Unlock()
	if !valid || len(served) != n.nparts || r.revs[n.opts.NodeID] == 0 {
		return r, false
	}
	// The state stream first: a URL routed after this look shows in the links stream's
	// sequence, one admitted after it in the state stream's.
	sinfo, err := n.state.Info(ctx)
	if err != nil {
		return r, false
	}
	info, err := n.links.Info(ctx)
	if err != nil || info.State.Msgs != 0 {
		return r, false
	}
	minfo, err := n.membersStream.Info(ctx)
	if err != nil {
		return r, false
	}
	r.linksSeq, r.stateSeq, r.membersSeq = info.State.LastSeq, sinfo.State.LastSeq, minfo.State.LastSeq
	return r, true
}

// LiveMembers lists the ids of the nodes whose membership is live in cluster, sorted, as
// the server sees it (bucket sonda_<cluster>_members).
func LiveMembers(ctx context.Context, js jetstream.JetStream, cluster string) ([]string, error) {
	infos, err := Members(ctx, js, cluster)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(infos))
	for i, m := range infos {
		ids[i] = m.Node
	}
	return ids, nil
}

// Members returns the live members' last heartbeats, sorted by node id.
func Members(ctx context.Context, js jetstream.JetStream, cluster string) ([]MemberInfo, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	kv, err := js.KeyValue(ctx, names{cluster}.members())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, jsError("open the membership", err)
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, jsError("list members", err)
	}
	var out []MemberInfo
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var info MemberInfo
		if json.Unmarshal(e.Value(), &info) == nil {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// rateMeter measures pages per second over the last minute.
type rateMeter struct {
	mu    sync.Mutex
	times []time.Time
}

func (r *rateMeter) add(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, t)
	if len(r.times) > 4096 {
		r.times = r.times[len(r.times)-2048:]
	}
}

func (r *rateMeter) perSecond(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	const window = 10 * time.Second
	n := 0
	for i := len(r.times) - 1; i >= 0 && now.Sub(r.times[i]) < window; i-- {
		n++
	}
	return float64(n) / window.Seconds()
}
