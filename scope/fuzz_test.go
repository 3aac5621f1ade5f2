package scope

import (
	"strings"
	"testing"
)

// naiveRepeat is the definition repeatedRun implements, by brute force: the longest
// back-to-back repetition of any run of 1 to maxRunSegments segments.
func naiveRepeat(path string, limit int) int {
	segs := strings.Split(path, "/")[1:]
	best := 0
	for k := 1; k <= maxRunSegments; k++ {
		for i := 0; i+k <= len(segs); i++ {
			times := 1
			for j := i + k; j+k <= len(segs) && equalRuns(segs[i:i+k], segs[j:j+k]); j += k {
				times++
			}
			if times > limit {
				best = max(best, times)
			}
		}
	}
	return best
}

func equalRuns(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzRepeatedRun(f *testing.F) {
	for _, p := range []string{"/", "/x/x/x/x", "/a/b/a/b/a/b/a/b/", "/p/a/b/c/a/b/c/a/b/c/a/b/c/q", "/a//////b", "/a/b/a/b/a/c"} {
		f.Add(p, 3)
		f.Add(p, 1)
	}
	f.Fuzz(func(t *testing.T, path string, limit int) {
		if limit < 1 || limit > 10 || len(path) > 400 {
			return
		}
		path = "/" + path
		run, times := repeatedRun(path, limit)
		want := naiveRepeat(path, limit)
		if (times > 0) != (want > 0) {
			t.Fatalf("repeatedRun(%q, %d) = %q, %d; brute force finds %d", path, limit, run, times, want)
		}
		if times == 0 {
			return
		}
		if times <= limit || !strings.Contains(path+"/", "/"+strings.Repeat(run+"/", times)) {
			t.Fatalf("repeatedRun(%q, %d) = %q, %d: not a repetition over the limit", path, limit, run, times)
		}
	})
}
