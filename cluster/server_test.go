package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestJoinAndMembers starts the embedded server, joins a node's streams and buckets, and
// lists members through the membership bucket as another package would.
func TestJoinAndMembers(t *testing.T) {
	s, err := StartServer(ServerOptions{Addr: "127.0.0.1:0", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Join(ctx, nc, Options{Cluster: "t1", NodeID: "a", TTL: 2 * time.Second, Partitions: 8})
	if err != nil {
		t.Fatal(err)
	}
	if n.TTL() != 2*time.Second || n.Partitions() != 8 {
		t.Fatalf("TTL %v, partitions %d", n.TTL(), n.Partitions())
	}
	// A second node of the same cluster reads the first one's settings.
	n2, err := Join(ctx, nc, Options{Cluster: "t1", NodeID: "b", TTL: time.Minute, Partitions: 99})
	if err != nil {
		t.Fatal(err)
	}
	if n2.TTL() != 2*time.Second || n2.Partitions() != 8 {
		t.Fatalf("second node: TTL %v, partitions %d; want the cluster's", n2.TTL(), n2.Partitions())
	}
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(ctx, "sonda_t1_members")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "a", []byte(`{"node":"a","inc":"x"}`)); err != nil {
		t.Fatal(err)
	}
	ids, err := LiveMembers(ctx, js, "t1")
	if err != nil || len(ids) != 1 || ids[0] != "a" {
		t.Fatalf("LiveMembers = %v, %v", ids, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(ids) > 0 { // the TTL expires the key: the member is gone
		if time.Now().After(deadline) {
			t.Fatal("a member without heartbeats stayed live past the TTL")
		}
		time.Sleep(100 * time.Millisecond)
		ids, _ = LiveMembers(ctx, js, "t1")
	}
}

// TestJetStreamOff: a server without JetStream gives an error that says how to fix it.
func TestJetStreamOff(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = Join(ctx, nc, Options{NodeID: "a"})
	if err == nil || !strings.Contains(err.Error(), "JetStream is not enabled") {
		t.Fatalf("Join on a server without JetStream: %v", err)
	}
}
