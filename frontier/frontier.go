// Package frontier owns the crawl frontier: the on-disk queues of URLs waiting to be fetched,
// the seen set of every URL ever admitted, and the host scheduling that decides which URL is
// fetched next without breaking politeness.
//
// # Model
//
// URLs wait in per-host queues stored in Pebble (see keys.go). Each host has two queues: new
// URLs ordered by priority (a LinkScorer's score; FIFO among equals), and scheduled fetches
// (revisits from a RevisitPolicy, retries after errors) ordered by due time. Of a host's two
// queues, a due scheduled fetch goes first, but while both have work they take turns (see
// hostState.revisitFirst). A host is served by at most PerHost fetches at once and
// never before its politeness time (set by the crawler from robots.txt crawl-delay, its
// minimum delay and the host's response times). Among hosts that may be served, those with
// a due scheduled fetch go first on the same terms (see Frontier.pick); among hosts with only
// new URLs, the one whose best URL has the highest priority; and hosts of equal priority take
// turns in the order they became ready, so one big host cannot starve the others.
//
// # Memory
//
// Only hosts with queued or in-flight URLs are held in memory (about 200 bytes each plus the
// host name); queued URLs live on disk. Memory therefore grows with the number of active
// hosts, not with the number of queued URLs.
//
// # Durability and crash safety
//
// A leased URL stays in its queue until Complete deletes it, in the same Pebble batch that
// admits the URLs discovered on the page and (through the write callback) stores the page's
// record. If the process dies, everything committed survives (see package store for the
// sync policy) and the URLs that were in flight are simply leased again after restart: a
// crash loses no queued or discovered URL and refetches at most the pages that were in flight.
//
// # Distribution
//
// Every piece of state is keyed by host key, so hosts can be partitioned across crawler nodes:
// a node admits through Add only URLs of hosts it owns and forwards the rest.
package frontier

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

const (
	maxPriority = math.MaxFloat64
	minPriority = -math.MaxFloat64
)

// ErrDrained is returned by Next when no URL is queued and none is in flight: the crawl is
// complete.
var ErrDrained = errors.New("frontier: no URLs left")

// ErrParked is returned by Next, when Options.EndWhenParked is set, if nothing is in flight
// or ready and every host with queued URLs is parked (waiting for a retry) until at least
// EndWhenParked from now: the crawl can end, and Parked says who waits for what.
var ErrParked = errors.New("frontier: only hosts waiting for a retry are left")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("frontier: closed")

// Options configure a Frontier. The zero value is usable.
type Options struct {
	// PerHost is the most fetches one host may have in flight at once (default 1).
	PerHost int
	// MaxPerHost caps the URLs ever admitted for one host (0: no cap). URLs beyond it are
	// rejected by Add and Complete and reported in their Admission counts.
	MaxPerHost int64
	// Clock returns the current time (default time.Now); tests substitute a fake.
	Clock func() time.Time
	// SeenCache is how many recently seen URL keys are kept in memory to spare seen-set
	// reads (default 1<<18, about 20 MiB; negative disables it).
	SeenCache int
	// NoSync skips the write-ahead-log sync that Complete and Add wait for. Without it a
	// commit that returned may still sit in Pebble's log buffer and be lost with the process,
	// so a crash can make the crawler refetch more than the pages in flight. Benchmarks only.
	NoSync bool
	// Endless makes Next wait for URLs instead of returning ErrDrained when nothing is
	// queued or in flight: a cluster node's URLs arrive from its peers at any time.
	Endless bool
	// EndWhenParked, when positive, makes Next return ErrParked instead of waiting when the
	// only work left is retries (see Park and Outcome.Retry) due EndWhenParked or more from
	// now. Zero waits for them; an Endless frontier always waits.
	EndWhenParked time.Duration
	// RevisitShare is the share of leases that due scheduled fetches (revisits and retries)
	// get while never-fetched URLs wait too: of a host's leases, and of the hosts picked
	// when hosts with a due scheduled fetch and hosts with only new URLs are ready at once.
	// 0 means 0.5 (the two take turns); a negative share gives scheduled fetches only what
	// new URLs leave; 1 serves every due one first.
	RevisitShare float64
}

// Frontier is a persistent, polite URL frontier. It is safe for concurrent use.
type Frontier struct {
	db   *pebble.DB
	opts Options

	mu            sync.Mutex
	hosts         map[string]*hostState
	waiting       hostHeap // hosts with work they may not start yet, by byEligibility
	parkedWaiting int      // hosts in waiting that are parked (hostState.counted)
	ready         hostHeap // hosts that may be served now and have a due scheduled fetch, by byReadiness
	readyNew      hostHeap // hosts that may be served now, with new URLs only, by byReadiness
	turns         turns    // how ready and readyNew have shared pick's picks while both had hosts
	seq           uint64
	ticks         uint64 // ready-heap arrival counter: FIFO among hosts of equal priority
	seen          int64
	queued        int64
	queuedNew     int64 // of queued, URLs never fetched (the hosts' new-URL queues)
	leased        int
	changed       chan struct{} // closed and replaced whenever scheduling may have changed
	recent        *RecentKeys
	err           error // sticky: a failed commit leaves memory and disk out of step
	closed        bool
}

// Lease is a URL handed out by Next. The holder must end it with Complete or Release.
type Lease struct {
	Item  Item
	host  *hostState
	key   []byte
	queue byte
	done  bool
}

// Scheduled reports whether the lease came from the scheduled queue (a revisit or a retry).
func (l *Lease) Scheduled() bool { return l.queue == queueRevisit }

// Open loads the frontier stored in db.
func Open(db *pebble.DB, opts Options) (*Frontier, error) {
	if opts.PerHost <= 0 {
		opts.PerHost = 1
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.SeenCache == 0 {
		opts.SeenCache = 1 << 18
	}
	switch {
	case opts.RevisitShare == 0:
		opts.RevisitShare = 0.5
	case opts.RevisitShare < 0:
		opts.RevisitShare = 0
	case opts.RevisitShare > 1:
		opts.RevisitShare = 1
	}
	f := &Frontier{db: db, opts: opts, hosts: make(map[string]*hostState), changed: make(chan struct{}), recent: NewRecentKeys(opts.SeenCache),
		waiting: hostHeap{less: byEligibility}, ready: hostHeap{less: byReadiness}, readyNew: hostHeap{less: byReadiness}}
	var err error
	if f.seq, err = f.readCounter(keySeq); err != nil {
		return nil, err
	}
	var seen uint64
	if seen, err = f.readCounter(keySeen); err != nil {
		return nil, err
	}
	f.seen = int64(seen)
	if err := f.loadHosts(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Frontier) readCounter(k []byte) (uint64, error) {
	v, closer, err := f.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("frontier: read counter %s: %w", k, err)
	}
	defer closer.Close()
	d := decoder{b: v}
	n := d.uvarint()
	if d.err {
		return 0, fmt.Errorf("frontier: counter %s is corrupt", k)
	}
	return n, nil
}

// loadHosts rebuilds the in-memory host table from the host records of hosts with queued URLs.
func (f *Frontier) loadHosts() error {
	it, err := f.db.NewIter(&pebble.IterOptions{LowerBound: prefixHost, UpperBound: store.PrefixEnd(prefixHost)})
	if err != nil {
		return fmt.Errorf("frontier: load hosts: %w", err)
	}
	defer it.Close()
	now := f.opts.Clock().UnixNano()
	for it.First(); it.Valid(); it.Next() {
		h := &hostState{name: string(it.Key()[len(prefixHost):])}
		if err := h.unmarshal(it.Value()); err != nil {
			return fmt.Errorf("frontier: host record %q: %w", h.name, err)
		}
		if h.newCount == 0 && h.revCount == 0 {
			continue
		}
		h.newLow = queuePrefix(queueNew, h.name)
		h.revLow = queuePrefix(queueRevisit, h.name)
		f.queued += h.newCount + h.revCount
		f.queuedNew += h.newCount
		if err := f.refreshHeads(h); err != nil {
			return err
		}
		f.hosts[h.name] = h
		f.schedule(h, now)
	}
	return it.Error()
}

// refreshHeads reads the first available entry of each of h's queues. Callers hold f.mu.
func (f *Frontier) refreshHeads(h *hostState) error {
	for _, queue := range []byte{queueNew, queueRevisit} {
		if queue == queueNew && !h.newAvailable() || queue == queueRevisit && !h.revAvailable() {
			continue
		}
		k, _, _, err := f.scan(h, queue, false)
		if err != nil {
			return err
		}
		f.setHead(h, queue, k)
	}
	return nil
}

// setHead records k as the first available entry of h's queue; nil means the queue has
// none, although the counts said otherwise (a record torn by an outside edit): the counts
// are repaired to match the queue, which is the truth.
func (f *Frontier) setHead(h *hostState, queue byte, k []byte) {
	prefixLen := len(h.name) + 3
	switch {
	case k == nil && queue == queueNew:
		f.queued -= h.newCount - int64(h.newInflight)
		f.queuedNew -= h.newCount - int64(h.newInflight)
		h.newCount = int64(h.newInflight)
	case k == nil:
		f.queued -= h.revCount - int64(h.revInflight)
		h.revCount = int64(h.revInflight)
	case queue == queueNew:
		h.headPriority = floatFromOrdered(^keyOrder(k, prefixLen))
	default:
		h.revDue = int64(keyOrder(k, prefixLen))
	}
}

// scan finds the first entry of h's queue that is not in flight, starting at the queue's
// lower bound, and (withValue) its value and the key of the next available entry after it.
func (f *Frontier) scan(h *hostState, queue byte, withValue bool) (key, value, next []byte, err error) {
	low := h.newLow
	if queue == queueRevisit {
		low = h.revLow
	}
	upper := store.PrefixEnd(queuePrefix(queue, h.name))
	it, err := f.db.NewIter(&pebble.IterOptions{LowerBound: low, UpperBound: upper})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("frontier: scan %s: %w", h.name, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if h.isInflight(it.Key()) {
			continue
		}
		if key != nil {
			return key, value, append([]byte(nil), it.Key()...), nil
		}
		key = append([]byte(nil), it.Key()...)
		if !withValue {
			return key, nil, nil, nil
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("frontier: read entry of %s: %w", h.name, err)
		}
		value = append([]byte(nil), v...)
	}
	return key, value, nil, it.Error()
}

// schedule puts h in the heap its state calls for, or evicts it when it has nothing left.
// Callers hold f.mu.
func (f *Frontier) schedule(h *hostState, now int64) {
	f.unschedule(h)
	if h.idle() {
		delete(f.hosts, h.name)
		return
	}
	if h.inflight() >= f.opts.PerHost {
		return // busy; Complete or Release reschedules it
	}
	var workAt int64 = math.MaxInt64
	if h.newAvailable() {
		workAt = 0
	}
	if h.revAvailable() && h.revDue < workAt {
		workAt = h.revDue
	}
	if workAt == math.MaxInt64 {
		return // everything it has is in flight
	}
	h.eligibleAt = max(workAt, h.nextFetch)
	if h.eligibleAt <= now {
		f.makeReady(h, now)
		return
	}
	h.heap = heapWaiting
	heap.Push(&f.waiting, h)
	if h.parked() {
		h.counted = true
		f.parkedWaiting++
	}
}

// uncount takes h, leaving the waiting heap, out of parkedWaiting.
func (f *Frontier) uncount(h *hostState) {
	if h.counted {
		h.counted = false
		f.parkedWaiting--
	}
}

func (f *Frontier) unschedule(h *hostState) {
	switch h.heap {
	case heapWaiting:
		f.uncount(h)
		heap.Remove(&f.waiting, h.heapIndex)
	case heapReady:
		heap.Remove(&f.ready, h.heapIndex)
	case heapReadyNew:
		heap.Remove(&f.readyNew, h.heapIndex)
	}
	h.heap = heapNone
}

// promote moves hosts whose eligibility time has come from the waiting to the ready heap.
func (f *Frontier) promote(now int64) {
	for f.waiting.Len() > 0 && f.waiting.hosts[0].eligibleAt <= now {
		h := heap.Pop(&f.waiting).(*hostState)
		f.uncount(h)
		f.makeReady(h, now)
	}
}

func (f *Frontier) makeReady(h *hostState, now int64) {
	f.ticks++
	h.readySince = now
	h.readyTick = f.ticks
	if h.revAvailable() && h.revDue <= now {
		h.heap = heapReady
		heap.Push(&f.ready, h)
		return
	}
	h.heap = heapReadyNew
	heap.Push(&f.readyNew, h)
}

// pick takes the ready host to serve next out of its heap, nil if none is ready. Callers
// hold f.mu.
//
// Hosts with a due scheduled fetch and hosts with only new URLs share the picks on the
// terms a host's due revisits and new URLs share its leases (hostState.revisitFirst):
// while both kinds are ready they take turns, Options.RevisitShare of them the former's.
// Due fetches before every host with only new URLs left a host that had never been
// fetched waiting while the others had revisits due (issue 13: with each host's own queues
// taking turns but not the hosts, the uniform crawl of TestLiveFreshness's web had fetched
// every page once after 29 s to 72 s; with both, after 12-14 s).
func (f *Frontier) pick() *hostState {
	from := &f.ready
	switch {
	case f.readyNew.Len() == 0:
		if f.ready.Len() == 0 {
			return nil
		}
	case f.ready.Len() == 0:
		from = &f.readyNew
	case !f.turns.scheduledNext(f.opts.RevisitShare):
		from = &f.readyNew
	}
	f.turns.took(from == &f.ready, f.opts.RevisitShare)
	h := heap.Pop(from).(*hostState)
	h.heap = heapNone
	return h
}

func (f *Frontier) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Next leases the next URL to fetch, waiting until one is due. It returns ErrDrained when
// the frontier is empty and nothing is in flight (no Complete can add more), and ctx's error
// when ctx ends first.
func (f *Frontier) Next(ctx context.Context) (*Lease, error) {
	for {
		f.mu.Lock()
		if f.err != nil {
			f.mu.Unlock()
			return nil, f.err
		}
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		now := f.opts.Clock().UnixNano()
		f.promote(now)
		for h := f.pick(); h != nil; h = f.pick() {
			l, err := f.take(h, now)
			if err != nil {
				f.err = err
				f.mu.Unlock()
				return nil, err
			}
			f.schedule(h, now)
			if l != nil {
				f.mu.Unlock()
				return l, nil
			}
		}
		if f.queued == 0 && f.leased == 0 && !f.opts.Endless {
			f.mu.Unlock()
			return nil, ErrDrained
		}
		if f.onlyParked(now) {
			f.mu.Unlock()
			return nil, ErrParked
		}
		var timer <-chan time.Time
		if f.waiting.Len() > 0 {
			d := time.Duration(f.waiting.hosts[0].eligibleAt - now)
			t := time.NewTimer(max(d, 0))
			defer t.Stop()
			timer = t.C
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-timer:
		}
	}
}

// onlyParked reports whether Next should give up with ErrParked. Callers hold f.mu.
func (f *Frontier) onlyParked(now int64) bool {
	return f.opts.EndWhenParked > 0 && !f.opts.Endless && f.leased == 0 && f.ready.Len() == 0 && f.readyNew.Len() == 0 && f.waiting.Len() > 0 &&
		f.waiting.Len() == f.parkedWaiting && f.waiting.hosts[0].eligibleAt-now >= int64(f.opts.EndWhenParked)
}

// ParkedHost is a host that waits for a retry (see Park).
type ParkedHost struct {
	Host   string
	Until  time.Time // when it may be tried again
	Reason string    // why it waits, as the caller said
	Queued int64     // URLs it has queued
}

// Parked lists the hosts that wait for a retry and have nothing else to do, soonest first.
func (f *Frontier) Parked() []ParkedHost {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ParkedHost
	for _, h := range f.waiting.hosts {
		if h.parked() {
			out = append(out, ParkedHost{Host: h.name, Until: time.Unix(0, h.eligibleAt), Reason: h.parkReason, Queued: h.newCount + h.revCount})
		}
	}
	slices.SortFunc(out, func(a, b ParkedHost) int { return a.Until.Compare(b.Until) })
	return out
}

// take leases h's next entry: a due scheduled fetch or its best new URL, whichever queue
// has waited longer (hostState.revisitFirst). It returns nil when h turns out to have
// nothing available. Callers hold f.mu.
func (f *Frontier) take(h *hostState, now int64) (*Lease, error) {
	queue := byte(0)
	switch {
	case h.revisitFirst(now, f.opts.RevisitShare):
		queue = queueRevisit
	case h.newAvailable():
		queue = queueNew
	default:
		return nil, nil
	}
	key, value, next, err := f.scan(h, queue, true)
	if err != nil {
		return nil, err
	}
	if key == nil {
		f.setHead(h, queue, nil)
		return nil, nil
	}
	l := &Lease{host: h, key: key, queue: queue}
	if err := l.Item.unmarshal(value); err != nil {
		return nil, fmt.Errorf("frontier: entry %q of host %s: %w", key, h.name, err)
	}
	h.inflightKeys = append(h.inflightKeys, key)
	h.heldUntil = 0 // served: whatever held it is over
	if queue == queueRevisit && l.Item.Attempts > 0 && h.retries > 0 {
		h.retries--
	}
	f.leased++
	if queue == queueNew {
		h.newInflight++
		h.newLow = keyAfter(key)
	} else {
		h.revInflight++
		h.revLow = keyAfter(key)
	}
	h.turns.took(queue == queueRevisit, f.opts.RevisitShare)
	if next != nil {
		f.setHead(h, queue, next)
	}
	return l, nil
}

// Outcome is what the crawler reports when it is done with a leased URL.
type Outcome struct {
	// Fetched says a request was made (it counts toward the host's fetch total).
	Fetched bool
	// Delay is how long the host must rest, from now, before its next request.
	Delay time.Duration
	// NotBefore, when later than now+Delay, is the host's rest (e.g. Retry-After).
	NotBefore time.Time
	// Retry re-queues the URL (Attempts+1) to be fetched again at this time.
	Retry time.Time
	// Revisit re-queues the URL (Visits+1) to be fetched again at this time.
	Revisit time.Time
	// Why says, with a Retry, what failed; Parked reports it while the host waits.
	Why string
	// Discovered are the URLs found while processing the lease. Those already seen are
	// dropped; the rest are admitted to their hosts' queues.
	Discovered []Item
}

// Admission counts what happened to discovered URLs.
type Admission struct {
	Added     int // new URLs queued
	Seen      int // already seen (or repeated within the batch)
	OverQuota int // rejected by MaxPerHost
}

// Complete ends a lease: it deletes the URL from its queue, applies the outcome, lets write
// add the caller's own records to the same batch, and commits them atomically.
func (f *Frontier) Complete(l *Lease, o Outcome, write func(*pebble.Batch) error) (Admission, error) {
	b := f.db.NewBatch()
	defer b.Close()
	var seen int
	var check seenCheck
	o.Discovered, seen, check = f.dropSeen(o.Discovered)
	adm, err := f.complete(b, l, o, write, check)
	adm.Seen += seen
	if err != nil {
		return adm, err
	}
	return adm, f.durable()
}

func (f *Frontier) complete(b *pebble.Batch, l *Lease, o Outcome, write func(*pebble.Batch) error, check seenCheck) (Admission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(l); err != nil {
		return Admission{}, err
	}
	now := f.opts.Clock()
	nowNs := now.UnixNano()
	h := l.host

	if err := b.Delete(l.key, nil); err != nil {
		return Admission{}, err
	}
	h.dropInflight(l.key)
	f.leased--
	f.queued--
	if l.queue == queueNew {
		h.newInflight--
		h.newCount--
		f.queuedNew--
	} else {
		h.revInflight--
		h.revCount--
	}
	if o.Fetched {
		h.fetched++
	}
	rest := nowNs + int64(o.Delay)
	if nb := unixNano(o.NotBefore); nb > rest {
		rest = nb
	}
	h.nextFetch = max(h.nextFetch, rest)

	touched := map[*hostState]bool{h: true}
	if !o.Retry.IsZero() || !o.Revisit.IsZero() {
		it := l.Item
		if !o.Retry.IsZero() { // a retry wins over a revisit
			it.Due = o.Retry
			it.Attempts++
			h.retries++
			h.parkReason = o.Why
		} else {
			it.Due = o.Revisit
			it.Visits++
			it.Attempts = 0
		}
		if err := f.enqueueScheduled(b, h, &it); err != nil {
			return Admission{}, err
		}
	}
	adm, err := f.admit(b, o.Discovered, now, touched, check)
	if err != nil {
		return Admission{}, err
	}
	if err := f.writeState(b, touched); err != nil {
		return Admission{}, err
	}
	if write != nil {
		if err := write(b); err != nil {
			f.rollback()
			return Admission{}, err
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		f.err = fmt.Errorf("frontier: commit: %w", err)
		return Admission{}, f.err
	}
	l.done = true
	for th := range touched {
		f.schedule(th, nowNs)
	}
	f.broadcast()
	return adm, nil
}

// durable waits until everything committed so far is synced to disk. It runs outside the
// frontier's lock, so concurrent callers share one fsync (Pebble groups pending syncs), and
// the batch a caller committed is covered because the log is written in commit order.
func (f *Frontier) durable() error {
	if f.opts.NoSync {
		return nil
	}
	if err := f.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("frontier: sync: %w", err)
	}
	return nil
}

// rollback is called when a caller's write fails after memory was changed: memory is no
// longer trustworthy, so the frontier stops; reopening rebuilds it from disk.
func (f *Frontier) rollback() {
	f.err = errors.New("frontier: a record write failed mid-completion; reopen the frontier")
}

func (f *Frontier) usable(l *Lease) error {
	if f.err != nil {
		return f.err
	}
	if l == nil || l.done {
		return errors.New("frontier: lease already ended")
	}
	return nil
}

// Park gives a lease back like Release, and marks its host as waiting for a retry until
// until, for reason (its robots.txt could not be fetched, say): with
// Options.EndWhenParked, a crawl whose only work is such hosts may end.
func (f *Frontier) Park(l *Lease, until time.Time, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(l); err != nil {
		return err
	}
	if u := unixNano(until); u > l.host.heldUntil {
		l.host.heldUntil, l.host.parkReason = u, reason
	}
	return f.release(l, until)
}

// Release gives a lease back without consuming it: the URL stays queued and is leased again
// once its host may be served, not before notBefore (zero: at once).
func (f *Frontier) Release(l *Lease, notBefore time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(l); err != nil {
		return err
	}
	return f.release(l, notBefore)
}

// release is Release for a usable lease. Callers hold f.mu.
func (f *Frontier) release(l *Lease, notBefore time.Time) error {
	h := l.host
	if l.queue == queueRevisit && l.Item.Attempts > 0 {
		h.retries++ // back in the queue, a retry again
	}
	h.dropInflight(l.key)
	f.leased--
	if l.queue == queueNew {
		h.newInflight--
		if bytes.Compare(l.key, h.newLow) < 0 {
			h.newLow = l.key
		}
	} else {
		h.revInflight--
		if bytes.Compare(l.key, h.revLow) < 0 {
			h.revLow = l.key
		}
	}
	if nb := unixNano(notBefore); nb > h.nextFetch {
		h.nextFetch = nb
	}
	l.done = true
	if err := f.refreshHeads(h); err != nil {
		f.err = err
		return err
	}
	f.schedule(h, f.opts.Clock().UnixNano())
	f.broadcast()
	return nil
}

// Add admits URLs from outside a lease (seeds, sitemaps, a cluster peer) in one batch.
func (f *Frontier) Add(items []Item) (Admission, error) {
	b := f.db.NewBatch()
	defer b.Close()
	items, seen, check := f.dropSeen(items)
	adm, err := f.add(b, items, check)
	adm.Seen += seen
	if err != nil {
		return adm, err
	}
	return adm, f.durable()
}

// AddRecorded is Add without the log sync, for URLs already recorded durably elsewhere:
// a cluster node admits routed URLs after JetStream stored them, and a node that crashed
// rebuilds its queues from there, never from its own frontier, so a sync per admission
// would only cost a write to disk.
func (f *Frontier) AddRecorded(items []Item) (Admission, error) {
	b := f.db.NewBatch()
	defer b.Close()
	items, seen, check := f.dropSeen(items)
	adm, err := f.add(b, items, check)
	adm.Seen += seen
	return adm, err
}

func (f *Frontier) add(b *pebble.Batch, items []Item, check seenCheck) (Admission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return Admission{}, f.err
	}
	now := f.opts.Clock()
	touched := map[*hostState]bool{}
	adm, err := f.admit(b, items, now, touched, check)
	if err != nil {
		return adm, err
	}
	if err := f.writeState(b, touched); err != nil {
		return adm, err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		f.err = fmt.Errorf("frontier: commit: %w", err)
		return Admission{}, f.err
	}
	for h := range touched {
		f.schedule(h, now.UnixNano())
	}
	f.broadcast()
	return adm, nil
}

// dropSeen removes the items already in the seen set, before the frontier's lock is taken:
// most links a page carries were seen long ago, and looking them up outside the lock lets
// completions proceed in parallel. A concurrent completion may admit one of the kept URLs
// meanwhile; admit catches that with the seen cache (see RecentKeys.covers) and the mark
// taken before the lookups. A lookup error keeps the item and makes admit read again.
func (f *Frontier) dropSeen(items []Item) (kept []Item, seen int, check seenCheck) {
	check = seenCheck{mark: f.recent.mark(), clean: true}
	kept = items[:0:0]
	for i := range items {
		ok, err := f.isSeen(items[i].Key)
		if err != nil {
			check.clean = false
		}
		if ok {
			seen++
			continue
		}
		kept = append(kept, items[i])
	}
	return kept, seen, check
}

// seenCheck is what dropSeen tells admit about the lookups it made.
type seenCheck struct {
	mark  uint64 // the seen cache's mark before the lookups
	clean bool   // every lookup got an answer
}

// isSeen reports whether k is in the seen set.
func (f *Frontier) isSeen(k [16]byte) (bool, error) {
	if f.recent.Has(k) {
		return true, nil
	}
	_, closer, err := f.db.Get(seenKey(k))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	f.recent.Add(k)
	return true, nil
}

// admit queues the unseen items and marks them seen. Callers hold f.mu.
//
// The items come from dropSeen, which found them unseen. If the seen cache still covers
// everything admitted since its lookups, a cache miss proves an item is still unseen and
// the seen-set read is skipped.
func (f *Frontier) admit(b *pebble.Batch, items []Item, now time.Time, touched map[*hostState]bool, check seenCheck) (Admission, error) {
	var adm Admission
	trustMiss := check.clean && f.recent.covers(check.mark)
	var batchSeen map[[16]byte]bool
	if len(items) > 1 {
		batchSeen = make(map[[16]byte]bool, len(items))
	}
	for i := range items {
		it := &items[i]
		if batchSeen != nil {
			if batchSeen[it.Key] {
				adm.Seen++
				continue
			}
			batchSeen[it.Key] = true
		}
		sk := seenKey(it.Key)
		if f.recent.Has(it.Key) {
			adm.Seen++
			continue
		}
		if !trustMiss {
			_, closer, err := f.db.Get(sk)
			if err == nil {
				closer.Close()
				f.recent.Add(it.Key)
				adm.Seen++
				continue
			}
			if !errors.Is(err, pebble.ErrNotFound) {
				return adm, fmt.Errorf("frontier: seen-set lookup: %w", err)
			}
		}
		h, err := f.host(it.Host)
		if err != nil {
			return adm, err
		}
		if f.opts.MaxPerHost > 0 && h.admitted >= f.opts.MaxPerHost {
			adm.OverQuota++
			if h.idle() {
				delete(f.hosts, h.name)
			}
			continue
		}
		if err := b.Set(sk, nil, nil); err != nil {
			return adm, err
		}
		// Cached before the commit: harmless, since a failed commit stops the frontier.
		f.recent.Add(it.Key)
		f.seen++
		if it.Discovered.IsZero() {
			it.Discovered = now
		}
		if !it.Due.IsZero() {
			if err := f.enqueueScheduled(b, h, it); err != nil {
				return adm, err
			}
		} else if err := f.enqueueNew(b, h, it); err != nil {
			return adm, err
		}
		h.admitted++
		touched[h] = true
		adm.Added++
	}
	return adm, nil
}

// enqueueNew puts it in h's queue of new URLs. Callers hold f.mu.
func (f *Frontier) enqueueNew(b *pebble.Batch, h *hostState, it *Item) error {
	f.seq++
	k := newKey(h.name, it.Priority, f.seq)
	if err := b.Set(k, it.marshal(), nil); err != nil {
		return err
	}
	if !h.newAvailable() || it.Priority > h.headPriority {
		h.headPriority = it.Priority
	}
	h.newCount++
	f.queued++
	f.queuedNew++
	if bytes.Compare(k, h.newLow) < 0 {
		h.newLow = k
	}
	return nil
}

// enqueueScheduled puts it in h's scheduled queue at it.Due. Callers hold f.mu.
func (f *Frontier) enqueueScheduled(b *pebble.Batch, h *hostState, it *Item) error {
	f.seq++
	due := it.Due.UnixNano()
	k := revisitKey(h.name, due, f.seq)
	if err := b.Set(k, it.marshal(), nil); err != nil {
		return err
	}
	if !h.revAvailable() || due < h.revDue {
		h.revDue = due
	}
	h.revCount++
	f.queued++
	if bytes.Compare(k, h.revLow) < 0 {
		h.revLow = k
	}
	return nil
}

// host returns the in-memory state of a host, loading its record when it is not active.
func (f *Frontier) host(name string) (*hostState, error) {
	if h, ok := f.hosts[name]; ok {
		return h, nil
	}
	h := &hostState{name: name, newLow: queuePrefix(queueNew, name), revLow: queuePrefix(queueRevisit, name)}
	v, closer, err := f.db.Get(hostKey(name))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("frontier: read host %s: %w", name, err)
	default:
		err := h.unmarshal(v)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("frontier: host record %q: %w", name, err)
		}
	}
	f.hosts[name] = h
	return h, nil
}

func (f *Frontier) writeState(b *pebble.Batch, touched map[*hostState]bool) error {
	for h := range touched {
		if err := b.Set(hostKey(h.name), h.marshal(), nil); err != nil {
			return err
		}
	}
	if err := b.Set(keySeq, binary.AppendUvarint(nil, f.seq), nil); err != nil {
		return err
	}
	return b.Set(keySeen, binary.AppendUvarint(nil, uint64(f.seen)), nil)
}

// Stats is a snapshot of the frontier's size.
type Stats struct {
	Queued   int64 // URLs waiting (new and scheduled), in-flight ones included
	InFlight int   // URLs leased and not yet completed
	Seen     int64 // URLs ever admitted
	New      int64 // of Queued, URLs never fetched yet (in-flight ones included)
	Hosts    int   // hosts with queued or in-flight URLs
	Ready    int   // hosts that may be served right now
}

// Stats returns current sizes.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.promote(f.opts.Clock().UnixNano())
	return Stats{Queued: f.queued, New: f.queuedNew, InFlight: f.leased, Seen: f.seen, Hosts: len(f.hosts), Ready: f.ready.Len() + f.readyNew.Len()}
}

// HostFetched returns how many fetches a host has completed.
func (f *Frontier) HostFetched(host string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := f.hosts[host]; ok {
		return h.fetched, nil
	}
	h, err := f.host(host)
	if err != nil {
		return 0, err
	}
	if h.idle() {
		delete(f.hosts, host)
	}
	return h.fetched, nil
}

// Close wakes every waiting Next with ErrClosed. It does not close the database.
func (f *Frontier) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.broadcast()
}
