package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/store"
)

// The outbox lives in the node's Pebble database under prefix 'c' (see package store):
//
//	c o <seq:8>   a message to publish: kind, written at (unix ns, 8 bytes), [state records:
//	              partition (4 bytes) and the owner's epoch there (8 bytes)], subject, 0, payload
//	c n           a sequence number used: at least that of every record relayed (the relay
//	              writes it with its deletions, not every record with itself)
//	c f <p:4>     a partition whose routed links the node records in its link graph (links.go)
//	c m <page:16> <p:4> a page's links into partition p in the earlier format, while they
//	              are turned into one message per page (oldedges.go)
//	c w, c u      which volunteer worker delivered a page (package cluster/volunteer, ledger.go)
//
// Records are written in the batch that completes a page, so a page and what it found are
// committed together, and deleted once JetStream acknowledged them.

var (
	prefixOutbox = []byte("co")
	keyOutboxSeq = []byte("cn")
)

const (
	kindLink  = 'l' // a URL for its owner's admission
	kindState = 's' // the state of a URL or the rest of a host (dropped at restart)
	kindEdges = 'e' // a page's links, with their anchors
	// kindSweep: the earlier format's look-up of a page's old links (oldedges.go); an
	// outbox that holds one is turned into the current format when it is opened.
	kindSweep = 'x'
)

type outbox struct {
	node string
	seq  uint64
	// open holds, for each lease whose page batch got records and may not be committed
	// yet, the lowest number its records can have. Records are numbered when they are put
	// in a batch, but batches commit in their own order: a record numbered below one the
	// relay already saw may still appear, and the relay must start at or below it.
	open map[[16]byte]uint64
}

// opened notes that the batch of the lease of key is about to get records.
func (o *outbox) opened(key [16]byte) {
	if _, ok := o.open[key]; !ok {
		o.open[key] = o.seq + 1
	}
}

// closed notes that the batch of the lease of key was committed or dropped.
func (o *outbox) closed(key [16]byte) {
	delete(o.open, key)
}

// low is the lowest number a record not yet committed can have: every record numbered
// below it is committed (or was dropped with its batch), so a reader that starts after
// this call sees all of those.
func (o *outbox) low() uint64 {
	low := o.seq + 1
	for _, s := range o.open {
		low = min(low, s)
	}
	return low
}

// outboxKey is the key of record seq.
func outboxKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixOutbox...), seq)
}

func openOutbox(db *pebble.DB, node string) (*outbox, int, error) {
	o := &outbox{node: node, open: map[[16]byte]uint64{}}
	v, closer, err := db.Get(keyOutboxSeq)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, 0, fmt.Errorf("cluster: read outbox counter: %w", err)
	default:
		o.seq, _ = binary.Uvarint(v)
		closer.Close()
	}
	// State records a crashed node left unrelayed are stale: its hosts were taken over and
	// rebuilt without them (their pages are fetched again). Links are still good; pages'
	// links in the earlier format are turned into the current one (convertOutbox).
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefixOutbox, UpperBound: store.PrefixEnd(prefixOutbox)})
	if err != nil {
		return nil, 0, err
	}
	b := db.NewBatch()
	defer b.Close()
	n := 0
	var legacy []outMsg
	if it.Last() && len(it.Key()) == len(prefixOutbox)+8 {
		// The counter is written when records are relayed: never number a record below
		// one kept. A number of a record relayed and deleted before the counter reached it
		// may be used again, which is harmless: a message id also holds the time its
		// record was written (decode).
		o.seq = max(o.seq, binary.BigEndian.Uint64(it.Key()[len(prefixOutbox):]))
	}
	for it.First(); it.Valid(); it.Next() {
		v := it.Value()
		if len(v) > 0 && v[0] == kindState {
			_ = b.Delete(it.Key(), nil)
			continue
		}
		if len(v) > 0 && (v[0] == kindEdges || v[0] == kindSweep) {
			if m, err := o.decode(it.Key(), v); err == nil && isOldEdges(m) {
				legacy = append(legacy, m)
				_ = b.Delete(it.Key(), nil)
				continue
			}
		}
		n++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, 0, fmt.Errorf("cluster: read outbox: %w", err)
	}
	added, err := o.convertOutbox(b, legacy)
	if err != nil {
		return nil, 0, err
	}
	n += added
	// The earlier format's record of the partitions each page linked into (c e <page>).
	if err := b.DeleteRange([]byte("ce"), []byte("cf"), nil); err != nil {
		return nil, 0, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, 0, err
	}
	return o, n, nil
}

// fence is what a state record is published under: its partition and the sequence of the
// owner's epoch message there when it was written (see Node.openEpoch). JetStream refuses
// the record once another node opened a later epoch.
type fence struct {
	part  int
	epoch uint64
}

// put adds a message to b; f is required for kindState and ignored otherwise. Callers
// serialize puts (Node.outMu).
func (o *outbox) put(b store.Writer, kind byte, subject string, payload []byte, f fence) error {
	o.seq++
	k := outboxKey(o.seq)
	v := make([]byte, 0, 22+len(subject)+len(payload))
	v = append(v, kind)
	v = binary.BigEndian.AppendUint64(v, uint64(time.Now().UnixNano()))
	if kind == kindState {
		v = binary.BigEndian.AppendUint32(v, uint32(f.part))
		v = binary.BigEndian.AppendUint64(v, f.epoch)
	}
	v = append(v, subject...)
	v = append(v, 0)
	v = append(v, payload...)
	return b.Set(k, v, nil)
}

// saveSeq records the last number used in b (the relay's batch of deletions): once per
// relay round rather than with every record, which would write a key to the node's
// database for each. Callers hold Node.outMu.
func (o *outbox) saveSeq(b *pebble.Batch) error {
	return b.Set(keyOutboxSeq, binary.AppendUvarint(nil, o.seq), nil)
}

// outMsg is one outbox record read back for publishing.
type outMsg struct {
	key     []byte
	seq     uint64
	id      string // JetStream message id: node and sequence, never reused
	kind    byte
	subject string
	payload []byte
	written time.Time // when the page that found it was committed
	fence   fence     // state records
}

func (o *outbox) decode(k, v []byte) (outMsg, error) {
	if len(v) < 10 || len(k) != len(prefixOutbox)+8 {
		return outMsg{}, errors.New("cluster: corrupt outbox record")
	}
	written := time.Unix(0, int64(binary.BigEndian.Uint64(v[1:9])))
	rest := v[9:]
	var f fence
	if v[0] == kindState {
		if len(rest) < 12 {
			return outMsg{}, errors.New("cluster: corrupt outbox record")
		}
		f = fence{part: int(binary.BigEndian.Uint32(rest[:4])), epoch: binary.BigEndian.Uint64(rest[4:12])}
		rest = rest[12:]
	}
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return outMsg{}, errors.New("cluster: corrupt outbox record")
	}
	seq := binary.BigEndian.Uint64(k[len(prefixOutbox):])
	// The id names the record, not only its number: after a crash the counter may run
	// behind numbers already published (the last batches were not yet on disk, or
	// committed out of order), and JetStream drops a new message that reuses an id of the
	// last two minutes as a duplicate. The time the record was written tells them apart,
	// and stays the same when the same record is published again.
	return outMsg{key: append([]byte(nil), k...), seq: seq, id: fmt.Sprintf("%s-%d-%x", o.node, seq, uint64(written.UnixNano())), kind: v[0],
		subject: string(rest[:i]), payload: append([]byte(nil), rest[i+1:]...), written: written, fence: f}, nil
}
