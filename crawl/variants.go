package crawl

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// variantCounter is scope.VariantCounter on disk (prefix 't'), so trap guards keep their
// counts across restarts. Per path it stores each distinct query hash with its first-seen
// rank, and a count; it stops storing once the path is over its limit.
type variantCounter struct {
	db *pebble.DB
	mu sync.Mutex // AddVariant is a read-modify-write
}

func newVariantCounter(db *pebble.DB) *variantCounter { return &variantCounter{db: db} }

// AddVariant implements scope.VariantCounter.
func (v *variantCounter) AddVariant(pathKey string, variant uint64, limit int) (int, error) {
	countKey := append(append([]byte{'t'}, pathKey...), 0)
	varKey := binary.BigEndian.AppendUint64(append([]byte{}, countKey...), variant)
	v.mu.Lock()
	defer v.mu.Unlock()
	count, err := v.count(countKey)
	if err != nil {
		return 0, err
	}
	if val, closer, err := v.db.Get(varKey); err == nil {
		rank, _ := binary.Uvarint(val)
		closer.Close()
		return int(rank), nil
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return 0, err
	}
	if count > limit {
		return limit + 1, nil
	}
	count++
	b := v.db.NewBatch()
	defer b.Close()
	_ = b.Set(varKey, binary.AppendUvarint(nil, uint64(count)), nil)
	_ = b.Set(countKey, binary.AppendUvarint(nil, uint64(count)), nil)
	// Losing these in a crash only lets a trap path admit a few more variants.
	return count, b.Commit(pebble.NoSync)
}

func (v *variantCounter) count(key []byte) (int, error) {
	val, closer, err := v.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	n, _ := binary.Uvarint(val)
	return int(n), nil
}
