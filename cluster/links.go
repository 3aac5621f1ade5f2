package cluster

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/linkgraph"
	"github.com/sonda-search/sonda/store"
)

// In-links across the cluster. Link ranking uses, for each page, how many pages link to
// it and with which anchor texts. A node crawls only its hosts, so the links to a page
// come from pages crawled all over the cluster: each page's links go, grouped by the
// partition of their target, to the state stream (one compacting subject per page and
// partition, so a page crawled again replaces what it said), and the owner of each
// partition records them in its link graph. A node that takes a partition over reads them
// all from the stream, as it reads the partition's queues.

// InLinkGraph is where a node records the links that pages crawled anywhere in the
// cluster have to the hosts it owns (a *linkgraph.Sink, which also tells the search index
// whose anchors changed).
type InLinkGraph interface {
	SetLinksWhere(src string, links []linkgraph.Link, within func(dst string) bool) error
}

// ReceiveInLinks makes the node record in g the links routed to the partitions it serves.
// Call it before Run.
func (n *Node) ReceiveInLinks(g InLinkGraph) { n.inlinks = g }

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
		u, err := url.Parse(l.URL)
		if err != nil || u.Host == "" || l.URL == src {
			continue
		}
		p := n.partitionOf(u.Host)
		byPart[p] = append(byPart[p], edgeLink{URL: l.URL, Anchor: l.Anchor})
	}
	key := linkgraph.KeyOf(src)
	n.outMu.Lock()
	defer n.outMu.Unlock()
	for p, ls := range byPart {
		payload, err := json.Marshal(edgesMsg{Src: src, Links: ls})
		if err != nil {
			return err
		}
		if err := n.out.put(w, kindEdges, n.names.edges(p, key[:]), payload, fence{}); err != nil {
			return err
		}
		n.outCount.Add(1)
	}
	return nil
}

// followEdges records in the in-link graph the links routed to p, from the first (the
// last each page sent) until ctx ends.
func (n *Node) followEdges(ctx context.Context, p int, pt *part) {
	if n.inlinks == nil {
		return
	}
	within := func(dst string) bool {
		u, err := url.Parse(dst)
		return err == nil && n.partitionOf(u.Host) == p
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
		pt.edges = cons
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
			var e edgesMsg
			if json.Unmarshal(m.Data(), &e) != nil || e.Src == "" {
				n.log.Warn("skipping malformed links", "subject", m.Subject())
				continue
			}
			links := make([]linkgraph.Link, len(e.Links))
			for i, l := range e.Links {
				links[i] = linkgraph.Link{URL: l.URL, Anchor: l.Anchor}
			}
			if err := n.inlinks.SetLinksWhere(e.Src, links, within); err != nil {
				n.log.Warn("recording links from another node failed", "from", e.Src, "error", err)
			}
			if meta, err := m.Metadata(); err == nil {
				n.mu.Lock()
				pt.edgesApplied = meta.Sequence.Stream
				n.mu.Unlock()
			}
		}
		stop()
		it.Stop()
	}
}

// edgesCaughtUp says every partition this node serves has recorded all the links routed
// to it so far.
func (n *Node) edgesCaughtUp(ctx context.Context) bool {
	if n.inlinks == nil {
		return true
	}
	n.mu.Lock()
	var pts []*part
	for _, pt := range n.owned {
		if pt.ready {
			pts = append(pts, pt)
		}
	}
	n.mu.Unlock()
	for _, pt := range pts {
		n.mu.Lock()
		c, applied := pt.edges, pt.edgesApplied
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
