package frontier

import (
	"encoding/binary"
	"math"
)

// Key layout (all under prefixes this package owns in the store, see package store):
//
//	q n <host> 0x00 <^priority:8> <seq:8>   new URLs of a host, highest priority first, then FIFO
//	q r <host> 0x00 <due:8> <seq:8>         scheduled fetches (revisits, retries), earliest first
//	s <url key:16>                          seen set: every URL ever admitted
//	h <host>                                host record: counts and politeness state
//	m <name>                                counters
//
// Host keys never contain 0x00, so a host's queue is exactly the range of keys that start
// with its prefix and the 0x00 separator.

const (
	queueNew     = 'n'
	queueRevisit = 'r'
)

var (
	prefixSeen = []byte{'s'}
	prefixHost = []byte{'h'}
	keySeq     = []byte("mseq")
	keySeen    = []byte("mseen")
)

func queuePrefix(queue byte, host string) []byte {
	b := make([]byte, 0, 3+len(host)+16)
	b = append(b, 'q', queue)
	b = append(b, host...)
	return append(b, 0)
}

// newKey orders by descending priority, then by admission order.
func newKey(host string, priority float64, seq uint64) []byte {
	b := queuePrefix(queueNew, host)
	b = binary.BigEndian.AppendUint64(b, ^orderedFloat(priority))
	return binary.BigEndian.AppendUint64(b, seq)
}

// revisitKey orders by due time, then by admission order.
func revisitKey(host string, dueUnixNano int64, seq uint64) []byte {
	b := queuePrefix(queueRevisit, host)
	if dueUnixNano < 0 {
		dueUnixNano = 0
	}
	b = binary.BigEndian.AppendUint64(b, uint64(dueUnixNano))
	return binary.BigEndian.AppendUint64(b, seq)
}

// keyOrder is the 8 bytes after the host prefix: encoded priority or due time.
func keyOrder(key []byte, prefixLen int) uint64 {
	if len(key) < prefixLen+8 {
		return 0
	}
	return binary.BigEndian.Uint64(key[prefixLen:])
}

// orderedFloat maps a float64 to a uint64 whose unsigned order is the float order.
func orderedFloat(p float64) uint64 {
	if math.IsNaN(p) {
		p = 0
	}
	b := math.Float64bits(p)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func floatFromOrdered(u uint64) float64 {
	if u>>63 == 1 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

func seenKey(k [16]byte) []byte {
	return append(append(make([]byte, 0, 17), prefixSeen...), k[:]...)
}

func hostKey(host string) []byte {
	return append(append(make([]byte, 0, 1+len(host)), prefixHost...), host...)
}

// keyAfter is the smallest key strictly greater than k.
func keyAfter(k []byte) []byte {
	return append(append(make([]byte, 0, len(k)+1), k...), 0)
}
