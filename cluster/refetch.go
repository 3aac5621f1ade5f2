package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/frontier"
)

// Refetch queues URLs that were done to be fetched again: the pages a quarantined
// volunteer worker delivered (package cluster/volunteer). Each URL's state in the state
// stream becomes queued again first, so that a node taking the partition over later
// fetches it too; then it enters this node's frontier. Only URLs of partitions this node
// serves are queued (a page is accepted by the node that owns its host); the others are
// counted in skipped, since the node now serving them may already have fetched them again.
func (n *Node) Refetch(ctx context.Context, items []frontier.Item) (skipped int, err error) {
	mine := make([]frontier.Item, 0, len(items))
	futures := make([]jetstream.PubAckFuture, 0, len(items))
	epochs := map[int]uint64{} // the tenure each URL's state was written under
	for _, it := range items {
		p := n.partitionOf(it.Host)
		n.mu.Lock()
		pt := n.owned[p]
		n.mu.Unlock()
		if pt == nil || !n.serving(pt) {
			skipped++
			continue
		}
		it.Due, it.Attempts, it.Via = time.Time{}, 0, nil
		// Written under the tenure's epoch, as every state: refused if the partition
		// moved meanwhile (its new owner decides).
		n.mu.Lock()
		epoch := pt.epoch
		n.mu.Unlock()
		epochs[p] = epoch
		f, err := n.js.PublishAsync(n.names.urlState(p, it.Key), encodeItem(toWire(it)),
			jetstream.WithExpectLastSequenceForSubject(epoch, n.names.epoch(p)))
		if err != nil {
			return skipped, jsError("record a URL to fetch again", err)
		}
		futures = append(futures, f)
		mine = append(mine, it)
	}
	var refused error
	for i, f := range futures {
		err := waitAcks(ctx, []jetstream.PubAckFuture{f})
		if fencedOut(err) {
			p := n.partitionOf(mine[i].Host)
			n.fenced(fence{part: p, epoch: epochs[p]})
			refused = err
			continue
		}
		if err != nil {
			return skipped, jsError("record a URL to fetch again", err)
		}
	}
	if refused != nil {
		return skipped, fmt.Errorf("cluster: queue pages to fetch again: %w (%w)", errNotServing, refused)
	}
	if err := n.fr.Restore(mine, nil, nil); err != nil {
		return skipped, fmt.Errorf("cluster: queue pages to fetch again: %w", err)
	}
	n.kick()
	return skipped, nil
}
