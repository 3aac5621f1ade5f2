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

	heap       int // which heap the host is in: heapNone, heapWaiting, heapReady
	heapIndex  int
	eligibleAt int64  // unix ns when the host may be served next (waiting heap order)
	readySince int64  // when it became ready
	readyTick  uint64 // arrival order in the ready heap: the tie-break that makes service fair
}

const (
	heapNone = iota
	heapWaiting
	heapReady
)

func (h *hostState) newAvailable() bool { return h.newCount-int64(h.newInflight) > 0 }
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

// waitingHeap orders hosts by the time they become eligible.
type waitingHeap []*hostState

func (w waitingHeap) Len() int           { return len(w) }
func (w waitingHeap) Less(i, j int) bool { return w[i].eligibleAt < w[j].eligibleAt }
func (w waitingHeap) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].heapIndex = i
	w[j].heapIndex = j
}
func (w *waitingHeap) Push(x any) {
	h := x.(*hostState)
	h.heapIndex = len(*w)
	*w = append(*w, h)
}
func (w *waitingHeap) Pop() any {
	old := *w
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	return h
}

// readyHeap orders eligible hosts by the priority of their best URL, then by how long they
// have been ready, so equal priorities are served round-robin and no host is starved by
// another of the same priority.
type readyHeap []*hostState

func (r readyHeap) Len() int { return len(r) }
func (r readyHeap) Less(i, j int) bool {
	pi, pj := r[i].readyPriority(), r[j].readyPriority()
	if pi != pj {
		return pi > pj
	}
	return r[i].readyTick < r[j].readyTick
}
func (r readyHeap) Swap(i, j int) {
	r[i], r[j] = r[j], r[i]
	r[i].heapIndex = i
	r[j].heapIndex = j
}
func (r *readyHeap) Push(x any) {
	h := x.(*hostState)
	h.heapIndex = len(*r)
	*r = append(*r, h)
}
func (r *readyHeap) Pop() any {
	old := *r
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*r = old[:len(old)-1]
	return h
}

// readyPriority ranks a ready host: a host with a due scheduled fetch (a revisit or retry)
// goes first, since those are time-critical; otherwise its best new URL's priority counts.
func (h *hostState) readyPriority() float64 {
	if h.revAvailable() && h.revDue <= h.readySince {
		return maxPriority
	}
	if h.newAvailable() {
		return h.headPriority
	}
	return minPriority
}
