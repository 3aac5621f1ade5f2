package search

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// pingSubject is where every Server of a cluster answers with its node ID.
func pingSubject(cluster string) string {
	if cluster == "" {
		cluster = DefaultCluster
	}
	return "sonda." + cluster + ".search.ping"
}

// Directory finds the nodes that serve searches by asking them — every Server answers a
// ping with its node ID — and, when given one, from a listing of the cluster's members
// (package cluster's membership). It is the members function of a Gatherer in a process
// that is not a node (sonda serve --nats). A node seen once stays a member for forget
// after it was last seen, so that a node that stops is named among the missing shards of
// every search until then, not silently left out.
type Directory struct {
	nc      *nats.Conn
	cluster string
	every   time.Duration
	forget  time.Duration
	listed  func(context.Context) ([]string, error)

	mu      sync.Mutex
	seen    map[string]time.Time // node → last answer
	pinged  chan struct{}        // closed after the first round
	stop    context.CancelFunc
	stopped chan struct{}
}

// NewDirectory starts pinging cluster's search nodes, and calling listed (when not nil),
// every interval (default 1 s); a node unseen for forget (default 10 minutes) is dropped.
// Close stops it.
func NewDirectory(nc *nats.Conn, cluster string, every, forget time.Duration, listed func(context.Context) ([]string, error)) (*Directory, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	if err := checkToken("cluster name", cluster); err != nil {
		return nil, err
	}
	if every <= 0 {
		every = time.Second
	}
	if forget <= 0 {
		forget = 10 * time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Directory{nc: nc, cluster: cluster, every: every, forget: forget, listed: listed, seen: map[string]time.Time{},
		pinged: make(chan struct{}), stop: cancel, stopped: make(chan struct{})}
	go d.loop(ctx)
	return d, nil
}

// Close stops pinging.
func (d *Directory) Close() {
	d.stop()
	<-d.stopped
}

func (d *Directory) loop(ctx context.Context) {
	defer close(d.stopped)
	t := time.NewTicker(d.every)
	defer t.Stop()
	first := true
	for {
		d.ping(ctx)
		d.list(ctx)
		if first {
			close(d.pinged)
			first = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ping asks every node and records those that answer within a fraction of the interval.
func (d *Directory) ping(ctx context.Context) {
	inbox := d.nc.NewRespInbox()
	answers := make(chan string, 64)
	sub, err := d.nc.Subscribe(inbox, func(m *nats.Msg) {
		if checkToken("node ID", string(m.Data)) != nil {
			return // not a node: the server's "no responders" status, or garbage
		}
		select {
		case answers <- string(m.Data):
		default:
		}
	})
	if err != nil {
		return
	}
	defer sub.Unsubscribe()
	if err := d.nc.PublishRequest(pingSubject(d.cluster), inbox, nil); err != nil {
		return
	}
	wait := time.NewTimer(min(d.every/2, 250*time.Millisecond))
	defer wait.Stop()
	for {
		select {
		case node := <-answers:
			d.mu.Lock()
			d.seen[node] = time.Now()
			d.mu.Unlock()
		case <-wait.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// list records the members the listing names.
func (d *Directory) list(ctx context.Context) {
	if d.listed == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, d.every)
	defer cancel()
	nodes, err := d.listed(lctx)
	if err != nil {
		return // the pings still find the nodes
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range nodes {
		if checkToken("node ID", n) == nil {
			d.seen[n] = now
		}
	}
}

// ErrNoNodes means no node of the cluster has answered a ping yet.
var ErrNoNodes = errors.New("no node serves searches in this cluster yet (start sonda node, or check --nats and --cluster)")

// Members are the nodes that answered within Forget, sorted. The first call waits for the
// first round of pings.
func (d *Directory) Members(ctx context.Context) ([]string, error) {
	select {
	case <-d.pinged:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for node, at := range d.seen {
		if time.Since(at) > d.forget {
			delete(d.seen, node)
			continue
		}
		out = append(out, node)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster %s: %w", d.cluster, ErrNoNodes)
	}
	sort.Strings(out)
	return out, nil
}
