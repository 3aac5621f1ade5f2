package local

import (
	"container/heap"
	"sort"
)

// topCounter finds the most frequent keys of a stream in bounded memory with the
// Space-Saving algorithm (Metwally, Agrawal and El Abbadi, "Efficient computation of
// frequent and top-k elements in data streams", ICDT 2005): it keeps capacity counters;
// an unseen key takes over the smallest counter and inherits its count. Every key whose
// true count exceeds total/capacity is guaranteed to be held, and a held key's count
// overestimates its true count by at most the count it inherited. A crawl of a million
// hosts thus shows its top hosts with a few kilobytes instead of a map of every host.
type topCounter struct {
	capacity int
	byKey    map[string]*topEntry
	heap     topHeap // min-heap on count
}

type topEntry struct {
	key   string
	count int64
	err   int64 // the count inherited when the key took over a counter
	index int   // position in the heap
}

func newTopCounter(capacity int) *topCounter {
	return &topCounter{capacity: max(1, capacity), byKey: map[string]*topEntry{}}
}

// add counts one occurrence of key.
func (t *topCounter) add(key string) {
	if e, ok := t.byKey[key]; ok {
		e.count++
		heap.Fix(&t.heap, e.index)
		return
	}
	if len(t.heap) < t.capacity {
		e := &topEntry{key: key, count: 1}
		t.byKey[key] = e
		heap.Push(&t.heap, e)
		return
	}
	e := t.heap[0] // the smallest counter changes hands
	delete(t.byKey, e.key)
	e.key, e.err = key, e.count
	e.count++
	t.byKey[key] = e
	heap.Fix(&t.heap, 0)
}

// top returns up to n keys with their (upper-bound) counts, largest first, ties by key.
func (t *topCounter) top(n int) []topEntry {
	out := make([]topEntry, 0, len(t.heap))
	for _, e := range t.heap {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].count > out[j].count || out[i].count == out[j].count && out[i].key < out[j].key
	})
	return out[:min(n, len(out))]
}

type topHeap []*topEntry

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return h[i].count < h[j].count }
func (h topHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *topHeap) Push(x any) {
	e := x.(*topEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *topHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
