package frontier

import (
	"bytes"
	"encoding/binary"
)

// hostState is the in-memory state of a host that has queued or in-flight URLs. Hosts with
// neither are evicted from memory (their record stays on disk), so memory grows with the
// number of active hosts, never with the number of queued URLs.
type hostState struct {
	name string

	// Persisted in the host record, always in the same batch as the queue change.
	newCount  int64 // entries in the host's new-URL queue, in-flight ones included
	revCount  int64 // entries in the host's scheduled queue, in-flight ones included
	fetched   int64 // completed fetches ever
	admitted  int64 // URLs ever admitted to this host's queues (for the per-host cap)
	nextFetch int64 // unix ns: earliest start of the next request (politeness)

	// Memory only, rebuilt at open.
	//
	// newLow/revLow are iteration lower bounds: no queued entry that is not in flight has a
	// key below them. Starting each scan there skips the tombstones that completed entries
	// leave at the head of a queue, which would otherwise make every pop slower than the last.
	newLow, revLow []byte
	newInflight    int
	revInflight    int
	inflightKeys   [][]byte
	headPriority   float64 // priority of the first available new entry
	revDue         int64   // due time of the first available scheduled entry
	turns          turns   // how the host's scheduled and new queues have shared its leases (revisitFirst)

	heap       int // which heap the host is in: heapNone, heapWaiting, heapReady, heapReadyNew
	heapIndex  int
	eligibleAt int64  // unix ns when the host may be served next (waiting heap order)
	readySince int64  // when it became ready
	readyTick  uint64 // arrival order in the ready heap: the tie-break that makes service fair

	// A host is parked when all it has to do is wait for a retry: either the whole host is
	// held until heldUntil (Park: its robots.txt could not be read), or all its available
	// URLs are retries (retries counts the queued retries not in flight). parkReason says
	// why; counted says the host is counted in Frontier.parkedWaiting.
	heldUntil  int64
	retries    int64
	parkReason string
	counted    bool
}

// parked reports whether the host has nothing to do but wait for a retry.
func (h *hostState) parked() bool {
	if h.heldUntil > 0 && h.eligibleAt <= h.heldUntil {
		return true
	}
	return !h.newAvailable() && h.onlyRetries()
}

const (
	heapNone = iota
	heapWaiting
	heapReady    // Frontier.ready
	heapReadyNew // Frontier.readyNew
)

func (h *hostState) newAvailable() bool { return h.newCount-int64(h.newInflight) > 0 }

// revisitFirst reports whether h's next entry at now is from its scheduled queue: a due
// revisit or retry goes first when no never-fetched URL waits; while both queues have work
// they take turns, the scheduled queue getting share of them (Options.RevisitShare), spread
// evenly, so neither waits long for the other.
//
// Due revisits before every new URL left discovery only what the revisit plan did not ask
// for: on TestLiveFreshness's web, where revisits asked for nearly every fetch, the last
// pages were first fetched after up to 6 minutes (issue 13). Serving the two in the order
// they waited (a new URL before a revisit that came due after it was found) would instead
// let a backlog of new URLs found long ago hold every revisit back for as long as it
// lasts; and the queue that waited longer since it was last served first made every due
// revisit wait for one new URL while new URLs queued, even when revisits asked for few
// fetches (docs/benchmarks.md, "Fifth pass"). Taking turns keeps revisits that ask for at
// most share of a busy host's fetches on time, and gives them at least share otherwise.
//
// A host whose scheduled queue holds only retries serves its never-fetched URLs first: a
// URL that failed (a stall, a server error) must not hold the host's other pages behind
// its attempts and the rests they cause (delay-factor times a 20 s stall is 40 s, so two
// attempts ahead of three fresh pages kept them back 100 s in TestHostileWebFinishesIn-
// BoundedTime). The retry keeps its place, due, and goes once nothing new is left.
func (h *hostState) revisitFirst(now int64, share float64) bool {
	if !h.revAvailable() || h.revDue > now {
		return false
	}
	if !h.newAvailable() {
		return true
	}
	if h.onlyRetries() {
		return false
	}
	return h.turns.scheduledNext(share)
}

// onlyRetries reports whether every scheduled entry the host may lease is a retry.
func (h *hostState) onlyRetries() bool {
	return h.retries > 0 && h.retries == h.revCount-int64(h.revInflight)
}

func (h *hostState) revAvailable() bool { return h.revCount-int64(h.revInflight) > 0 }
func (h *hostState) inflight() int      { return len(h.inflightKeys) }
func (h *hostState) idle() bool {
	return h.newCount == 0 && h.revCount == 0 && len(h.inflightKeys) == 0
}

func (h *hostState) isInflight(key []byte) bool {
	for _, k := range h.inflightKeys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

func (h *hostState) dropInflight(key []byte) {
	for i, k := range h.inflightKeys {
		if bytes.Equal(k, key) {
			last := len(h.inflightKeys) - 1
			h.inflightKeys[i] = h.inflightKeys[last]
			h.inflightKeys[last] = nil
			h.inflightKeys = h.inflightKeys[:last]
			return
		}
	}
}

const hostRecordVersion = 1

func (h *hostState) marshal() []byte {
	b := make([]byte, 0, 48)
	b = append(b, hostRecordVersion)
	b = binary.AppendVarint(b, h.newCount)
	b = binary.AppendVarint(b, h.revCount)
	b = binary.AppendVarint(b, h.fetched)
	b = binary.AppendVarint(b, h.admitted)
	b = binary.AppendVarint(b, h.nextFetch)
	return b
}

func (h *hostState) unmarshal(b []byte) error {
	d := decoder{b: b}
	if d.byte() != hostRecordVersion {
		return errBadItem
	}
	h.newCount = d.varint()
	h.revCount = d.varint()
	h.fetched = d.varint()
	h.admitted = d.varint()
	h.nextFetch = d.varint()
	if d.err {
		return errBadItem
	}
	return nil
}

// hostHeap is a container/heap of hosts ordered by less; each host knows its index, so a
// host can be removed from the middle when its state changes.
type hostHeap struct {
	hosts []*hostState
	less  func(a, b *hostState) bool
}

func (q *hostHeap) Len() int           { return len(q.hosts) }
func (q *hostHeap) Less(i, j int) bool { return q.less(q.hosts[i], q.hosts[j]) }
func (q *hostHeap) Swap(i, j int) {
	q.hosts[i], q.hosts[j] = q.hosts[j], q.hosts[i]
	q.hosts[i].heapIndex = i
	q.hosts[j].heapIndex = j
}
func (q *hostHeap) Push(x any) {
	h := x.(*hostState)
	h.heapIndex = len(q.hosts)
	q.hosts = append(q.hosts, h)
}
func (q *hostHeap) Pop() any {
	last := len(q.hosts) - 1
	h := q.hosts[last]
	q.hosts[last] = nil
	q.hosts = q.hosts[:last]
	return h
}

// byEligibility orders waiting hosts by the time they may be served.
func byEligibility(a, b *hostState) bool { return a.eligibleAt < b.eligibleAt }

// byReadiness orders hosts that may be served by the priority of their best URL, then by
// how long they have been ready, so equal priorities are served round-robin and no host is
// starved by another of the same priority.
func byReadiness(a, b *hostState) bool {
	pa, pb := a.readyPriority(), b.readyPriority()
	if pa != pb {
		return pa > pb
	}
	return a.readyTick < b.readyTick
}

// readyPriority ranks a ready host: a host with a due scheduled fetch (a revisit or retry)
// goes first, since those are time-critical (even when it serves a new URL that has waited
// longer, see revisitFirst), unless it serves its new URLs first (only retries are due);
// otherwise its best new URL's priority counts.
func (h *hostState) readyPriority() float64 {
	if h.revAvailable() && h.revDue <= h.readySince && !(h.newAvailable() && h.onlyRetries()) {
		return maxPriority
	}
	if h.newAvailable() {
		return h.headPriority
	}
	return minPriority
}
