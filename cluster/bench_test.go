package cluster

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sonda-search/sonda/config"
	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/frontier"
)

// BenchmarkRouting measures routing throughput end to end: URLs written to the outbox,
// relayed with message ids, recorded in the state stream and admitted into the owner's
// frontier. remote: the URLs go from a node that owns nothing to the node that owns every
// partition, through the links stream (published, stored, delivered to the owner's pull
// consumer, acknowledged); local: the node routes to itself, and its relay records and
// admits them at once.
//
//	go test -run '^$' -bench Routing -benchtime 20000x ./cluster
func BenchmarkRouting(b *testing.B) {
	b.Run("remote", func(b *testing.B) { benchRouting(b, true) })
	b.Run("local", func(b *testing.B) { benchRouting(b, false) })
}

func benchRouting(b *testing.B, remote bool) {
	s, err := StartServer(ServerOptions{Addr: "127.0.0.1:0", Dir: filepath.Join(b.TempDir(), "js")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := nats.Connect(s.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := func(id string) *Node {
		n, err := Join(ctx, nc, Options{NodeID: id, TTL: 3 * time.Second, Partitions: 16})
		if err != nil {
			b.Fatal(err)
		}
		cfg := config.Default()
		cfg.Data = filepath.Join(b.TempDir(), id)
		cfg.WARC.Enabled = false
		c, err := crawl.New(cfg, crawl.WithRouter(n), crawl.WithGate(n))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		if err := n.Attach(c); err != nil {
			b.Fatal(err)
		}
		return n
	}
	n := node("owner")
	ran := make(chan struct{})
	go func() { _ = n.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }() // before the crawler closes its database
	for n.admitted.Load() == 0 {       // wait until it serves its partitions: admit one URL
		_ = n.Add([]frontier.Item{benchItem(-1)})
		time.Sleep(100 * time.Millisecond)
	}
	src := n
	if remote {
		// A node that only relays: it never joins the membership, so it owns nothing.
		src = node("sender")
		relayed := make(chan struct{})
		go func() { src.relayLoop(ctx); close(relayed) }()
		defer func() { cancel(); <-relayed }()
	}
	base := n.admitted.Load()
	b.ResetTimer()
	start := time.Now()
	const batch = 256 // URLs per page, about what a crawl routes per completion
	for i := 0; i < b.N; i += batch {
		items := make([]frontier.Item, 0, batch)
		for j := i; j < min(i+batch, b.N); j++ {
			items = append(items, benchItem(j))
		}
		if err := src.Add(items); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for n.admitted.Load()-base < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("admitted %d of %d", n.admitted.Load()-base, b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "URLs/s")
}

func benchItem(i int) frontier.Item {
	u := fmt.Sprintf("http://www.site%03d.test/page/%d.html", i%500, i)
	sum := sha256.Sum256([]byte(u))
	return frontier.Item{URL: u, Key: [16]byte(sum[:16]), Host: fmt.Sprintf("www.site%03d.test", i%500)}
}
