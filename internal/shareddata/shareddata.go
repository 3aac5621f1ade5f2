// Package shareddata locates the shared, third-party test data (../shared/testdata beside
// the repository) for tests, which read it in place and never copy it into the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns ../shared/testdata/<parts...> relative to the module root, or skips the test
// with a message saying where the data was looked for.
func Dir(t testing.TB, parts ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0) // .../internal/shareddata/shareddata.go
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(append([]string{root, "..", "shared", "testdata"}, parts...)...)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not found at %s: %v", dir, err)
	}
	return dir
}

// Read returns the contents of the first max files (in name order; all when max <= 0)
// matching pattern in Dir(t, parts...), and their total size; it skips the test as Dir does,
// or when no file matches.
func Read(t testing.TB, max int, pattern string, parts ...string) (files []string, size int) {
	t.Helper()
	dir := Dir(t, parts...)
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(names) == 0 {
		t.Skipf("no %s in %s (%v)", pattern, dir, err)
	}
	if max > 0 && len(names) > max {
		names = names[:max]
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files, size = append(files, string(b)), size+len(b)
	}
	return files, size
}
