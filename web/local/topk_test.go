package local

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestTopCounterExact(t *testing.T) {
	tc := newTopCounter(10)
	for _, k := range []string{"b", "a", "b", "c", "a", "a"} {
		tc.add(k)
	}
	var got []string
	for _, e := range tc.top(5) {
		got = append(got, fmt.Sprintf("%s=%d", e.key, e.count))
	}
	if fmt.Sprint(got) != "[a=3 b=2 c=1]" {
		t.Errorf("top = %v", got)
	}
	if len(tc.top(1)) != 1 {
		t.Error("top(1) is not one entry")
	}
}

// TestTopCounterGuarantee checks Space-Saving's guarantees on a skewed stream much larger
// than its capacity: every key more frequent than total/capacity is held, and each held
// count is an upper bound within the inherited error of the true count.
func TestTopCounterGuarantee(t *testing.T) {
	const capacity, n = 50, 200000
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.2, 1, 5000)
	tc := newTopCounter(capacity)
	truth := map[string]int64{}
	for range n {
		k := fmt.Sprintf("host%d", zipf.Uint64())
		if rng.IntN(10) == 0 {
			k = fmt.Sprintf("noise%d", rng.IntN(100000))
		}
		truth[k]++
		tc.add(k)
	}
	held := map[string]topEntry{}
	for _, e := range tc.top(capacity) {
		held[e.key] = e
		if e.count < truth[e.key] || e.count-e.err > truth[e.key] {
			t.Errorf("%s: count %d (error %d), true %d", e.key, e.count, e.err, truth[e.key])
		}
	}
	for k, c := range truth {
		if c > n/capacity {
			if _, ok := held[k]; !ok {
				t.Errorf("%s occurs %d times (> %d) but is not held", k, c, n/capacity)
			}
		}
	}
	if top := tc.top(1)[0]; top.key != "host0" {
		t.Errorf("most frequent = %s; want host0", top.key)
	}
}

func BenchmarkTopCounter(b *testing.B) {
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("www.host%04d.example", i)
	}
	tc := newTopCounter(256)
	i := 0
	for b.Loop() {
		tc.add(keys[i&4095])
		i++
	}
}
