package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/cockroachdb/pebble/v2"
)

const (
	prefixExact = 'x'
	prefixNear  = 'n'

	// NearDistance is the largest Hamming distance between two 64-bit SimHashes that
	// still counts as a near duplicate.
	NearDistance = 3
	// maxBandScan bounds the entries read per band when looking for near duplicates, so a
	// band value shared by very many pages (e.g. empty pages) cannot make a lookup slow.
	maxBandScan = 512
)

// Duplicates is the answer of CheckDuplicates: the URLs a page duplicates, if any.
type Duplicates struct {
	ExactOf string // first URL seen with the same text fingerprint
	NearOf  string // a URL whose SimHash is within NearDistance bits
}

// CheckDuplicates looks up pages with the same text fingerprint or a SimHash within
// NearDistance bits, then registers this page under both, so later pages find it. A page
// never duplicates itself, which keeps a refetch after a crash from flagging the page.
//
// Near duplicates are found with the pigeonhole argument: two 64-bit hashes that differ in at
// most 3 bits agree exactly on at least one of their four 16-bit bands, so each page is
// indexed under its four bands and a lookup scans four short key ranges.
//
// Lookup and registration are serialized by the caller's choice of lock (the crawl holds
// one); they commit immediately because concurrent pages must see each other.
func (db *DB) CheckDuplicates(key URLKey, url string, fingerprint []byte, simhash uint64) (Duplicates, error) {
	var d Duplicates
	b := db.pdb.NewBatch()
	defer b.Close()

	if len(fingerprint) > 0 {
		xk := append([]byte{prefixExact}, fingerprint...)
		v, closer, err := db.pdb.Get(xk)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			if err := b.Set(xk, append(key[:], url...), nil); err != nil {
				return d, err
			}
		case err != nil:
			return d, fmt.Errorf("store: exact-duplicate lookup: %w", err)
		default:
			if len(v) >= 16 && [16]byte(v[:16]) != key {
				d.ExactOf = string(v[16:])
			}
			closer.Close()
		}
	}

	var mine [4][]byte
	var it *pebble.Iterator
	for band := 0; band < 4; band++ {
		mine[band] = nearKey(band, simhash, key)
		if d.NearOf != "" || d.ExactOf != "" {
			continue
		}
		prefix := mine[band][:4]
		var err error
		if it == nil {
			it, err = db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: PrefixEnd(prefix)})
			if err != nil {
				return d, fmt.Errorf("store: near-duplicate lookup: %w", err)
			}
		} else {
			it.SetBounds(prefix, PrefixEnd(prefix))
		}
		n := 0
		for it.First(); it.Valid() && n < maxBandScan; it.Next() {
			n++
			k := it.Key()
			other := binary.BigEndian.Uint64(k[4:12])
			if bits.OnesCount64(other^simhash) <= NearDistance && [16]byte(k[12:28]) != key {
				d.NearOf = string(it.Value())
				break
			}
		}
		if err := it.Error(); err != nil {
			it.Close()
			return d, fmt.Errorf("store: near-duplicate lookup: %w", err)
		}
	}
	if it != nil {
		if err := it.Close(); err != nil {
			return d, fmt.Errorf("store: near-duplicate lookup: %w", err)
		}
	}
	for _, k := range mine {
		if err := b.Set(k, []byte(url), nil); err != nil {
			return d, err
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return d, fmt.Errorf("store: register duplicates: %w", err)
	}
	return d, nil
}

// nearKey is n | band | 16-bit band value | simhash | URL key.
func nearKey(band int, h uint64, key URLKey) []byte {
	b := make([]byte, 0, 4+8+16)
	b = append(b, prefixNear, byte(band))
	b = binary.BigEndian.AppendUint16(b, uint16(h>>(16*band)))
	b = binary.BigEndian.AppendUint64(b, h)
	return append(b, key[:]...)
}
