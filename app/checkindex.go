package app

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/sonda-search/sonda/index"
)

// checkIndex verifies the search index of data, if there is one, and returns what is
// damaged: an index that does not open, a segment file (*.zap) whose checksum (the
// CRC-32 its last four bytes hold over the rest) does not match, a bolt file that fails
// bolt's own consistency check. Bleve reads neither checksum: a flipped byte in a segment
// silently changes what searches find. sonda repair rebuilds a damaged index.
func checkIndex(data string) []string {
	dir := index.DataDir(data)
	if _, err := os.Stat(dir); err != nil {
		return nil // no index (search.index off): nothing to check
	}
	var problems []string
	if ix, err := index.Open(dir, index.Options{ReadOnly: true}); err != nil {
		problems = append(problems, fmt.Sprintf("index: %v", err))
	} else {
		ix.Close()
	}
	segments, _ := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	for _, s := range segments {
		b, err := os.ReadFile(s)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("index: %v", err))
		case len(b) < 4 || crc32.ChecksumIEEE(b[:len(b)-4]) != binary.BigEndian.Uint32(b[len(b)-4:]):
			problems = append(problems, fmt.Sprintf("index: %s does not match its checksum", s))
		}
	}
	bolts, _ := filepath.Glob(filepath.Join(dir, "store", "*.bolt"))
	for _, path := range bolts {
		if err := checkBolt(path); err != nil {
			problems = append(problems, fmt.Sprintf("index: %s: %v", path, err))
		}
	}
	return problems
}

// checkBolt reads every bucket, key and value of the bolt file at path, opened
// read-only. (bolt's own Check panics in a goroutine of its own on some damaged pages,
// which cannot be recovered; a damaged page met here panics in this one.)
func checkBolt(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged: %v", r)
		}
	}()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	var walk func(b *bbolt.Bucket) error
	walk = func(b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					return walk(nb)
				}
			}
			return nil
		})
	}
	return db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return walk(b) })
	})
}
