package scope

import (
	"errors"
	"strconv"
	"sync"

	"github.com/sonda-search/sonda/urlnorm"
)

// maxRunSegments is the longest run of segments checked for repetition. Longer runs repeated
// more than a few times make paths longer than MaxPathSegments allows anyway, and the bound
// keeps the check linear in the path length.
const maxRunSegments = 16

// repeatedRun finds a run of 1 to maxRunSegments consecutive path segments that repeats more
// than limit times in a row ("/x/x/x/x", "/a/b/a/b/a/b/a/b"). It returns the run ("a/b") and
// how many times it repeats, or times 0 if there is none.
func repeatedRun(path string, limit int) (run string, times int) {
	// Segment i is path[starts[i] : starts[i+1]-1]; the sentinel start is len(path)+1.
	var buf [65]int
	starts := buf[:0]
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			starts = append(starts, i+1)
		}
	}
	starts = append(starts, len(path)+1)
	n := len(starts) - 1
	if limit >= n {
		return "", 0
	}
	seg := func(i int) string { return path[starts[i] : starts[i+1]-1] }

	for k := 1; k <= maxRunSegments && k*(limit+1) <= n; k++ {
		// A streak of s positions i with seg(i) == seg(i+k) means the s+k segments from
		// the streak's start have period k: the run repeats (s+k)/k times.
		streak := 0
		for i := 0; i+k < n; i++ {
			if seg(i) != seg(i+k) {
				streak = 0
				continue
			}
			streak++
			if streak < k*limit {
				continue
			}
			start := i - streak + 1
			for i+1+k < n && seg(i+1) == seg(i+1+k) {
				i++
				streak++
			}
			return path[starts[start] : starts[start+k]-1], (streak + k) / k
		}
	}
	return "", 0
}

// VariantCounter remembers, per host and path, which query strings have been seen. The
// crawler implements it on disk so the count survives restarts; MemoryVariants is an
// in-memory one.
type VariantCounter interface {
	// AddVariant records variant (a hash of a query string) under pathKey and returns its
	// rank: how many distinct variants pathKey had once this one was first recorded (1 for
	// the first). A variant recorded before keeps its rank, so a decision, once made, stays
	// the same. Once a pathKey has more than limit variants an implementation may stop
	// recording and answer limit+1 for any variant it has not stored, so it never needs more
	// than limit+1 entries per path.
	AddVariant(pathKey string, variant uint64, limit int) (rank int, err error)
}

// CheckVariants applies MaxQueryVariants: it records u's query under its host and path in c
// and refuses u if its query is not among the first MaxQueryVariants distinct ones seen
// there. Call it for URLs
// that passed Check and are about to be admitted (not yet seen), so only real candidates
// count. URLs without a query always pass.
func (s *Scope) CheckVariants(u urlnorm.URL, c VariantCounter) (Verdict, error) {
	limit := s.rules.MaxQueryVariants
	q := u.RawQuery()
	if limit == 0 || q == "" {
		return s.inScope, nil
	}
	n, err := c.AddVariant(u.HostPath(), fnv64a(q), limit)
	if err != nil {
		return Verdict{}, err
	}
	if n > limit {
		return deny(RuleQueryVariants, u.HostPath()+" has more than "+strconv.Itoa(limit)+" distinct queries"), nil
	}
	return s.inScope, nil
}

// fnv64a hashes a query string. The hash is stored by the crawler, so it must be the same in
// every process: hash/maphash, seeded per process, would not do. A collision only makes two
// variants count as one.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// MemoryVariants is a VariantCounter in memory, for tests and short crawls. It is bounded:
// it remembers at most maxPaths paths, forgetting the least recently added path first, and
// at most limit+1 variants per path, so it holds at most maxPaths×(limit+1) variants. A
// forgotten path starts counting again from zero. It is safe for concurrent use.
type MemoryVariants struct {
	mu       sync.Mutex
	paths    map[string]map[uint64]int // variant ranks by path
	order    []string                  // ring of remembered paths, oldest at next once full
	next     int
	maxPaths int
}

// NewMemoryVariants returns a MemoryVariants remembering up to maxPaths paths (at least 1).
func NewMemoryVariants(maxPaths int) *MemoryVariants {
	return &MemoryVariants{paths: make(map[string]map[uint64]int), maxPaths: max(maxPaths, 1)}
}

// AddVariant implements VariantCounter.
func (m *MemoryVariants) AddVariant(pathKey string, variant uint64, limit int) (int, error) {
	if limit < 0 {
		return 0, errors.New("scope: AddVariant: negative limit")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	set, ok := m.paths[pathKey]
	if !ok {
		set = make(map[uint64]int)
		if len(m.order) < m.maxPaths {
			m.order = append(m.order, pathKey)
		} else {
			delete(m.paths, m.order[m.next])
			m.order[m.next] = pathKey
			m.next = (m.next + 1) % m.maxPaths
		}
		m.paths[pathKey] = set
	}
	if rank, seen := set[variant]; seen {
		return rank, nil
	}
	if len(set) > limit {
		return limit + 1, nil
	}
	set[variant] = len(set) + 1
	return len(set), nil
}
