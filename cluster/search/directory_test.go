package search_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sonda-search/sonda/cluster/search"
	"github.com/sonda-search/sonda/index"
)

// TestDirectory: the nodes of a cluster are those that answer pings and those the
// membership lists; a listed node that serves no search is a missing shard of every
// answer, and a node unseen for the forget time is dropped.
func TestDirectory(t *testing.T) {
	nc := startNATS(t)
	ctx := context.Background()
	empty, err := search.NewDirectory(nc, "dir", 20*time.Millisecond, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Members(ctx); !errors.Is(err, search.ErrNoNodes) {
		t.Errorf("no node: %v, want ErrNoNodes", err)
	}
	empty.Close()

	ix := openIndex(t, filepath.Join(t.TempDir(), "ix"), []index.Doc{{ID: "https://a.example/", URL: "https://a.example/", Title: "harbour lights", Host: "a.example", Relevance: -1}})
	srv, err := search.Listen(nc, "dir", "node-1", ix)
	if err != nil {
		t.Fatal(err)
	}
	listed := make(chan []string, 1)
	listed <- []string{"node-2"}
	d, err := search.NewDirectory(nc, "dir", 20*time.Millisecond, 300*time.Millisecond, func(context.Context) ([]string, error) {
		l := <-listed
		listed <- l
		return l, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	members, err := d.Members(ctx)
	if err != nil || !slices.Equal(members, []string{"node-1", "node-2"}) {
		t.Fatalf("members %v (%v), want node-1 (pinged) and node-2 (listed)", members, err)
	}
	g, err := search.NewGatherer(nc, d.Members, search.GathererOptions{Cluster: "dir", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Search(ctx, index.Request{Query: "harbour"})
	if err != nil || res.Total != 1 || !slices.Equal(res.Missing, []string{"node-2"}) {
		t.Fatalf("search: %v, total %d, missing %v; want 1 result, node-2 missing", err, res.Total, res.Missing)
	}
	// node-2 leaves the membership and node-1 stops: both are forgotten after 300 ms.
	<-listed
	listed <- nil
	srv.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		members, err := d.Members(ctx)
		if errors.Is(err, search.ErrNoNodes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still members after they left: %q (%v)", members, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
