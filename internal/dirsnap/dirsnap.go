// Package dirsnap records the state of a directory tree (every file's content hash, mode,
// size and modification time) so that a test can prove a command changed no byte of it,
// such as a read-only command run on a data directory.
package dirsnap

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Snapshot maps each path under a directory to a description of its state.
type Snapshot map[string]string

// Take walks dir and describes every file and directory in it.
func Take(dir string) (Snapshot, error) {
	out := Snapshot{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		var sum [32]byte
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum = sha256.Sum256(data)
		}
		out[path] = fmt.Sprintf("%x %v %d %d", sum, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return out, err
}

// Diff lists, sorted, the paths added, removed or changed from s to later.
func (s Snapshot) Diff(later Snapshot) []string {
	var diffs []string
	for p, h := range s {
		if a, ok := later[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if a != h {
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range later {
		if _, ok := s[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	sort.Strings(diffs)
	return diffs
}
