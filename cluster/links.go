package cluster

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// In-links across the cluster. Link ranking uses, for each page, how many pages link to
// it and with which anchor texts. A node crawls only its hosts, so the links to a page
// come from pages crawled all over the cluster: each page's links go, grouped by the
// partition of their target, to the state stream (one compacting subject per page and
// partition, so a page crawled again replaces what it said). A node records in its link
// graph the links to every partition it has ever fetched a page of, from the first one in
// the stream, and keeps following them: its index holds the pages it fetched while it
// owned a partition, also after the partition moved on, and those pages' in-links must
// count wherever they come from. A partition it served without fetching a page there
// (the first node up serves every partition until the others join) holds none of its
// pages: reading its links would cost it a link-graph write for every page linking there,
// for good, and count for nothing.

// InLinkGraph is where a node records the links that pages crawled anywhere in the
// cluster have to the hosts it owns (a *linkgraph.Sink, which also tells the search index
// whose anchors changed).
type InLinkGraph interface {
	SetLinksWhere(src string, links []linkgraph.Link, within func(dst string) bool) error
}

// ReceiveInLinks makes the node record in g the links routed to the partitions it serves.
// crawled says that the node's own crawler records in g the links of every page it
// fetches (g is one of its sinks): the node then skips the links this run of it sent,
// which g has already, rather than read them back. Call it before Run.
func (n *Node) ReceiveInLinks(g InLinkGraph, crawled bool) { n.inlinks, n.skipOwnEdges = g, crawled }

// Name implements crawl.Sink.
func (n *Node) Name() string { return "cluster" }

// Consume implements crawl.Sink: Journal did the work, in the page's batch.
func (n *Node) Consume(context.Context, *crawl.Document) error { return nil }

// Journal implements crawl.JournaledSink: the page's links (those the link graph counts),
// grouped by the partition of their target, go to the outbox in the page's batch. A page
// fetched again that no longer links into a partition it linked into before sends that
// partition an empty message, which replaces its old one there (see linkedBefore).
func (n *Node) Journal(d *crawl.Document, w store.Writer) error {
	links, update := linkgraph.DocumentLinks(d)
	if !update {
		return nil
	}
	src := d.Record.URL
	if !d.URL.IsZero() {
		src = d.URL.String()
	}
	byPart := map[int][]edgeLink{}
	for _, l := range links {
		host := urlnorm.HostOf(l.URL)
		if host == "" || l.URL == src {
			continue
		}
		p := n.partitionOf(host)
		byPart[p] = append(byPart[p], edgeLink{URL: l.URL, Anchor: l.Anchor})
	}
	key := linkgraph.KeyOf(src)
	again := d.Prev != nil || d.Item.Visits > 0 // the page may have sent links before
	if len(byPart) == 0 && !again {
		return nil
	}
	var epoch uint64 // 0: the lease's tenure ended, no record counts
	if f, ok := n.leaseFence(d.Item.Key, d.Item.Host); ok {
		epoch = f.epoch
	}
	parts := make([]int, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	var before []int
	known := false
	if again {
		before, known = n.linkedBefore(key, epoch)
	}
	n.outMu.Lock()
	defer n.outMu.Unlock()
	put := func(kind byte, subject string, payload []byte) error {
		n.outCount.Add(1)
		return n.out.put(w, kind, subject, payload, fence{})
	}
	for _, p := range parts {
		if err := put(kindEdges, n.names.edges(p, key[:]), encodeEdges(edgesMsg{Src: src, Run: n.run, Links: byPart[p]})); err != nil {
			return err
		}
	}
	none := encodeEdges(edgesMsg{Src: src, Run: n.run})
	switch {
	case known:
		for _, p := range before {
			if _, ok := byPart[p]; !ok {
				if err := put(kindEdges, n.names.edges(p, key[:]), none); err != nil {
					return err
				}
			}
		}
	case again:
		// Another node may have fetched the page since this one did, or none of its
		// fetches was recorded under the current tenure: the relay asks the state stream
		// which partitions hold a message of the page, and empties the others.
		if err := put(kindSweep, n.names.prefix()+"edges.*."+hex.EncodeToString(key[:]), encodeSweep(parts, none)); err != nil {
			return err
		}
	}
	return w.Set(keyLinked(key), appendLinked(epoch, parts), nil)
}

// keyLinked is where the node keeps the partitions a page linked into the last time it
// fetched it, and under which tenure of the page's partition (c e <page key>, see
// outbox.go; value: the tenure's epoch, 8 bytes, then the partitions, uvarints).
func keyLinked(k linkgraph.Key) []byte { return append([]byte("ce"), k[:]...) }

func appendLinked(epoch uint64, parts []int) []byte {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+2*len(parts)), epoch)
	for _, p := range parts {
		v = binary.AppendUvarint(v, uint64(p))
	}
	return v
}

// linkedBefore is the partitions the page of key linked into when this node last fetched
// it, if that record can be trusted: it was written under the tenure epoch, the one the
// page is fetched under now, so no other node fetched the page in between (a node fetches
// only pages of partitions it serves, and serving one opens a new epoch).
func (n *Node) linkedBefore(key linkgraph.Key, epoch uint64) ([]int, bool) {
	if epoch == 0 {
		return nil, false
	}
	v, closer, err := n.db.Get(keyLinked(key))
	if err != nil {
		return nil, false
	}
	defer closer.Close()
	if len(v) < 8 || binary.BigEndian.Uint64(v) != epoch {
		return nil, false
	}
	var parts []int
	for r := v[8:]; len(r) > 0; {
		p, k := binary.Uvarint(r)
		if k <= 0 {
			return nil, false
		}
		parts, r = append(parts, int(p)), r[k:]
	}
	return parts, true
}

// encodeSweep is the payload of a kindSweep record: the partitions the page links into
// now, then the empty links message to send the others.
func encodeSweep(keep []int, none []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(keep)))
	for _, p := range keep {
		b = binary.AppendUvarint(b, uint64(p))
	}
	return append(b, none...)
}

func decodeSweep(b []byte) (keep map[int]bool, none []byte, err error) {
	r := wireReader{b: b}
	keep = map[int]bool{}
	for range r.count() {
		keep[int(r.uvarint())] = true
	}
	if r.err != nil || len(r.b) == 0 {
		return nil, nil, errors.New("cluster: corrupt links sweep record")
	}
	return keep, r.b, nil
}

// sweep carries out a kindSweep record m: every partition whose subject holds a links
// message of the page, other than those it links into now, gets the empty message. The
// relay runs it before it publishes any record after it (the page's next messages among
// them), and again if it fails: an empty message sent twice is harmless.
func (n *Node) sweep(ctx context.Context, m outMsg) error {
	keep, none, err := decodeSweep(m.payload)
	if err != nil {
		n.log.Warn("dropping a corrupt outbox record", "error", err)
		return nil
	}
	n.sweeps.Add(1)
	info, err := n.state.Info(ctx, jetstream.WithSubjectFilter(m.subject))
	if err != nil {
		return jsError("list a page's links messages", err)
	}
	edges := n.names.prefix() + "edges."
	for subj := range info.State.Subjects {
		ps, _, _ := strings.Cut(strings.TrimPrefix(subj, edges), ".")
		p, err := strconv.Atoi(ps)
		if err != nil || keep[p] {
			continue
		}
		if _, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: none}, jetstream.WithMsgID(m.id+"-"+ps)); err != nil {
			return jsError("empty a page's old links", err)
		}
	}
	return nil
}

// follower reads the links routed to one partition into the in-link graph.
type follower struct {
	cons    jetstream.Consumer // nil until it is created
	applied uint64             // stream sequence of the last message recorded
}

// keyFollowed marks, in the node's database, a partition whose links it records: one it
// served once (store prefix 'c', see outbox.go).
func keyFollowed(p int) []byte { return binary.BigEndian.AppendUint32([]byte("cf"), uint32(p)) }

// followed lists the partitions this node served in earlier runs.
func (n *Node) followed() []int {
	it, err := n.db.NewIter(&pebble.IterOptions{LowerBound: []byte("cf"), UpperBound: store.PrefixEnd([]byte("cf"))})
	if err != nil {
		return nil
	}
	defer it.Close()
	var ps []int
	for it.First(); it.Valid(); it.Next() {
		if k := it.Key(); len(k) == 6 {
			if p := int(binary.BigEndian.Uint32(k[2:])); p < n.nparts {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// fetchedIn is told, in the batch b of each page this node fetched, the page's partition
// p. The first page there makes the node record the links routed to p (those sent before
// too: a follower reads them from the first), and marks p in b, with the page, so that
// the node follows p again when it restarts.
func (n *Node) fetchedIn(b *pebble.Batch, p int) error {
	if n.inlinks == nil {
		return nil
	}
	n.mu.Lock()
	ctx, on := n.runCtx, n.follows[p] != nil
	n.mu.Unlock()
	if on {
		return nil
	}
	if err := b.Set(keyFollowed(p), nil, nil); err != nil {
		return err
	}
	if ctx != nil {
		n.follow(ctx, p)
	}
	return nil
}

// follow starts recording the links routed to p, for as long as ctx (the node's run)
// lasts, once per partition.
func (n *Node) follow(ctx context.Context, p int) {
	if n.inlinks == nil {
		return
	}
	n.mu.Lock()
	if n.follows[p] != nil {
		n.mu.Unlock()
		return
	}
	f := &follower{}
	n.follows[p] = f
	n.mu.Unlock()
	n.tenures.Go(func() { n.followEdges(ctx, p, f) })
}

// followEdges records in the in-link graph the links routed to p, from the first (the
// last each page sent) until ctx ends.
func (n *Node) followEdges(ctx context.Context, p int, f *follower) {
	within := func(dst string) bool {
		h := urlnorm.HostOf(dst)
		return h != "" && n.partitionOf(h) == p
	}
	subj := n.names.prefix() + "edges." + strconv.Itoa(p) + ".>"
	for ctx.Err() == nil {
		cons, err := n.state.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subj}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
		})
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		n.mu.Lock()
		f.cons = cons
		n.mu.Unlock()
		it, err := cons.Messages()
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		stop := context.AfterFunc(ctx, it.Stop)
		for {
			m, err := it.Next()
			if err != nil {
				break
			}
			e, err := decodeEdges(m.Data())
			switch {
			case err != nil:
				n.log.Warn("skipping links this node cannot read", "subject", m.Subject(), "error", err)
			case n.skipOwnEdges && e.Run == n.run:
				// This run's crawler recorded them when it fetched the page. A later run
				// (a restart, perhaps on an empty disk) records them from here.
			default:
				links := make([]linkgraph.Link, len(e.Links))
				for i, l := range e.Links {
					links[i] = linkgraph.Link{URL: l.URL, Anchor: l.Anchor}
				}
				if err := n.inlinks.SetLinksWhere(e.Src, links, within); err != nil {
					n.log.Warn("recording links from another node failed", "from", e.Src, "error", err)
				}
			}
			if meta, err := m.Metadata(); err == nil {
				n.mu.Lock()
				f.applied = meta.Sequence.Stream
				n.mu.Unlock()
			}
		}
		stop()
		it.Stop()
	}
}

// edgesCaughtUp says this node recorded all the links routed so far to the partitions it
// follows.
func (n *Node) edgesCaughtUp(ctx context.Context) bool {
	if n.inlinks == nil {
		return true
	}
	n.mu.Lock()
	fs := make([]*follower, 0, len(n.follows))
	for _, f := range n.follows {
		fs = append(fs, f)
	}
	n.mu.Unlock()
	for _, f := range fs {
		n.mu.Lock()
		c, applied := f.cons, f.applied
		n.mu.Unlock()
		if c == nil {
			return false
		}
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := c.Info(ictx)
		cancel()
		// Nothing left on the server, and all it delivered recorded here.
		if err != nil || info.NumPending > 0 || info.Delivered.Stream > applied {
			return false
		}
	}
	return true
}

// waitEdges waits, up to d, until the in-link graph recorded what was routed to this
// node's partitions: before it hands them over at the end of a crawl.
func (n *Node) waitEdges(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for !n.edgesCaughtUp(ctx) && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 20*time.Millisecond)
	}
}
