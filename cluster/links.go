package cluster

import (
	"context"
	"encoding/binary"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// In-links across the cluster. Link ranking uses, for each page, how many pages link to
// it and with which anchor texts. A node crawls only its hosts, so the links to a page
// come from pages crawled all over the cluster: each page's links go, in one message, to
// the state stream (one compacting subject per page, so a page crawled again replaces what
// it said). A node records in its link graph the links into every partition it has ever
// served, from the first message in the stream, and keeps following them: its index holds
// the pages it fetched while it owned a partition, also after the partition moved on, and
// those pages' in-links must count wherever they come from.
//
// One message per page, rather than one per partition its links reach, spares the page's
// node an outbox record, a publication and its acknowledgement per further partition, and
// the server as many messages to store; every node reads every page's message and keeps
// the links into its partitions. Earlier nodes sent one message per page and partition
// (subject edges.<partition>.<page key>, holding only that partition's links): those are
// still read, for their partition only.

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
// go to the outbox in the page's batch, in one message.
func (n *Node) Journal(d *crawl.Document, w store.Writer) error {
	links, update := linkgraph.DocumentLinks(d)
	if !update || len(links) == 0 {
		return nil
	}
	src := d.Record.URL
	if !d.URL.IsZero() {
		src = d.URL.String()
	}
	ls := make([]edgeLink, 0, len(links))
	for _, l := range links {
		if l.URL == src || hostOf(l.URL) == "" {
			continue
		}
		ls = append(ls, edgeLink{URL: l.URL, Anchor: l.Anchor})
	}
	if len(ls) == 0 {
		return nil
	}
	key := linkgraph.KeyOf(src)
	payload := encodeEdges(edgesMsg{Src: src, Run: n.run, Links: ls})
	n.outMu.Lock()
	defer n.outMu.Unlock()
	if err := n.out.put(w, kindEdges, n.names.edges(key[:]), payload, fence{}); err != nil {
		return err
	}
	n.outCount.Add(1)
	return nil
}

// notFollowed marks, in edgeFollower.marks, a partition whose links this node does not
// record.
const notFollowed = math.MaxUint64

// edgeFollower reads the pages' links in the state stream into the in-link graph, keeping
// those into the partitions the node follows. Its fields are under Node.mu.
type edgeFollower struct {
	// marks holds, per partition, the stream sequence up to which the links into it are
	// recorded (notFollowed: not followed). A partition followed since the consumer
	// started is read from the stream's start by the next consumer, which records the
	// others' links only from their mark on.
	marks   []uint64
	grown   chan struct{}      // closed when a partition is added: a new consumer reads it
	cons    jetstream.Consumer // nil between consumers
	applied uint64             // stream sequence of the last message cons delivered and recorded
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

// follow starts recording the links into p, for as long as ctx (the node's run) lasts.
func (n *Node) follow(ctx context.Context, p int) {
	if n.inlinks == nil {
		return
	}
	n.mu.Lock()
	f := n.edges
	first := f == nil
	if first {
		f = &edgeFollower{marks: make([]uint64, n.nparts), grown: make(chan struct{})}
		for i := range f.marks {
			f.marks[i] = notFollowed
		}
		n.edges = f
	}
	if f.marks[p] != notFollowed {
		n.mu.Unlock()
		return
	}
	f.marks[p] = 0
	close(f.grown)
	f.grown = make(chan struct{})
	n.mu.Unlock()
	if err := n.db.Set(keyFollowed(p), nil, pebble.Sync); err != nil {
		n.log.Warn("recording a followed partition failed", "partition", p, "error", err)
	}
	if first {
		n.tenures.Go(func() { n.followEdges(ctx, f) })
	}
}

// followEdges records in the in-link graph the links into the followed partitions, from
// the first message (the last each page sent) until ctx ends. When a partition is added it
// starts again from the stream's start, after a heartbeat period (the partitions a node
// takes come in bursts), recording for each partition only what it did not record yet.
func (n *Node) followEdges(ctx context.Context, f *edgeFollower) {
	subj := n.names.prefix() + "edges.>"
	for ctx.Err() == nil {
		n.mu.Lock()
		marks, grown := slices.Clone(f.marks), f.grown
		n.mu.Unlock()
		cons, err := n.state.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subj}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
		})
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		it, err := cons.Messages()
		if err != nil {
			sleep(ctx, n.tick())
			continue
		}
		n.mu.Lock()
		f.cons, f.applied = cons, 0
		n.mu.Unlock()
		stopCtx := context.AfterFunc(ctx, it.Stop)
		done, exited := make(chan struct{}), make(chan struct{})
		added := false // written by the watcher, read once it exited
		go func() {
			defer close(exited)
			select {
			case <-grown:
				added = true
				it.Stop()
			case <-done:
			}
		}()
		var last uint64
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
			n.recordEdges(m, seq, marks)
			last = seq
			n.mu.Lock()
			f.applied = seq
			n.mu.Unlock()
		}
		stopCtx()
		it.Stop()
		close(done)
		<-exited
		// This consumer recorded the links into its partitions up to last.
		n.mu.Lock()
		for p, mark := range marks {
			if mark != notFollowed && f.marks[p] < last {
				f.marks[p] = last
			}
		}
		f.cons = nil
		n.mu.Unlock()
		if added {
			sleep(ctx, n.tick())
		}
	}
}

// recordEdges records the links of message m (stream sequence seq) into the partitions
// whose mark is below seq.
func (n *Node) recordEdges(m jetstream.Msg, seq uint64, marks []uint64) {
	e, err := decodeEdges(m.Data())
	if err != nil {
		n.log.Warn("skipping links this node cannot read", "subject", m.Subject(), "error", err)
		return
	}
	if n.skipOwnEdges && e.Run == n.run {
		// This run's crawler recorded them when it fetched the page. A later run (a
		// restart, perhaps on an empty disk) records them from here.
		return
	}
	only := -1 // an earlier node's message: the links into one partition
	if rest, ok := strings.CutPrefix(m.Subject(), n.names.prefix()+"edges."); ok {
		if ps, _, ok := strings.Cut(rest, "."); ok {
			if p, err := strconv.Atoi(ps); err == nil {
				only = p
			}
		}
	}
	within := func(dst string) bool {
		h := hostOf(dst)
		if h == "" {
			return false
		}
		p := n.partitionOf(h)
		return (only < 0 || p == only) && seq > marks[p]
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
	f := n.edges
	if f == nil {
		n.mu.Unlock()
		return true
	}
	c, applied := f.cons, f.applied
	pending := false
	select {
	case <-f.grown:
		pending = true // a partition was added: the next consumer reads it
	default:
	}
	n.mu.Unlock()
	if c == nil || pending {
		return false
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, err := c.Info(ictx)
	cancel()
	// Nothing left on the server, and all it delivered recorded here.
	return err == nil && info.NumPending == 0 && info.Delivered.Stream <= applied
}

// hostOf is the host (and port) of an absolute URL, as url.Parse gives it, without parsing
// the whole URL when it has no user information: the links of a page come normalized.
func hostOf(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.ContainsAny(rest, "@%[") { // user info, escapes, IPv6: the real parser
		u, err := url.Parse(raw)
		if err != nil {
			return ""
		}
		return u.Host
	}
	return rest
}

// waitEdges waits, up to d, until the in-link graph recorded what was routed to this
// node's partitions: before it hands them over at the end of a crawl.
func (n *Node) waitEdges(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for !n.edgesCaughtUp(ctx) && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 20*time.Millisecond)
	}
}
