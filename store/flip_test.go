package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// flipDB makes a database of n keys spread over two table files and a log, closed.
func flipDB(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	db, err := Open(dir, Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for part := range 3 {
		b := db.Pebble().NewBatch()
		for i := part; i < n; i += 3 {
			b.Set([]byte(fmt.Sprintf("p%06d", i)), []byte(strings.Repeat("v", 20)), nil)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if part < 2 {
			if err := db.Pebble().Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// countAll opens dir (read-only or not) and counts its keys.
func countAll(dir string, readOnly bool) (int, error) {
	db, err := Open(dir, Options{ReadOnly: readOnly, SyncInterval: -1})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	it, err := db.Pebble().NewIter(nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		return n, err
	}
	return n, nil
}

// TestManifestFlipsAreRefused flips every byte of the database's MANIFEST and every 29th
// of its OPTIONS file, one at a time: opening it, read-only and then read-write, must either
// refuse with an error naming the file, or read every key. Pebble alone reads a MANIFEST
// up to a bad record and drops the tables listed after it (then deletes them on the next
// read-write open): one flipped byte lost every key, without an error.
func TestManifestFlipsAreRefused(t *testing.T) {
	const n = 300
	clean := flipDB(t, n)
	manifest, err := currentManifest(clean)
	if err != nil || manifest == "" {
		t.Fatalf("current manifest: %q, %v", manifest, err)
	}
	options, _ := filepath.Glob(filepath.Join(clean, "OPTIONS-*"))
	files := append([]string{filepath.Base(manifest)}, filepath.Base(options[len(options)-1]))
	for _, name := range files {
		size := fileSize(t, filepath.Join(clean, name))
		refused, whole := 0, 0
		step := 1
		if strings.HasPrefix(name, "OPTIONS") {
			step = 29 // a text file of settings: a sample of its bytes
		}
		tmp := t.TempDir()
		flipped := 0
		for i := 0; i < size; i += step {
			flipped++
			dir := filepath.Join(tmp, "state")
			if out, err := exec.Command("cp", "-a", clean, dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			path := filepath.Join(dir, name)
			b, _ := os.ReadFile(path)
			b[i] ^= 0x41
			os.WriteFile(path, b, 0o600)
			for _, ro := range []bool{true, false} {
				got, err := countAll(dir, ro)
				switch {
				case err != nil && strings.Contains(err.Error(), name):
					refused++
				case err != nil:
					t.Errorf("%s byte %d (read-only %v): %v, which does not name the file", name, i, ro, err)
				case got != n:
					t.Errorf("%s byte %d flipped (read-only %v): opened with %d of %d keys, without an error", name, i, ro, got, n)
				default:
					whole++
				}
			}
			os.RemoveAll(dir)
			if t.Failed() {
				t.FailNow()
			}
		}
		t.Logf("%s: %d of %d bytes flipped: %d opens refused naming the file, %d read every key", name, flipped, size, refused, whole)
		if strings.HasPrefix(name, "MANIFEST") && refused == 0 {
			t.Errorf("no flip in %s was refused", name)
		}
	}
}

func fileSize(t *testing.T, path string) int {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(info.Size())
}
