package cluster

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/store"
)

// Links in the earlier format. Until session 27, a page's links went to the state stream
// as one message per partition of their targets (edges.<partition>.<page key>), and a
// page fetched again sent an empty message to each partition it no longer linked into
// (kindSweep records asked the stream which partitions held one). The union of a page's
// last messages over the partitions was its links at its last fetch. A cluster's streams
// and a node's outbox may still hold that format: both are turned into one message per
// page (edges.<page key>) before anything reads them. A node turns the stream's once, when
// it starts: upgrade a cluster's nodes together, since a node of the earlier format still
// running writes messages that the others no longer read.

// keyMigrating holds, while migrateEdges runs, a page's links into one partition read
// from the earlier format (store prefix 'c', see outbox.go): c m <page key:16> <partition:4>.
func keyMigrating(page []byte, p int) []byte {
	return binary.BigEndian.AppendUint32(append([]byte("cm"), page...), uint32(p))
}

// migrateEdges turns the links the state stream holds in the earlier format into one
// message per page (the union of the page's messages), then deletes them. A page that has
// a message of its own already (fetched since by a node of this format) keeps it: it is
// newer. It runs once per node, before the node reads or ranks the links; several nodes
// may run it at once, and one that stopped half-way is run again: the publishes expect an
// empty subject, and the deletion comes after every page has its message.
//
// The earlier format's messages are read into the node's database (prefix c m) and
// merged from there, so a large graph takes disk, not memory.
func (n *Node) migrateEdges(ctx context.Context) error {
	if n.edgesNew.Load() {
		return nil
	}
	n.migrateMu.Lock()
	defer n.migrateMu.Unlock()
	if n.edgesNew.Load() {
		return nil
	}
	old := n.names.partEdges()
	switch _, err := n.state.GetLastMsgForSubject(ctx, old); {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		n.edgesNew.Store(true)
		return nil
	case err != nil:
		return jsError("look for links in the earlier format", err)
	}
	lo := []byte("cm")
	hi := store.PrefixEnd(lo)
	if err := n.db.DeleteRange(lo, hi, pebble.NoSync); err != nil { // a run that stopped half-way
		return err
	}
	read, err := n.readOldEdges(ctx, old)
	if err != nil {
		return err
	}
	sent, err := n.publishMigrated(ctx, lo, hi)
	if err != nil {
		return err
	}
	if err := n.state.Purge(ctx, jetstream.WithPurgeSubject(old)); err != nil {
		return jsError("delete the links in the earlier format", err)
	}
	if err := n.db.DeleteRange(lo, hi, pebble.NoSync); err != nil {
		return err
	}
	n.log.Info("turned the links of an earlier sonda into one message per page", "messages", read, "pages", sent)
	n.edgesNew.Store(true)
	return nil
}

// readOldEdges copies the last message of every subject matching old (the earlier
// format's) into the node's database, by page and partition.
func (n *Node) readOldEdges(ctx context.Context, old string) (int, error) {
	cons, err := n.state.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{old}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return 0, jsError("read the links in the earlier format", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return 0, jsError("read the links in the earlier format", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	b := n.db.NewBatch()
	defer func() { b.Close() }()
	edges := n.names.prefix() + "edges."
	read := 0
	for {
		m, err := it.Next()
		if err != nil {
			return 0, jsError("read the links in the earlier format", err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return 0, err
		}
		ps, ks, _ := strings.Cut(strings.TrimPrefix(m.Subject(), edges), ".")
		p, perr := strconv.Atoi(ps)
		page, kerr := hex.DecodeString(ks)
		if perr == nil && kerr == nil && len(page) == 16 && p >= 0 {
			if err := b.Set(keyMigrating(page, p), m.Data(), nil); err != nil {
				return 0, err
			}
			read++
		}
		if b.Len() >= 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return 0, err
			}
			b.Close()
			b = n.db.NewBatch()
		}
		if meta.NumPending == 0 {
			return read, b.Commit(pebble.NoSync)
		}
	}
}

// publishMigrated publishes, for every page in the node's database between lo and hi
// (keyMigrating), one message with the links of all its partitions, unless the page's
// subject holds one already.
func (n *Node) publishMigrated(ctx context.Context, lo, hi []byte) (int, error) {
	it, err := n.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var futures []jetstream.PubAckFuture
	settle := func() error {
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				if !fencedOut(err) { // fenced: the page has a message of this format already
					return jsError("publish the links of a page", err)
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		futures = futures[:0]
		return nil
	}
	var page []byte
	var msg edgesMsg
	sent := 0
	flush := func() error {
		if page == nil || msg.Src == "" {
			return nil
		}
		f, err := n.js.PublishAsync(n.names.edges(page), encodeEdges(msg), jetstream.WithExpectLastSequencePerSubject(0))
		if err != nil {
			return jsError("publish the links of a page", err)
		}
		futures = append(futures, f)
		sent++
		if len(futures) >= 256 {
			return settle()
		}
		return nil
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(lo)+16+4 {
			continue
		}
		if p := k[len(lo) : len(lo)+16]; string(p) != string(page) {
			if err := flush(); err != nil {
				return 0, err
			}
			page, msg = append([]byte(nil), p...), edgesMsg{}
		}
		e, err := decodeEdges(it.Value())
		if err != nil {
			n.log.Warn("skipping links in the earlier format this node cannot read", "page", hex.EncodeToString(page), "error", err)
			continue
		}
		msg.Src = e.Src // the run is left out: no running node sent them
		msg.Links = append(msg.Links, e.Links...)
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	return sent, settle()
}

// convertOutbox turns the outbox records of a page's links in the earlier format (legacy,
// in the outbox's order, already deleted from b by the caller) into records of one
// message per page, put in b; it returns how many. A page's records of one fetch are
// consecutive (Journal wrote them under outMu): a record of another page, a partition
// met twice, a gap in the numbers or a sweep record ends a fetch's group. The sweeps
// themselves are dropped: a page's one message replaces all it said before.
func (o *outbox) convertOutbox(b store.Writer, legacy []outMsg) (int, error) {
	var (
		subject string
		parts   map[string]bool
		msg     edgesMsg
		last    uint64
		put     int
	)
	flush := func() error {
		if subject == "" {
			return nil
		}
		put++
		err := o.put(b, kindEdges, subject, encodeEdges(msg), fence{})
		subject = ""
		return err
	}
	for _, m := range legacy {
		base, part, page, ok := splitOldEdges(m.subject)
		if m.kind == kindSweep || !ok {
			if err := flush(); err != nil {
				return 0, err
			}
			continue
		}
		e, err := decodeEdges(m.payload)
		if err != nil {
			continue // the relay would have dropped it too
		}
		if subject != base+page || parts[part] || m.seq != last+1 {
			if err := flush(); err != nil {
				return 0, err
			}
			subject, parts, msg = base+page, map[string]bool{}, edgesMsg{Src: e.Src, Run: e.Run}
		}
		parts[part] = true
		msg.Links = append(msg.Links, e.Links...)
		last = m.seq
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return put, nil
}

// splitOldEdges splits a subject of the earlier format, <prefix>edges.<partition>.<page
// key>, into <prefix>edges., the partition and the page key.
func splitOldEdges(subject string) (base, part, page string, ok bool) {
	i := strings.Index(subject, ".edges.")
	if i < 0 {
		return "", "", "", false
	}
	base = subject[:i+len(".edges.")]
	part, page, ok = strings.Cut(subject[len(base):], ".")
	if !ok || strings.Contains(page, ".") {
		return "", "", "", false
	}
	if _, err := strconv.Atoi(part); err != nil {
		return "", "", "", false
	}
	return base, part, page, true
}

// isOldEdges says an outbox record is one of the earlier format's links records.
func isOldEdges(m outMsg) bool {
	if m.kind == kindSweep {
		return true
	}
	_, _, _, ok := splitOldEdges(m.subject)
	return m.kind == kindEdges && ok
}
