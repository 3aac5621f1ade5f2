package cluster

import (
	"fmt"
	"testing"
)

func TestDomainOf(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"www.example.org", "example.org"},
		{"docs.example.org:8080", "example.org"},
		{"www.bbc.co.uk", "bbc.co.uk"},
		{"user.github.io", "user.github.io"},
		{"127.0.0.1:80", "127.0.0.1"},
		{"[::1]:80", "::1"},
		{"localhost", "localhost"},
		{"WWW.Site07.TEST.", "site07.test"},
	} {
		if got := DomainOf(tc.host); got != tc.want {
			t.Errorf("DomainOf(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
	if PartitionOf("www.example.org", 64) != PartitionOf("cdn.example.org:443", 64) {
		t.Error("subdomains of one site fell into different partitions")
	}
}

// TestOwnerMovesOnlyItsShare: rendezvous hashing moves only the partitions of a node that
// leaves, only partitions to a node that joins, and spreads them evenly.
func TestOwnerMovesOnlyItsShare(t *testing.T) {
	const parts = 256
	three := []string{"a", "b", "c"}
	four := []string{"a", "b", "c", "d"}
	count := map[string]int{}
	for p := 0; p < parts; p++ {
		before, after := Owner(p, three), Owner(p, four)
		if before != after && after != "d" {
			t.Fatalf("partition %d moved from %s to %s when d joined", p, before, after)
		}
		count[after]++
		without := Owner(p, []string{"a", "c", "d"})
		if after != "b" && without != after {
			t.Fatalf("partition %d moved from %s to %s when b left", p, after, without)
		}
	}
	for _, n := range four {
		if c := count[n]; c < parts/4/2 || c > parts/4*2 {
			t.Errorf("node %s owns %d of %d partitions: %v", n, c, parts, fmt.Sprint(count))
		}
	}
	if Owner(3, nil) != "" {
		t.Error("no members must mean no owner")
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"sonda", "node-1", "A_b"} {
		if err := CheckName("node id", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a.b", "a b", "x*"} {
		if err := CheckName("node id", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
