package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/frontier"
	"github.com/sonda-search/sonda/linkgraph"
)

// These tests drive a node's protocol steps one by one (no heartbeat or claim loop
// running), on a real embedded NATS server and a real crawler database, so that the
// interleavings that a paused or crashed process produces happen every time.

func startTestServer(t testing.TB) *nats.Conn {
	t.Helper()
	nc, _ := startTestServerIn(t, filepath.Join(t.TempDir(), "js"))
	return nc
}

// startTestServerIn starts the embedded server with its JetStream data in dir.
func startTestServerIn(t testing.TB, dir string) (*nats.Conn, string) {
	t.Helper()
	return startTestServerWith(t, ServerOptions{Dir: dir})
}

func startTestServerWith(t testing.TB, o ServerOptions) (*nats.Conn, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	dir := o.Dir
	s, err := StartServer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, dir
}

// dirBytes is the size of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// loneNode starts a NATS server and one test node "a" on it, with a context of 60 s that
// ends, and whose tenures have stopped, before the node's crawler closes its database.
func loneNode(t *testing.T) (context.Context, *Node) {
	t.Helper()
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	t.Cleanup(func() { cancel(); a.tenures.Wait() })
	return ctx, a
}

// testNode joins cluster "t" as id with a crawler on its own data directory, and makes its
// membership valid for the test's length without running its loops.
func testNode(t testing.TB, nc *nats.Conn, id, dir string) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Join(ctx, nc, Options{Cluster: "t", NodeID: id, TTL: 3 * time.Second, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Data = dir
	cfg.WARC.Enabled = false
	c, err := crawl.New(cfg, crawl.WithRouter(n), crawl.WithGate(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := n.Attach(c); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	n.inc = newIncarnation()
	n.validUntil = time.Now().Add(time.Hour)
	n.mu.Unlock()
	return n
}

func testItem(host, path string) frontier.Item {
	u := "http://" + host + path
	sum := sha256.Sum256([]byte(u))
	return frontier.Item{URL: u, Key: [16]byte(sum[:16]), Host: host}
}

// takeNow makes n serve p (a new epoch and a rebuild) and waits until it does.
func takeNow(t *testing.T, ctx context.Context, n *Node, p int) *part {
	t.Helper()
	n.mu.Lock()
	self := n.self()
	n.mu.Unlock()
	if _, err := n.parts.Put(ctx, partKey(p), []byte(self)); err != nil { // the claim
		t.Fatal(err)
	}
	n.take(ctx, p, self)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n.mu.Lock()
		pt := n.owned[p]
		ready := pt != nil && pt.ready
		n.mu.Unlock()
		if ready {
			return pt
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not serve partition %d within 20s", n.opts.NodeID, p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// complete runs one lease of it on n: Enter, Route with outcome o in a committed batch,
// Leave. It reports whether the gate let the lease in.
func complete(t *testing.T, n *Node, it frontier.Item, o frontier.Outcome) bool {
	t.Helper()
	if !n.Enter(it) {
		return false
	}
	defer n.Leave(it)
	b := n.db.NewBatch()
	defer b.Close()
	if err := n.Route(b, it, o); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return true
}

func relayAll(t testing.TB, ctx context.Context, n *Node) {
	t.Helper()
	for {
		sent, err := n.relayOnce(ctx)
		if err != nil {
			t.Fatalf("relay: %v", err)
		}
		if sent == 0 {
			return
		}
	}
}

// lastState is the URL state the cluster's record holds for it.
func lastState(t *testing.T, ctx context.Context, n *Node, p int, it frontier.Item) wireItem {
	t.Helper()
	m, err := n.state.GetLastMsgForSubject(ctx, n.names.urlState(p, it.Key))
	if err != nil {
		t.Fatalf("state of %s: %v", it.URL, err)
	}
	w, err := decodeItem(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestStaleOwnerFenced: the owner of a partition is paused with a completed page's state
// still in its outbox; another node takes the partition over, rebuilds it and fetches the
// page itself; then the paused node's relay sends the old state. JetStream must refuse it
// (the new owner opened a later epoch), or the record would say the page still waits for
// a retry while no node has it queued: the next node to rebuild the partition would fetch
// it again after the cluster was declared done. The paused node forgets the partition.
func TestStaleOwnerFenced(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	it := testItem("www.example.org", "/page")
	p := a.partitionOf(it.Host)

	takeNow(t, ctx, a, p)
	// a's lease ends in a server error: retry later. Its state waits in a's outbox.
	if !complete(t, a, it, frontier.Outcome{Fetched: true, Retry: time.Now().Add(time.Minute)}) {
		t.Fatal("a's gate refused a lease on its own partition")
	}
	// b takes p over (a's membership expired while it was paused) and completes the page.
	takeNow(t, ctx, b, p)
	if !complete(t, b, it, frontier.Outcome{Fetched: true}) {
		t.Fatal("b's gate refused a lease on its own partition")
	}
	relayAll(t, ctx, b)
	if w := lastState(t, ctx, b, p, it); !w.Done {
		t.Fatalf("after b's completion the record says %+v, want done", w)
	}
	// a wakes up: its relay sends the stale retry.
	relayAll(t, ctx, a)
	if w := lastState(t, ctx, b, p, it); !w.Done {
		t.Errorf("a paused owner's late state replaced the new owner's: record says %+v, want done", w)
	}
	if a.outCount.Load() != 0 || a.unacked.Load() != 0 {
		t.Errorf("a's outbox keeps %d records (%d unconfirmed pages) after they were refused", a.outCount.Load(), a.unacked.Load())
	}
	a.mu.Lock()
	kept := a.owned[p]
	a.mu.Unlock()
	if kept != nil {
		t.Error("a still serves the partition whose epoch moved on")
	}
	if a.stale.Load() == 0 {
		t.Error("the refused record was not counted as stale")
	}
}

// TestExpelledLeaseNotRecorded: a lease that entered before this node lost its membership
// and completes after it (the node was paused mid-request) records nothing about its URL,
// and leaving does not count against the partition's next tenure on this node.
func TestExpelledLeaseNotRecorded(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	it := testItem("www.example.org", "/slow")
	p := a.partitionOf(it.Host)
	takeNow(t, ctx, a, p)
	if !a.Enter(it) {
		t.Fatal("gate refused")
	}
	a.expelled()
	a.mu.Lock()
	a.validUntil = time.Now().Add(time.Hour) // rejoined as a new incarnation
	a.mu.Unlock()
	pt := takeNow(t, ctx, a, p) // and took the partition back
	before := a.outCount.Load()
	bt := a.db.NewBatch()
	if err := a.Route(bt, it, frontier.Outcome{Fetched: true, Retry: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := bt.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	bt.Close()
	a.Leave(it)
	if got := a.outCount.Load() - before; got != 0 {
		t.Errorf("the expelled lease wrote %d outbox records, want none", got)
	}
	a.mu.Lock()
	inflight := pt.inflight
	a.mu.Unlock()
	if inflight != 0 {
		t.Errorf("the new tenure counts %d leases in flight, want 0 (the old lease left its own tenure)", inflight)
	}
}

// TestMsgIDsSurviveCounterRollback: after a crash the outbox counter can run behind
// numbers already published (the batches that raised it were not on disk yet, or were
// committed out of order). New records must still reach JetStream: with ids made of the
// node and the number alone, the server dropped them as duplicates of the lost ones, and
// the links they carried were lost.
func TestMsgIDsSurviveCounterRollback(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	if err := a.Add([]frontier.Item{testItem("www.example.org", "/one"), testItem("www.example.org", "/two")}); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	// The crash: the counter on disk is back where it was before those two records.
	if err := a.db.Set(keyOutboxSeq, binary.AppendUvarint(nil, 0), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	o, pending, err := openOutbox(a.db, "a")
	if err != nil || pending != 0 {
		t.Fatalf("reopen outbox: %d pending, %v", pending, err)
	}
	a.out, a.relayFrom = o, 0 // as a restarted node, which reads its outbox from the start
	if err := a.Add([]frontier.Item{testItem("www.example.org", "/three"), testItem("www.example.org", "/four")}); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	info, err := a.links.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 4 {
		t.Errorf("links stream holds %d messages, want 4 (records after the rollback dropped as duplicates)", info.State.Msgs)
	}
	// The same record published twice (a relay retried after a crash) keeps its id.
	b := a.db.NewBatch()
	if err := a.out.put(b, kindLink, a.names.links(0), []byte("x"), fence{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	iter, err := a.db.NewIter(&pebble.IterOptions{LowerBound: prefixOutbox})
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	if !iter.Last() {
		t.Fatal("no outbox record")
	}
	m1, err1 := a.out.decode(iter.Key(), iter.Value())
	m2, err2 := a.out.decode(iter.Key(), iter.Value())
	if err1 != nil || err2 != nil || m1.id != m2.id {
		t.Errorf("one record, two ids: %q %q (%v %v)", m1.id, m2.id, err1, err2)
	}
}

// TestOutboxNeverRenumbersAKeptRecord: a counter behind a record still in the outbox (two
// batches committed in the other order) does not make the next record overwrite it.
func TestOutboxNeverRenumbersAKeptRecord(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, _, err := openOutbox(db, "a")
	if err != nil {
		t.Fatal(err)
	}
	b1, b2 := db.NewBatch(), db.NewBatch()
	if err := o.put(b1, kindLink, "s.1", []byte("first"), fence{}); err != nil {
		t.Fatal(err)
	}
	if err := o.put(b2, kindLink, "s.2", []byte("second"), fence{}); err != nil {
		t.Fatal(err)
	}
	// b2 commits first, b1 last: the counter on disk says 1 while record 2 exists.
	if err := b2.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := b1.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	o2, pending, err := openOutbox(db, "a")
	if err != nil || pending != 2 {
		t.Fatalf("reopen: %d pending, %v", pending, err)
	}
	b := db.NewBatch()
	if err := o2.put(b, kindLink, "s.3", []byte("third"), fence{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	_, pending, _ = openOutbox(db, "a")
	if pending != 3 {
		t.Errorf("%d records after a third was added, want 3 (one overwritten)", pending)
	}
}

// TestNotIdleBeforeSeeds: a node whose crawler has not handed over its seeds yet is not
// idle, or a cluster whose nodes all start at once could be declared done before the
// seeds were even routed.
func TestNotIdleBeforeSeeds(t *testing.T) {
	nc := startTestServer(t)
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	if a.info().Idle {
		t.Fatal("idle before its crawler started")
	}
	if err := a.Add(nil); err != nil { // a crawler without seeds starts with an empty Add
		t.Fatal(err)
	}
	if !a.info().Idle {
		t.Error("not idle with nothing queued once the crawler started")
	}
}

// TestTermination: the rule of termination detection over successive quiet rounds.
func TestTermination(t *testing.T) {
	// The first look saw the reports a@10 and b@20 and, after them, the membership bucket
	// at revision 25.
	first := quietRound{revs: map[string]uint64{"a": 10, "b": 20}, incs: map[string]string{"a": "1", "b": "1"},
		activity: 500, linksSeq: 70, stateSeq: 900, membersSeq: 25}
	at := func(a, b uint64, f ...func(r *quietRound)) *quietRound {
		r := first
		r.revs = map[string]uint64{"a": a, "b": b}
		r.incs = map[string]string{"a": "1", "b": "1"}
		r.membersSeq = max(a, b)
		for _, f := range f {
			f(&r)
		}
		return &r
	}
	tests := []struct {
		name   string
		rounds []*quietRound // after first
		want   []bool
	}{
		{"nothing moved; each reported twice since the look", []*quietRound{at(26, 27), at(28, 29)}, []bool{false, true}},
		// The case of the NATS restart: a's report 26 was stored after the look but may
		// have been computed before it (before a admitted a URL that the look saw
		// recorded already); only a's next report is known to be computed after the look.
		{"each reported once since the look", []*quietRound{at(26, 27)}, []bool{false}},
		{"a report stored before the look arrived late", []*quietRound{at(11, 21), at(26, 27), at(28, 29)}, []bool{false, false, true}},
		{"one member has not reported twice", []*quietRound{at(26, 27), at(26, 29), at(26, 31)}, []bool{false, false, false}},
		{"a member fetched a page", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { r.activity++ })}, []bool{false, false}},
		{"a URL was routed in between", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { r.linksSeq++ })}, []bool{false, false}},
		{"a URL was admitted or a page recorded in between", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { r.stateSeq++ })}, []bool{false, false}},
		{"a member joined", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { r.revs["c"], r.incs["c"] = 28, "1" })}, []bool{false, false}},
		{"a member left", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { delete(r.revs, "b"); delete(r.incs, "b") })}, []bool{false, false}},
		{"a member rejoined as a new incarnation", []*quietRound{at(26, 27), at(28, 29, func(r *quietRound) { r.incs["b"] = "2" })}, []bool{false, false}},
		{"a round that is not quiet starts over", []*quietRound{at(26, 27), nil, at(28, 29)}, []bool{false, false, false}},
		{"starting over from a moved round", []*quietRound{at(26, 27, func(r *quietRound) { r.stateSeq++ }), at(28, 29, func(r *quietRound) { r.stateSeq++ }), at(30, 31, func(r *quietRound) { r.stateSeq++ })},
			[]bool{false, false, true}},
	}
	for _, tt := range tests {
		var d termination
		if d.step(&first) {
			t.Fatalf("%s: done at the first look", tt.name)
		}
		for i, r := range tt.rounds {
			if got := d.step(r); got != tt.want[i] {
				t.Errorf("%s: round %d: done = %v, want %v", tt.name, i+1, got, tt.want[i])
			}
		}
	}
}

// TestDoneWaitsForReportsAfterTheLook: a member's idle report computed before a URL was
// admitted there, but stored after termination detection looked at the streams (which
// showed the admission), must not end the crawl. The likely way TestClusterNATSRestart
// ended early on a loaded machine: after the restart, a routed URL left unacknowledged
// comes back once its AckWait runs out, while every member is idle, and may be admitted
// between a heartbeat's computation and its arrival.
func TestDoneWaitsForReportsAfterTheLook(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	t.Cleanup(func() { cancel(); a.tenures.Wait() })
	for p := range a.nparts {
		takeNow(t, ctx, a, p)
	}
	for _, n := range []*Node{a, b} {
		if err := n.Add(nil); err != nil { // the crawlers started, without seeds
			t.Fatal(err)
		}
	}
	go b.watchMembers(ctx) // b's view of the membership, as Run keeps it
	// beat stores info as n's heartbeat and waits until b's view has it.
	beat := func(n *Node, info MemberInfo) {
		t.Helper()
		val, _ := json.Marshal(info)
		rev, err := n.members.Put(ctx, n.opts.NodeID, val)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b.mu.Lock()
			got := b.memberView[n.opts.NodeID].rev
			b.mu.Unlock()
			if got >= rev {
				return
			}
			if ctx.Err() != nil {
				t.Fatal("b's view of the membership did not catch up")
			}
			time.Sleep(time.Millisecond)
		}
	}
	var d termination
	round := func() bool {
		t.Helper()
		r, ok := b.quiet(ctx)
		if !ok {
			return d.step(nil)
		}
		return d.step(&r)
	}
	beat(a, a.info())
	beat(b, b.info())
	if round() {
		t.Fatal("done at the first look")
	}
	// a computes its next report (idle); before it reaches the server, a URL is admitted
	// at a (a local link: its state recorded, then queued) and b looks again.
	late := a.info()
	link := testItem("www.example.org", "/late")
	if err := a.Add([]frontier.Item{link}); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	if st := a.fr.Stats(); st.Queued != 1 {
		t.Fatalf("a queued %d URLs, want 1", st.Queued)
	}
	if round() {
		t.Fatal("done right after an admission")
	}
	beat(a, late)
	beat(b, b.info())
	if round() {
		t.Fatal("the cluster was declared done while a had a URL queued: its idle report was computed before the look that saw the admission")
	}
	// a's next reports say what it holds; once it fetched the URL, the cluster is done.
	beat(a, a.info())
	beat(b, b.info())
	if round() {
		t.Fatal("done while a reports a queued URL")
	}
	l, err := a.fr.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Enter(l.Item) {
		t.Fatal("the gate refused a lease of a partition a serves")
	}
	if _, err := a.fr.Complete(l, frontier.Outcome{}, func(bt *pebble.Batch) error { return a.Route(bt, l.Item, frontier.Outcome{}) }); err != nil {
		t.Fatal(err)
	}
	a.Leave(l.Item)
	relayAll(t, ctx, a)
	for i := 0; ; i++ {
		beat(a, a.info())
		beat(b, b.info())
		if round() {
			break
		}
		if i == 5 {
			t.Fatal("not done after five rounds of idle reports with nothing left")
		}
	}
}

// TestReleaseWaitsForLeasesOutsideTheGate: a hand-over must not leave a URL queued here
// because a worker held it between its lease and the gate when the queues were purged:
// the URL would come back to this node's frontier, for a host it no longer owns, and the
// node would never be idle again (the cluster would never end).
func TestReleaseWaitsForLeasesOutsideTheGate(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	it := testItem("www.example.org", "/held")
	p := a.partitionOf(it.Host)
	takeNow(t, ctx, a, p)
	if _, err := a.fr.Add([]frontier.Item{it}); err != nil {
		t.Fatal(err)
	}
	l, err := a.fr.Next(ctx) // a worker leased it and has not asked the gate yet
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() { a.release(ctx, p); close(released) }()
	// The gate now refuses (the partition is leaving): the worker hands the lease back.
	for a.Enter(it) {
		a.Leave(it)
		time.Sleep(time.Millisecond)
	}
	if err := a.fr.Release(l, time.Time{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	case <-ctx.Done():
		t.Fatal("release did not end")
	}
	if st := a.fr.Stats(); st.Queued != 0 {
		t.Errorf("%d URLs still queued here after the hand-over, want 0", st.Queued)
	}
}

// TestStaleClaimOpensNoEpoch: a tenure whose claim no longer holds when it starts (the
// partition table names another node, or the claim was made by an incarnation that ended
// during the claim round) opens no epoch, which would fence the partition's real owner,
// and is dropped.
func TestStaleClaimOpensNoEpoch(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	p := 1
	a.mu.Lock()
	self := a.self()
	a.mu.Unlock()
	if _, err := a.parts.Put(ctx, partKey(p), []byte("d/other")); err != nil {
		t.Fatal(err)
	}
	a.take(ctx, p, self)
	deadline := time.Now().Add(20 * time.Second)
	for {
		a.mu.Lock()
		pt := a.owned[p]
		a.mu.Unlock()
		if pt == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a tenure whose partition belongs to another node was kept")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := a.state.GetLastMsgForSubject(ctx, a.names.epoch(p)); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("an epoch was opened on another node's partition (%v)", err)
	}
	// A claim in the name of an incarnation that ended is refused at once.
	a.expelled()
	a.mu.Lock()
	a.validUntil = time.Now().Add(time.Hour)
	a.mu.Unlock()
	a.take(ctx, 2, self)
	a.mu.Lock()
	kept := a.owned[2]
	a.mu.Unlock()
	if kept != nil {
		t.Error("a tenure claimed by an ended incarnation was started")
	}
}

// recordedLinks is an InLinkGraph that remembers what it was given.
type recordedLinks struct {
	mu    sync.Mutex
	links map[string][]linkgraph.Link // by source
	calls map[string]int              // SetLinksWhere calls, by source
}

func (r *recordedLinks) SetLinksWhere(src string, links []linkgraph.Link, within func(string) bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[src]++
	var kept []linkgraph.Link // as a Graph does: src's links outside within stay
	for _, l := range r.links[src] {
		if !within(l.URL) {
			kept = append(kept, l)
		}
	}
	for _, l := range links {
		if within(l.URL) {
			kept = append(kept, l)
		}
	}
	r.links[src] = kept
	return nil
}

func (r *recordedLinks) get(src string) []linkgraph.Link {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.links[src]
}

// sendEdges puts m (a page's links, in JSON as earlier nodes wrote them) in from's outbox,
// as Journal does, and relays it.
func sendEdges(t *testing.T, ctx context.Context, from *Node, m edgesMsg) {
	t.Helper()
	key := linkgraph.KeyOf(m.Src)
	payload, _ := json.Marshal(m)
	batch := from.db.NewBatch()
	defer batch.Close()
	if err := from.out.put(batch, kindEdges, from.names.edges(key[:]), payload, fence{}); err != nil {
		t.Fatal(err)
	}
	from.outCount.Add(1) // as every writer counts its records (the relay reads only then)
	if err := batch.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, from)
}

// TestEdgesReachTheOwner: a page's links recorded on one node reach the link graph of the
// node serving their targets' partition, those routed before it took the partition over
// (replayed) and those after (followed).
func TestEdgesReachTheOwner(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	rec := &recordedLinks{links: map[string][]linkgraph.Link{}}
	b.ReceiveInLinks(rec, false)
	target := "http://www.example.org/target"
	p := b.partitionOf("www.example.org")
	send := func(src string) {
		t.Helper()
		sendEdges(t, ctx, a, edgesMsg{Src: src, Links: []edgeLink{{URL: target, Anchor: "the target"}}})
	}
	send("http://other.example.net/before")
	takeNow(t, ctx, b, p)
	// Serving p is not enough: b records the links into p once it fetched a page there
	// (its index holds none before).
	if following(b, p) {
		t.Fatal("the node follows the links into a partition it serves but fetched nothing in")
	}
	if !complete(t, b, testItem("www.example.org", "/fetched"), frontier.Outcome{Fetched: true}) {
		t.Fatal("gate refused")
	}
	if !following(b, p) {
		t.Fatal("the node does not follow the links into a partition it fetched a page in")
	}
	if _, closer, err := b.db.Get(keyFollowed(p)); err != nil {
		t.Errorf("the partition is not marked followed for the node's next run: %v", err)
	} else {
		closer.Close()
	}
	send("http://other.example.net/after")
	deadline := time.Now().Add(20 * time.Second)
	for len(rec.get("http://other.example.net/before")) == 0 || len(rec.get("http://other.example.net/after")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("links reached the owner: before %v, after %v", rec.get("http://other.example.net/before"), rec.get("http://other.example.net/after"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := rec.get("http://other.example.net/after"); got[0].URL != target || got[0].Anchor != "the target" {
		t.Errorf("recorded %+v", got)
	}
	b.waitEdges(ctx, 10*time.Second)
	if !b.edgesCaughtUp(ctx) {
		t.Error("the owner does not say it caught up with the links routed to it")
	}
}

// following says n records the links routed to p.
func following(n *Node, p int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.follows[p]
}

// TestStateStreamBounded: the state stream keeps one message per URL, host, partition
// epoch and page (compacting subjects), so a crawl that records the same URLs again and
// again (retries, revisits) does not grow what it holds: messages and live bytes stay
// those of the first round. What it holds grows with the distinct URLs the cluster ever
// admitted, as a single node's seen set does. The files on disk keep superseded messages
// until the file store compacts or drops their blocks: logged, not bounded here.
func TestStateStreamBounded(t *testing.T) {
	nc, jsDir := startTestServerIn(t, filepath.Join(t.TempDir(), "js"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	const urls = 200
	items := make([]frontier.Item, urls)
	for i := range items {
		items[i] = testItem(fmt.Sprintf("www.site%02d.test", i%10), fmt.Sprintf("/page-%d", i))
	}
	for p := 0; p < a.nparts; p++ {
		takeNow(t, ctx, a, p)
	}
	round := func() {
		for i, it := range items {
			// A rest that outlasts the node's membership (an hour, in testNode), so that
			// it is recorded.
			if !complete(t, a, it, frontier.Outcome{Fetched: true, Revisit: time.Now().Add(time.Hour), Delay: 2 * time.Hour}) {
				t.Fatal("gate refused")
			}
			if i%4 == 3 { // within the node's bound on unconfirmed pages
				relayAll(t, ctx, a)
			}
		}
		relayAll(t, ctx, a)
	}
	round()
	first, err := a.state.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	disk0 := dirBytes(t, filepath.Join(jsDir, "jetstream", "$G", "streams", a.names.stateStream()))
	for range 20 {
		round()
	}
	last, err := a.state.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 200 URL states, 10 host rests, 4 epochs.
	if want := uint64(urls + 10 + a.nparts); first.State.Msgs != want || last.State.Msgs != want {
		t.Errorf("state stream holds %d then %d messages, want %d both times", first.State.Msgs, last.State.Msgs, want)
	}
	if last.State.Bytes > first.State.Bytes*11/10 {
		t.Errorf("state stream grew from %d to %d bytes over 20 more rounds of the same URLs", first.State.Bytes, last.State.Bytes)
	}
	disk := dirBytes(t, filepath.Join(jsDir, "jetstream", "$G", "streams", a.names.stateStream()))
	t.Logf("%d messages, %d bytes (%d on disk) after 1 round; %d messages, %d bytes (%d on disk) after 21 (%d writes)", first.State.Msgs, first.State.Bytes,
		disk0, last.State.Msgs, last.State.Bytes, disk, last.State.LastSeq)
}

// TestRelayOutOfOrderCommits: page batches commit in their own order, not in the order
// their outbox records were numbered. The relay reads on from where it stopped (reading
// from the start stepped over every deleted record), so a record numbered below one it
// already published must still be found: here lease A routes first and commits last.
func TestRelayOutOfOrderCommits(t *testing.T) {
	ctx, a := loneNode(t)
	for p := 0; p < a.nparts; p++ {
		takeNow(t, ctx, a, p)
	}
	itA, itB := testItem("www.example.org", "/a"), testItem("www.example.net", "/b")
	linkA, linkB := testItem("www.example.com", "/from-a"), testItem("www.example.com", "/from-b")
	if !a.Enter(itA) || !a.Enter(itB) {
		t.Fatal("gate refused")
	}
	bA, bB := a.db.NewBatch(), a.db.NewBatch()
	defer bA.Close()
	defer bB.Close()
	if err := a.Route(bA, itA, frontier.Outcome{Fetched: true, Discovered: []frontier.Item{linkA}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Route(bB, itB, frontier.Outcome{Fetched: true, Discovered: []frontier.Item{linkB}}); err != nil {
		t.Fatal(err)
	}
	if err := bB.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	a.Leave(itB)
	relayAll(t, ctx, a)
	if got := a.outCount.Load(); got != 2 {
		t.Fatalf("after B's commit the outbox holds %d records, want A's 2", got)
	}
	if err := bA.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	a.Leave(itA)
	relayAll(t, ctx, a) // within relayFullScan of the first read: from where it stopped
	if got := a.outCount.Load(); got != 0 {
		t.Errorf("the relay left %d records of the batch that committed last", got)
	}
	for _, it := range []frontier.Item{itA, itB} {
		if w := lastState(t, ctx, a, a.partitionOf(it.Host), it); !w.Done {
			t.Errorf("state of %s: %+v, want done", it.URL, w)
		}
	}
	if got := a.published.Load(); got != 4 {
		t.Errorf("published %d records, want 4 (two links, two states)", got)
	}
}

// TestShortRestsNotRecorded: a host's rest is recorded in the state stream only if it
// lasts until another node could take the host over (a TTL after the node's last
// heartbeat): the politeness delay of every page is not worth a message.
func TestShortRestsNotRecorded(t *testing.T) {
	ctx, a := loneNode(t)
	a.mu.Lock()
	a.validUntil = time.Now().Add(a.ttl / 2) // as right after a heartbeat
	a.mu.Unlock()
	short, long := testItem("short.example.org", "/"), testItem("long.example.org", "/")
	for _, it := range []frontier.Item{short, long} {
		takeNow(t, ctx, a, a.partitionOf(it.Host))
	}
	for _, c := range []struct {
		it    frontier.Item
		delay time.Duration
	}{{short, 30 * time.Millisecond}, {long, 3 * a.ttl}} {
		if !complete(t, a, c.it, frontier.Outcome{Fetched: true, Delay: c.delay}) {
			t.Fatal("gate refused")
		}
	}
	relayAll(t, ctx, a)
	if _, err := a.state.GetLastMsgForSubject(ctx, a.names.rest(a.partitionOf(short.Host), short.Host)); err == nil {
		t.Error("a 30ms rest was recorded")
	}
	m, err := a.state.GetLastMsgForSubject(ctx, a.names.rest(a.partitionOf(long.Host), long.Host))
	if err != nil {
		t.Fatalf("a rest of 3 TTLs was not recorded: %v", err)
	}
	var r restMsg
	if err := json.Unmarshal(m.Data, &r); err != nil || time.Until(r.Until) < 2*a.ttl {
		t.Errorf("recorded rest %+v (%v), want about 3 TTLs from now", r, err)
	}
}

// TestLocalLinks: a link for a partition this node serves is recorded in the state stream
// and admitted by the relay itself, without the links stream; if the partition moved
// before the relay ran (another node opened a later epoch), JetStream refuses the state
// and the link goes to the new owner through the links stream instead.
func TestLocalLinks(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	t.Cleanup(func() { cancel(); a.tenures.Wait(); b.tenures.Wait() })
	page, page2 := testItem("www.example.org", "/"), testItem("www.example.org", "/2")
	link, link2 := testItem("www.example.net", "/found"), testItem("www.example.net", "/found-later")
	pl := a.partitionOf(link.Host)
	takeNow(t, ctx, a, a.partitionOf(page.Host))
	if pl != a.partitionOf(page.Host) {
		takeNow(t, ctx, a, pl)
	}
	if !complete(t, a, page, frontier.Outcome{Fetched: true, Discovered: []frontier.Item{link}}) {
		t.Fatal("gate refused")
	}
	relayAll(t, ctx, a)
	if seen, _ := a.fr.Seen(link.Key); !seen {
		t.Error("the local link was not admitted into the frontier")
	}
	if w := lastState(t, ctx, a, pl, link); w.Done || w.URL != link.URL {
		t.Errorf("state of the local link: %+v, want it queued", w)
	}
	info, err := a.links.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != 0 {
		t.Errorf("the links stream took %d messages, want none for a local link", info.State.LastSeq)
	}

	// The next link waits in the outbox while b takes the partition over.
	if !complete(t, a, page2, frontier.Outcome{Fetched: true, Discovered: []frontier.Item{link2}}) {
		t.Fatal("gate refused")
	}
	takeNow(t, ctx, b, pl)
	relayAll(t, ctx, a) // refused: a forgets pl
	relayAll(t, ctx, a) // to b, through the links stream
	if a.outCount.Load() != 0 {
		t.Fatalf("a's outbox keeps %d records", a.outCount.Load())
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if seen, _ := b.fr.Seen(link2.Key); seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the link never reached the partition's new owner")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if seen, _ := a.fr.Seen(link2.Key); seen {
		t.Error("the former owner admitted a link of a partition it lost")
	}
}

// TestDoneStatesRebuild: the record of a URL that is done holds its key only, and a node
// that rebuilds the partition from the state stream counts it as seen (never fetched
// again), while a URL still waiting is queued with what its fetch needs.
func TestDoneStatesRebuild(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	b := testNode(t, nc, "b", filepath.Join(dir, "b"))
	t.Cleanup(func() { cancel(); a.tenures.Wait(); b.tenures.Wait() })
	done, waiting := testItem("www.example.org", "/done"), testItem("www.example.org", "/retry")
	done.Parent, done.Depth = "http://www.example.org/", 3
	p := a.partitionOf(done.Host)
	takeNow(t, ctx, a, p)
	if !complete(t, a, done, frontier.Outcome{Fetched: true}) ||
		!complete(t, a, waiting, frontier.Outcome{Fetched: true, Retry: time.Now().Add(time.Hour)}) {
		t.Fatal("gate refused")
	}
	relayAll(t, ctx, a)
	m, err := a.state.GetLastMsgForSubject(ctx, a.names.urlState(p, done.Key))
	if err != nil {
		t.Fatal(err)
	}
	if w, err := decodeItem(m.Data); err != nil || !w.Done || w.URL != "" || w.Parent != "" || len(m.Data) > 48 {
		t.Errorf("a done URL's record is %d bytes (%s), want its key only", len(m.Data), m.Data)
	}
	takeNow(t, ctx, b, p) // b rebuilds p from the record
	if seen, _ := b.fr.Seen(done.Key); !seen {
		t.Error("after the rebuild the done URL is not in the seen set: it would be fetched again")
	}
	if st := b.fr.Stats(); st.Queued != 1 {
		t.Errorf("after the rebuild %d URLs are queued, want 1 (the retry)", st.Queued)
	}
}

// TestStateStreamDiskBounded: over a long crawl that records the same URLs again and again
// (revisits), the state stream's files stay bounded by what it holds: JetStream's file
// store compacts a block once superseded messages left it more than half empty (at each
// sync), so the disk holds at most about twice the live messages plus the block being
// written (8 MiB for this stream). A benchmark-sized run (about 100k state writes, a
// minute), so it runs only with SONDA_BENCH=cluster-state:
//
//	SONDA_BENCH=cluster-state go test -run TestStateStreamDiskBounded -v ./cluster
func TestStateStreamDiskBounded(t *testing.T) {
	if os.Getenv("SONDA_BENCH") != "cluster-state" {
		t.Skip("a long run: set SONDA_BENCH=cluster-state")
	}
	nc, jsDir := startTestServerWith(t, ServerOptions{Dir: filepath.Join(t.TempDir(), "js"), SyncInterval: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	t.Cleanup(func() { cancel(); a.tenures.Wait() })
	const urls, rounds = 2000, 50
	items := make([]frontier.Item, urls)
	for i := range items {
		items[i] = testItem(fmt.Sprintf("www.site%03d.test", i%100), fmt.Sprintf("/a/rather/long/path/to/page-%d.html", i))
		items[i].Parent = fmt.Sprintf("http://www.site%03d.test/a/rather/long/path/to/index.html", i%100)
	}
	for p := 0; p < a.nparts; p++ {
		takeNow(t, ctx, a, p)
	}
	streamDir := filepath.Join(jsDir, "jetstream", "$G", "streams", a.names.stateStream())
	var maxDisk int64
	for r := range rounds {
		for i, it := range items {
			if !complete(t, a, it, frontier.Outcome{Fetched: true, Revisit: time.Now().Add(time.Hour)}) {
				t.Fatal("gate refused")
			}
			if i%8 == 7 {
				relayAll(t, ctx, a)
			}
		}
		relayAll(t, ctx, a)
		if r >= rounds/2 {
			maxDisk = max(maxDisk, dirBytes(t, streamDir))
		}
	}
	info, err := a.state.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	written := info.State.LastSeq
	live := int64(info.State.Bytes)
	bound := 2*live + 8<<20 + 2<<20
	t.Logf("%d state writes, %d live messages of %d bytes; files at most %d bytes over the second half (bound %d)",
		written, info.State.Msgs, live, maxDisk, bound)
	if maxDisk > bound {
		t.Errorf("the state stream's files reached %d bytes for %d live bytes (%d writes): not compacted", maxDisk, live, written)
	}
}

// TestLocalLinksStaleMembership: a local link whose state JetStream recorded while this
// node's membership went stale (heartbeats failing, as while NATS restarts) is still
// admitted here: the partition is still this node's, and its outbox record is deleted
// next, so nothing else would ever queue it. Seen in TestClusterNATSRestart: two pages
// never fetched.
func TestLocalLinksStaleMembership(t *testing.T) {
	ctx, a := loneNode(t)
	link := testItem("www.example.net", "/found")
	p := a.partitionOf(link.Host)
	pt := takeNow(t, ctx, a, p)
	a.mu.Lock()
	a.validUntil = time.Now().Add(-time.Second) // the last heartbeat is too old
	epoch := pt.epoch
	a.mu.Unlock()
	if err := a.admitLocal([]localLink{{pt: pt, fence: fence{part: p, epoch: epoch}, it: link, fresh: true}}, frontier.SeenCheck{}); err != nil {
		t.Fatal(err)
	}
	if seen, _ := a.fr.Seen(link.Key); !seen {
		t.Error("a link of a partition the node still holds was dropped while its membership was stale")
	}
	// A tenure that ended (another node opened a later epoch) admits nothing.
	lost := testItem("www.example.net", "/after-loss")
	a.mu.Lock()
	pt.lost = true // as lose marks it
	delete(a.owned, p)
	a.mu.Unlock()
	if err := a.admitLocal([]localLink{{pt: pt, fence: fence{part: p, epoch: epoch}, it: lost, fresh: true}}, frontier.SeenCheck{}); err != nil {
		t.Fatal(err)
	}
	if seen, _ := a.fr.Seen(lost.Key); seen {
		t.Error("a link was admitted for a partition the node lost")
	}
}

// TestRefetch: a URL the owner has seen is queued again when Node.Refetch asks, through
// the outbox and the links stream.
func TestRefetch(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testNode(t, nc, "a", filepath.Join(t.TempDir(), "a"))
	it := testItem("www.example.org", "/page")
	takeNow(t, ctx, a, a.partitionOf(it.Host))
	queued := func(want int64) {
		t.Helper()
		for a.fr.Stats().Queued != want {
			if ctx.Err() != nil {
				t.Fatalf("queued %d, want %d", a.fr.Stats().Queued, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := a.Add([]frontier.Item{it}); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	queued(1)
	if err := a.Add([]frontier.Item{it}); err != nil { // seen: not queued twice
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	if err := a.Refetch(ctx, []frontier.Item{it}); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	queued(2)
}

// TestStateNotRecordedBeforeItsLinks: a page's state (done: not to be fetched again) is
// recorded only once the links it found are. Were it recorded while a link is still only
// in the outbox (the links stream refused it, or lost it in a server shutdown) and the
// node then cut off or killed, the page's next owner would rebuild it as done and the
// cluster would end without the link.
func TestStateNotRecordedBeforeItsLinks(t *testing.T) {
	ctx, a := loneNode(t)
	page := testItem("www.example.org", "/page")
	p := a.partitionOf(page.Host)
	var link frontier.Item // for a partition a does not serve: it goes through the links stream
	for i := 0; ; i++ {
		if link = testItem(fmt.Sprintf("www.site%d.test", i), "/found"); a.partitionOf(link.Host) != p {
			break
		}
	}
	takeNow(t, ctx, a, p)
	// The links stream refuses new messages: it is full and discards new ones.
	cfg := a.links.CachedInfo().Config
	full := cfg
	full.MaxMsgs, full.Discard = 1, jetstream.DiscardNew
	if _, err := a.js.UpdateStream(ctx, full); err != nil {
		t.Fatal(err)
	}
	if _, err := a.js.Publish(ctx, a.names.links(a.partitionOf(link.Host)), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if !complete(t, a, page, frontier.Outcome{Discovered: []frontier.Item{link}}) {
		t.Fatal("the gate refused a lease of a partition a serves")
	}
	if _, err := a.relayOnce(ctx); err == nil {
		t.Fatal("the relay reported no failure while the links stream refused the link")
	}
	if _, err := a.state.GetLastMsgForSubject(ctx, a.names.urlState(p, page.Key)); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("the page's state was recorded while the link it found was refused (lookup: %v)", err)
	}
	if n := a.outCount.Load(); n != 2 {
		t.Errorf("%d records in the outbox, want 2 (the link and the page's state)", n)
	}
	// Once the stream takes messages again, both go.
	if _, err := a.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	relayAll(t, ctx, a)
	if w := lastState(t, ctx, a, p, page); !w.Done {
		t.Errorf("the page's state is %+v, want done", w)
	}
	if info, err := a.links.Info(ctx); err != nil || info.State.Msgs != 2 {
		t.Errorf("links stream: %v messages (%v), want 2 (the filler and the link)", info.State.Msgs, err)
	}
}

// TestOwnEdgesNotReadBack: a node whose crawler records its own pages' links skips the
// edges this run of it sent, and records those of other nodes and of its earlier runs.
func TestOwnEdgesNotReadBack(t *testing.T) {
	nc := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	a := testNode(t, nc, "a", filepath.Join(dir, "a"))
	t.Cleanup(func() { cancel(); a.tenures.Wait() })
	rec := &recordedLinks{links: map[string][]linkgraph.Link{}}
	a.ReceiveInLinks(rec, true)
	target := "http://www.example.org/target"
	p := a.partitionOf("www.example.org")
	takeNow(t, ctx, a, p)
	if !complete(t, a, testItem("www.example.org", "/fetched"), frontier.Outcome{Fetched: true}) { // a follows p from its first page there
		t.Fatal("gate refused")
	}
	send := func(src, run string) {
		t.Helper()
		sendEdges(t, ctx, a, edgesMsg{Src: src, Run: run, Links: []edgeLink{{URL: target}}})
	}
	send("http://other.example.net/own", a.run)
	send("http://other.example.net/earlier-run", "0123456789ab")
	send("http://other.example.net/no-run", "")
	for len(rec.get("http://other.example.net/earlier-run")) == 0 || len(rec.get("http://other.example.net/no-run")) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the links of an earlier run were not recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := rec.get("http://other.example.net/own"); got != nil {
		t.Errorf("the links this run sent were read back: %v", got)
	}
}

// TestAdmitSeenWritesNothing: routed URLs the owner has seen already are acknowledged
// without a write to its database. The admission used to commit an empty batch for the
// refetches it did not have and sync the WAL for them, for every batch the links consumer
// took: at 2 and 4 nodes, one WAL sync per page or so.
func TestAdmitSeenWritesNothing(t *testing.T) {
	ctx, a := loneNode(t)
	it := testItem("www.example.org", "/routed")
	p := a.partitionOf(it.Host)
	takeNow(t, ctx, a, p) // its tenure consumes the links stream's messages for p
	// route publishes it as another node's relay would, and waits until the owner's
	// consumer has acknowledged everything the links stream holds for p.
	route := func() {
		t.Helper()
		ack, err := a.js.Publish(ctx, a.names.links(p), encodeItem(toWire(it)))
		if err != nil {
			t.Fatal(err)
		}
		for {
			c, err := a.links.Consumer(ctx, fmt.Sprintf("part-%d", p))
			if err == nil {
				info, err := c.Info(ctx)
				if err == nil && info.Delivered.Stream >= ack.Sequence && info.NumAckPending == 0 {
					return
				}
			}
			if ctx.Err() != nil {
				t.Fatal("the routed URL was never acknowledged")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	route()
	if q := a.fr.Stats().Queued; q != 1 {
		t.Fatalf("queued %d after the first delivery, want 1", q)
	}
	before := a.db.Metrics().WAL.BytesIn
	route() // seen now
	if q := a.fr.Stats().Queued; q != 1 {
		t.Fatalf("queued %d after the second delivery, want 1", q)
	}
	if after := a.db.Metrics().WAL.BytesIn; after != before {
		t.Errorf("admitting a URL seen already wrote %d bytes to the WAL, want none", after-before)
	}
}

// TestIdleRelayReadsNothing: a relay round with no record counted in the outbox does not
// read it (an idle node's relay read it ten times a second, a third of the node's CPU); a
// record written next is read and published in the next round.
func TestIdleRelayReadsNothing(t *testing.T) {
	ctx, a := loneNode(t)
	for p := 0; p < a.nparts; p++ {
		takeNow(t, ctx, a, p)
	}
	it, link := testItem("www.example.org", "/a"), testItem("www.example.com", "/found")
	if !complete(t, a, it, frontier.Outcome{Fetched: true, Discovered: []frontier.Item{link}}) {
		t.Fatal("gate refused")
	}
	relayAll(t, ctx, a)
	if got := a.outCount.Load(); got != 0 {
		t.Fatalf("the outbox still counts %d records after the relay", got)
	}
	reads := a.outboxReads.Load()
	for range 20 {
		if sent, err := a.relayOnce(ctx); err != nil || sent != 0 {
			t.Fatalf("idle relay round: %d sent, %v", sent, err)
		}
	}
	if got := a.outboxReads.Load() - reads; got != 0 {
		t.Errorf("20 relay rounds with nothing counted read the outbox %d times, want 0", got)
	}
	seed := testItem("www.example.net", "/seed")
	if err := a.Add([]frontier.Item{seed}); err != nil {
		t.Fatal(err)
	}
	published := a.published.Load()
	relayAll(t, ctx, a)
	if a.outboxReads.Load() == reads {
		t.Error("a record written after the idle rounds was not read")
	}
	if got := a.published.Load() - published; got != 1 {
		t.Errorf("published %d records after the seed, want 1", got)
	}
	if w := lastState(t, ctx, a, a.partitionOf(seed.Host), seed); w.Done || len(w.Key) != 16 {
		t.Errorf("the seed's state %+v, want it queued", w)
	}
}
