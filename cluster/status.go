package cluster

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Status is a cluster's state as its NATS server holds it (`sonda cluster status`).
type Status struct {
	Cluster    string       `json:"cluster"`
	Partitions int          `json:"partitions"`
	Members    []MemberInfo `json:"members"`
	// Unassigned counts partitions no live member serves right now (moving, or no node).
	Unassigned int `json:"unassigned"`
	// Routing is how many routed URLs wait in JetStream for their owner's admission.
	Routing uint64 `json:"routing"`
	// URLStates is how many URLs the cluster has ever admitted (one state each).
	URLStates uint64 `json:"url_states"`
}

// Totals sums the members' figures.
func (s Status) Totals() MemberInfo {
	var t MemberInfo
	for _, m := range s.Members {
		t.Queued += m.Queued
		t.InFlight += m.InFlight
		t.Outbox += m.Outbox
		t.Pages += m.Pages
		t.Errors += m.Errors
		t.PagesPerSec += m.PagesPerSec
		t.FailOvers += m.FailOvers
	}
	return t
}

// ReadStatus reads cluster's membership, partitions and streams. A cluster that never ran
// gives ErrNoCluster.
func ReadStatus(ctx context.Context, js jetstream.JetStream, cluster string) (Status, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	n := names{cluster}
	st := Status{Cluster: cluster}
	parts, err := js.KeyValue(ctx, n.parts())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return st, ErrNoCluster
	}
	if err != nil {
		return st, jsError("open the partition table", err)
	}
	if e, err := parts.Get(ctx, "count"); err == nil {
		st.Partitions = atoiOr(string(e.Value()), 0)
	}
	if st.Members, err = Members(ctx, js, cluster); err != nil {
		return st, err
	}
	served := map[int]bool{}
	for _, m := range st.Members {
		for _, p := range m.Partitions {
			served[p] = true
		}
	}
	st.Unassigned = st.Partitions - len(served)
	if s, err := js.Stream(ctx, n.linksStream()); err == nil {
		if info, err := s.Info(ctx); err == nil {
			st.Routing = info.State.Msgs
		}
	}
	if s, err := js.Stream(ctx, n.stateStream()); err == nil {
		if info, err := s.Info(ctx); err == nil {
			st.URLStates = info.State.Msgs
		}
	}
	return st, nil
}

// ErrNoCluster means the server has no cluster of that name.
var ErrNoCluster = errors.New("cluster: no cluster of that name on this NATS server (start a node with sonda node)")

func atoiOr(s string, def int) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return def
		}
		n = n*10 + int(c-'0')
	}
	if s == "" {
		return def
	}
	return n
}
