package cluster

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sonda-search/sonda/linkgraph"
)

// TestEdgesOfTheEarlierFormat: a cluster whose stream and outboxes hold pages' links as an
// earlier sonda wrote them (a message per page and partition of the targets, empty ones
// for partitions a page stopped linking into, sweep records in an outbox) loses none of
// them and misreads none: a node turns the stream's into one message per page before it
// reads them, keeping the message of a page fetched since, and an outbox opened again
// turns its records so; a follower then records, and the PageRank leader ranks, each
// page's links at its last fetch. All through a real embedded server.
func TestEdgesOfTheEarlierFormat(t *testing.T) {
	ctx, a, b, c, rec, hosts := edgeNodes(t)
	t1, t2 := "http://"+hosts[1]+"/one", "http://"+hosts[2]+"/two"
	q1, q2 := a.partitionOf(hosts[1]), a.partitionOf(hosts[2])
	page := func(i int) string { return "http://" + hosts[0] + "/p" + strconv.Itoa(i) }
	oldSubject := func(q int, src string) string {
		k := linkgraph.KeyOf(src)
		return a.names.prefix() + "edges." + strconv.Itoa(q) + "." + hex.EncodeToString(k[:])
	}
	message := func(src string, asJSON bool, targets ...string) []byte {
		m := edgesMsg{Src: src, Run: "0123456789ab"}
		for _, u := range targets {
			m.Links = append(m.Links, edgeLink{URL: u, Anchor: "to " + u})
		}
		if asJSON { // the first cluster nodes wrote JSON
			b, _ := json.Marshal(m)
			return b
		}
		return encodeEdges(m)
	}
	publish := func(subject string, data []byte) {
		t.Helper()
		if _, err := a.js.Publish(ctx, subject, data); err != nil {
			t.Fatal(err)
		}
	}
	// The stream: p1 links into both partitions; p2 stopped linking into q2 (an empty
	// message there); p3 was fetched since by a node of this format (its message is newer).
	publish(oldSubject(q1, page(1)), message(page(1), false, t1))
	publish(oldSubject(q2, page(1)), message(page(1), true, t2))
	publish(oldSubject(q1, page(2)), message(page(2), false, t1))
	publish(oldSubject(q2, page(2)), message(page(2), false, t2))
	publish(oldSubject(q2, page(2)), message(page(2), false))
	publish(oldSubject(q1, page(3)), message(page(3), false, t1))
	k3 := linkgraph.KeyOf(page(3))
	publish(a.names.edges(k3[:]), message(page(3), false, t2))

	// b's outbox: p4's links from a fetch it had not relayed when it stopped (two records
	// and a sweep), between a routed link and nothing else.
	k4 := linkgraph.KeyOf(page(4))
	batch := b.db.NewBatch()
	for _, r := range []struct {
		kind    byte
		subject string
		payload []byte
	}{
		{kindLink, b.names.links(q1), encodeItem(toWire(testItem(hosts[1], "/routed")))},
		{kindEdges, oldSubject(q1, page(4)), message(page(4), false, t1)},
		{kindEdges, oldSubject(q2, page(4)), message(page(4), true, t2)},
		{kindSweep, b.names.prefix() + "edges.*." + hex.EncodeToString(k4[:]), message(page(4), false)},
	} {
		if err := b.out.put(batch, r.kind, r.subject, r.payload, fence{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	batch.Close()
	o, pending, err := openOutbox(b.db, "b")
	if err != nil {
		t.Fatal(err)
	}
	if pending != 2 {
		t.Errorf("the outbox opened again holds %d records, want 2 (the routed link and p4's links)", pending)
	}
	b.out = o
	b.outCount.Store(int64(pending))
	relayAll(t, ctx, b)

	c.follow(ctx, q1)
	c.follow(ctx, q2)
	want := map[string][]string{page(1): {t1, t2}, page(2): {t1}, page(3): {t2}, page(4): {t1, t2}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		differ := ""
		for src, targets := range want {
			var got []string
			for _, l := range rec.get(src) {
				got = append(got, l.URL)
			}
			slices.Sort(got)
			if !slices.Equal(got, targets) {
				differ = fmt.Sprintf("%s: the follower records links to %v, want %v", src, got, targets)
			}
		}
		if differ == "" && c.edgesCaughtUp(ctx) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(differ)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The stream holds one message per page, none of the earlier format.
	info, err := a.state.Info(ctx, jetstream.WithSubjectFilter(a.names.prefix()+"edges.>"))
	if err != nil {
		t.Fatal(err)
	}
	for src := range want {
		k := linkgraph.KeyOf(src)
		if info.State.Subjects[a.names.edges(k[:])] != 1 {
			t.Errorf("%s: no message of its own in the stream", src)
		}
	}
	if len(info.State.Subjects) != len(want) {
		t.Errorf("the stream holds links on %v, want one subject per page", info.State.Subjects)
	}
	if _, err := a.state.GetLastMsgForSubject(ctx, a.names.partEdges()); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("links of the earlier format remain in the stream: %v", err)
	}
	// Another node's migration finds nothing to do and writes nothing.
	before, err := a.state.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.migrateEdges(ctx); err != nil {
		t.Fatal(err)
	}
	if after, err := a.state.Info(ctx); err != nil || after.State.LastSeq != before.State.LastSeq {
		t.Errorf("a second migration wrote to the stream (last sequence %d, was %d; %v)", after.State.LastSeq, before.State.LastSeq, err)
	}
	// The PageRank leader reads every page's last links: 6 of them, between 6 URLs.
	a.ReceiveRanks(rankGraph(t, a.db), t.TempDir(), time.Hour)
	upto, err := a.lastEdges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.publishRanks(ctx, upto); err != nil {
		t.Fatal(err)
	}
	if s := a.currentRun().Summary; s.Edges != 6 || s.Nodes != 6 {
		t.Errorf("the cluster's PageRank ranked %d links between %d URLs, want 6 and 6", s.Edges, s.Nodes)
	}
}
