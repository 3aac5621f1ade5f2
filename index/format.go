package index

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/blevesearch/bleve/v2"
)

// An index records the format of what this package wrote into it, so that a sonda whose
// documents, fields or forward lists are laid out differently never reads another's as
// its own: misread forward lists or positions give wrong rankings and snippets without an
// error. The index is derived data (Replay rebuilds it from the store and the WARC files),
// so an index in a format this sonda no longer reads is made anew and rebuilt, as one whose
// creation never finished is; an index in a newer format than this sonda knows is left
// untouched (a newer sonda may still want it) and Open says how to go on.
//
// Formats:
//
//	1  Bleve/scorch, fields of fields.go, body and title positions without offsets,
//	   forward lists with one-byte lengths and frequencies (sonda of 2026-11-28). Indexes
//	   written before formats were recorded hold no format and are read as format 1.
//
// A change to what Put writes that an older reader would misread, or that this reader
// cannot read from an older index, raises formatVersion; one that old readers read
// correctly does not. oldestFormat is the oldest format this sonda reads.
const (
	formatVersion = 1
	oldestFormat  = 1
)

// keyFormat is the internal key that holds the index's format, in decimal.
var keyFormat = []byte("sonda:format")

// ErrFormat means the index is in a format this sonda does not read: written by a newer
// sonda, or (read-only) by an older one.
var ErrFormat = errors.New("index: the search index is in a format this sonda does not read")

// formatOf returns the format the index bi at dir was written in (1 when it records none).
func formatOf(dir string, bi bleve.Index) (int, error) {
	v, err := bi.GetInternal(keyFormat)
	if err != nil {
		return 0, fmt.Errorf("index: open %s: %w", dir, err)
	}
	if v == nil {
		return 1, nil
	}
	f, err := strconv.Atoi(string(v))
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%w: %s records its format as %q, not a number (damaged?): sonda repair makes the index anew from the crawl's records", ErrFormat, dir, v)
	}
	return f, nil
}

// formatProblem says whether this sonda can use the index at dir, in format f, as it is
// (nil), and if not, why, and whether the index is older than this sonda reads (so it may
// be made anew) or newer (so it must be left alone).
func formatProblem(dir string, f int) (older bool, err error) {
	switch {
	case f > formatVersion:
		return false, fmt.Errorf("%w: %s was written by a newer sonda (index format %d; this one reads formats %d to %d): use that sonda, or make the index anew with this one (sonda index rebuild)", ErrFormat, dir, f, oldestFormat, formatVersion)
	case f < oldestFormat:
		return true, fmt.Errorf("%w: %s was written by an older sonda (index format %d; this one reads formats %d to %d): sonda index rebuild, sonda crawl or sonda serve makes it anew from the crawl's records", ErrFormat, dir, f, oldestFormat, formatVersion)
	}
	return false, nil
}

// markFormat records this sonda's format in the index bi.
func markFormat(bi bleve.Index) error {
	return bi.SetInternal(keyFormat, []byte(strconv.Itoa(formatVersion)))
}
