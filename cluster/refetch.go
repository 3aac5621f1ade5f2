package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/frontier"
)

// Refetch asks the owners of the URLs' partitions to fetch them again although they were
// done: the pages a quarantined volunteer worker delivered (package cluster/volunteer).
// They travel as routed links marked Refetch, through the outbox (committed with an fsync
// before Refetch returns, so a crash loses none) and the links stream, to whichever node
// serves each partition now or later: that node records each URL as queued in the state
// stream (so a node taking the partition over later fetches it too), then queues it again
// in its frontier, although its seen set has it (see admit). Refetch called before Attach
// waits for it (a node that purges a worker's pages as it starts).
func (n *Node) Refetch(ctx context.Context, items []frontier.Item) error {
	select {
	case <-n.attached:
	case <-ctx.Done():
		return ctx.Err()
	}
	if len(items) == 0 {
		return nil
	}
	n.outMu.Lock()
	defer n.outMu.Unlock()
	b := n.db.NewBatch()
	defer b.Close()
	for _, it := range items {
		w := toWire(it)
		w.Due, w.Attempts, w.Via, w.Refetch = time.Time{}, 0, nil, true
		if err := n.out.put(b, kindLink, n.names.links(n.partitionOf(it.Host)), encodeItem(w), fence{}); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("cluster: outbox: %w", err)
	}
	n.outCount.Add(int64(len(items)))
	n.kick()
	return nil
}
