package cluster

import (
	"context"
	"encoding/binary"
	"slices"
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
// come from pages crawled all over the cluster: each page's links go to the state stream
// as one message on a compacting subject of the page's own (edges.<page key>), so a page
// crawled again replaces what it said, wherever it was crawled. A node records in its link
// graph the links into every partition it has ever fetched a page of, from the first
// message in the stream, and keeps following them: its index holds the pages it fetched
// while it owned a partition, also after the partition moved on, and those pages'
// in-links must count wherever they come from. A partition it served without fetching a
// page there (the first node up serves every partition until the others join) holds none
// of its pages: recording its links would cost it a link-graph write for every page
// linking there, for good, and count for nothing.
//
// One ordered consumer per node reads every page's message (edgeFollow) and records the
// links into the partitions it follows. Starting to follow one more partition replays
// the stream from its first message for that partition alone: the consumer starts again
// from the first message of each page, and records, of the messages it had read before,
// only the links into the new partitions.
//
// An earlier sonda sent a page's links as one message per partition they went into
// (edges.<partition>.<page key>), and an empty one to each partition a page fetched again
// stopped linking into (a sweep). A node that finds such messages in the state stream
// turns each page's into one message of its own and deletes them (migrateEdges), before
// it reads the links or ranks them; records of that format left in its outbox are turned
// so when it opens the outbox (openOutbox).

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

// Journal implements crawl.JournaledSink: the page's links (those the link graph counts)
// go to the outbox in the page's batch, as one message on the page's subject, which
// replaces what the page said before: a page fetched again that no longer links somewhere
// takes its old links there out of every node's graph by itself.
func (n *Node) Journal(d *crawl.Document, w store.Writer) error {
	links, update := linkgraph.DocumentLinks(d)
	if !update {
		return nil
	}
	src := d.Record.URL
	if !d.URL.IsZero() {
		src = d.URL.String()
	}
	out := make([]edgeLink, 0, len(links))
	for _, l := range links {
		if l.URL == src || urlnorm.HostOf(l.URL) == "" {
			continue
		}
		out = append(out, edgeLink{URL: l.URL, Anchor: l.Anchor})
	}
	first := d.Prev == nil && d.Item.Visits == 0
	if len(out) == 0 && first {
		return nil // a first fetch that links nowhere: nothing to say, nothing to replace
	}
	key := linkgraph.KeyOf(src)
	n.outMu.Lock()
	defer n.outMu.Unlock()
	n.outCount.Add(1)
	return n.out.put(w, kindEdges, n.names.edges(key[:]), encodeEdges(edgesMsg{Src: src, Run: n.run, Links: out, First: first}), fence{})
}

// edgeFollow is the node's one follower of the pages' links (fields under Node.mu).
type edgeFollow struct {
	started  bool
	cons     jetstream.Consumer // the current consumer; nil until it is created
	covers   map[int]bool       // the partitions it records: those followed when it was created
	recorded uint64             // stream sequence of the last message it recorded
	stop     func()             // ends its reading, to start again with the partitions followed since
	// replaying: it is reading the stream from the start for partitions followed late; one
	// followed meanwhile waits until it is done rather than start it again.
	replaying bool
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
	ctx, on := n.runCtx, n.follows[p]
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
	if n.follows[p] {
		n.mu.Unlock()
		return
	}
	n.follows[p] = true
	start := !n.edges.started
	n.edges.started = true
	stop := n.edges.stop
	if n.edges.replaying {
		stop = nil // the follower starts again for p once its replay is done
	}
	n.mu.Unlock()
	switch {
	case start:
		n.tenures.Go(func() { n.followEdges(ctx) })
	case stop != nil:
		stop() // the follower starts again, replaying the stream for p
	}
}

// followEdges records in the in-link graph the links into the partitions this node
// follows, from the first (the last message of each page) until ctx ends. It reads every
// page's message in the order the stream stored them, with one consumer: through
// sequence upto, it recorded the links into every partition in done. Partitions followed
// since (fresh) need the stream from its start: the consumer starts again at the last
// message of each page, and records the links into fresh partitions alone up to upto
// (the others have them), into all of them after it. Partitions followed during a replay
// wait for its end, then get one replay together: a replay reads every page's message.
func (n *Node) followEdges(ctx context.Context) {
	done := map[int]bool{}
	var upto uint64
	for ctx.Err() == nil {
		if err := n.migrateEdges(ctx); err != nil {
			n.log.Warn("turning the links of an earlier sonda into one message per page failed; retrying", "error", err)
			sleep(ctx, n.tick())
			continue
		}
		n.mu.Lock()
		fresh, covers := map[int]bool{}, map[int]bool{}
		virgin := true // no fresh partition was followed in an earlier run
		for p := range n.follows {
			covers[p] = true
			if !done[p] {
				fresh[p] = true
				virgin = virgin && !n.followedEarlier[p]
			}
		}
		n.mu.Unlock()
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{n.names.allEdges()}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}
		if len(fresh) == 0 && upto > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, upto+1
		}
		cons, err := n.state.OrderedConsumer(ctx, cfg)
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		it, err := cons.Messages()
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
			merge(done, fresh) // nothing to replay
		}
		// replayed says whether the replay is over, and ends the reading if partitions were
		// followed meanwhile (so that the follower starts again with them).
		replayed := func() bool {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.edges.replaying = len(fresh) > 0
			if !n.edges.replaying && len(n.follows) != len(covers) {
				it.Stop()
			}
			return !n.edges.replaying
		}
		n.mu.Lock()
		n.edges.cons, n.edges.covers, n.edges.stop = cons, covers, it.Stop
		n.mu.Unlock()
		replaying := !replayed()
		stop := context.AfterFunc(ctx, it.Stop)
		replayTo := upto
		for {
			m, err := it.Next()
			if err != nil {
				break
			}
			meta, err := m.Metadata()
			if err != nil {
				continue
			}
			seq := meta.Sequence.Stream
			within, replay := fresh, virgin // done's partitions have the messages through replayTo
			if seq > replayTo {
				merge(done, fresh)
				within, replay, upto = done, false, seq
			}
			n.recordEdges(m, within, replay)
			if meta.NumPending == 0 {
				merge(done, fresh) // the replay read every page's last message
			}
			n.mu.Lock()
			n.edges.recorded = seq
			n.mu.Unlock()
			if replaying && len(fresh) == 0 {
				replaying = !replayed()
			}
		}
		stop()
		it.Stop()
	}
}

// merge moves the partitions in fresh to done.
func merge(done, fresh map[int]bool) {
	for p := range fresh {
		done[p] = true
	}
	clear(fresh)
}

// recordEdges records, of the links in m (a page's message), those into the partitions
// in parts. virgin says that only this node's crawler recorded links into them so far (a
// replay for partitions followed for the first time).
//
// A message with no link into parts changes nothing in the graph, unless the graph holds
// links of the page into parts that the message drops. It can hold such links only from
// an earlier message of the page (one that is not a first fetch's, recorded here unless
// virgin) or from this node's crawler, if it fetched the page (in a partition this node
// follows): otherwise the message is not recorded, which spares the graph a look-up for
// most pages other nodes fetch.
func (n *Node) recordEdges(m jetstream.Msg, parts map[int]bool, virgin bool) {
	if len(parts) == 0 {
		return
	}
	e, err := decodeEdges(m.Data())
	switch {
	case err != nil:
		n.log.Warn("skipping links this node cannot read", "subject", m.Subject(), "error", err)
		return
	case n.skipOwnEdges && e.Run == n.run:
		// This run's crawler recorded them when it fetched the page. A later run (a
		// restart, perhaps on an empty disk) records them from here.
		return
	}
	within := func(dst string) bool {
		h := urlnorm.HostOf(dst)
		return h != "" && parts[n.partitionOf(h)]
	}
	if (e.First || virgin) && !slices.ContainsFunc(e.Links, func(l edgeLink) bool { return within(l.URL) }) {
		n.mu.Lock()
		fetched := n.follows[n.partitionOf(urlnorm.HostOf(e.Src))]
		n.mu.Unlock()
		if !fetched {
			return
		}
	}
	links := make([]linkgraph.Link, len(e.Links))
	for i, l := range e.Links {
		links[i] = linkgraph.Link{URL: l.URL, Anchor: l.Anchor}
	}
	if err := n.inlinks.SetLinksWhere(e.Src, links, within); err != nil {
		n.log.Warn("recording links from another node failed", "from", e.Src, "error", err)
	}
}

// edgesCaughtUp says this node recorded all the links routed so far to the partitions it
// follows.
func (n *Node) edgesCaughtUp(ctx context.Context) bool {
	if n.inlinks == nil {
		return true
	}
	n.mu.Lock()
	c, recorded, all := n.edges.cons, n.edges.recorded, len(n.follows) == len(n.edges.covers)
	none := len(n.follows) == 0
	n.mu.Unlock()
	if none {
		return true
	}
	if c == nil || !all {
		return false
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, err := c.Info(ictx)
	cancel()
	// Nothing left on the server, and all it delivered recorded here.
	return err == nil && info.NumPending == 0 && info.Delivered.Stream <= recorded
}

// waitEdges waits, up to d, until the in-link graph recorded what was routed to this
// node's partitions: before it hands them over at the end of a crawl.
func (n *Node) waitEdges(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for !n.edgesCaughtUp(ctx) && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 20*time.Millisecond)
	}
}
