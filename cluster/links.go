package cluster

import (
	"context"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
// grouped by the partition of their target, go to the outbox in the page's batch.
func (n *Node) Journal(d *crawl.Document, w store.Writer) error {
	links, update := linkgraph.DocumentLinks(d)
	if !update || len(links) == 0 {
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
	n.outMu.Lock()
	defer n.outMu.Unlock()
	for p, ls := range byPart {
		payload := encodeEdges(edgesMsg{Src: src, Run: n.run, Links: ls})
		if err := n.out.put(w, kindEdges, n.names.edges(p, key[:]), payload, fence{}); err != nil {
			return err
		}
		n.outCount.Add(1)
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
