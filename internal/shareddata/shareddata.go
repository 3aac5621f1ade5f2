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
