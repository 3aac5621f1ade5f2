package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Volunteer workers' registry. Every worker a cluster admitted has a record in the KV
// bucket sonda_<cluster>_workers under "w.<name>" (its key, state, why), and every node
// that gave it tasks keeps its counters there under "s.<name>.<node>", so `sonda cluster
// workers list` and every node see the same states and the sum of the evidence. Workers
// cannot read the bucket (their credentials allow two subjects, no JetStream).

// Worker states.
const (
	WorkerActive      = "active"      // may get tasks
	WorkerQuarantined = "quarantined" // caught returning what the page does not say: no tasks, its pages refetched
	WorkerRevoked     = "revoked"     // credential revoked on the server
)

// WorkerRecord is a worker's entry in the registry.
type WorkerRecord struct {
	Name   string    `json:"name"`
	Key    string    `json:"key"` // the NATS user's public key
	State  string    `json:"state"`
	Added  time.Time `json:"added"`
	Since  time.Time `json:"since"` // when State was set
	Reason string    `json:"reason,omitempty"`
	// Quarantined is when a node quarantined it; kept when it is revoked later, so that
	// a node that was down meanwhile still purges its pages.
	Quarantined time.Time `json:"quarantined,omitzero"`
	// Former are the earlier workers of this name (revoked, then the name admitted again),
	// oldest first: a node that was down meanwhile still purges a quarantined one's pages.
	Former []FormerWorker `json:"former,omitempty"`
}

// FormerWorker is an earlier, revoked worker of a name: its key, and when it was
// quarantined (zero if it never was).
type FormerWorker struct {
	Key         string    `json:"key"`
	Quarantined time.Time `json:"quarantined,omitzero"`
}

// maxFormer bounds WorkerRecord.Former: the oldest are dropped first (a node down through
// that many re-admissions of one name purges the dropped ones' pages only when the name
// is quarantined again).
const maxFormer = 32

// WorkerStats are what one node saw of one worker.
type WorkerStats struct {
	Tasks     int64     `json:"tasks"`    // results accepted
	Reissued  int64     `json:"reissued"` // tasks that passed their deadline and went to another
	Checked   int64     `json:"checked"`  // results checked against a trusted fetch or a canary
	Passed    int64     `json:"passed"`   // checks it passed
	Failed    int64     `json:"failed"`   // checks it failed (a lie, or a page that changed)
	Lies      int64     `json:"lies"`     // results contradicting their own body (certain lies)
	Late      int64     `json:"late"`     // complete results that came well after their deadline
	Canaries  int64     `json:"canaries"` // checks that were canaries (pages the node knew)
	Bytes     int64     `json:"bytes"`    // body bytes delivered
	Busy      float64   `json:"busy_s"`   // seconds from task to result, summed
	Updated   time.Time `json:"updated"`  // when the node wrote this
	FirstTask time.Time `json:"first_task"`
}

// WorkerView is a worker with its counters summed over the nodes, for `workers list`.
type WorkerView struct {
	WorkerRecord
	WorkerStats
	// Reputation is the posterior mean of the share of checks the worker passes (a Beta
	// distribution starting at Beta(1,1)).
	Reputation float64 `json:"reputation"`
	// PagesPerSec is its accepted results per second since its first task.
	PagesPerSec float64 `json:"pages_per_s"`
}

// add sums o into s (one worker seen by several nodes).
func (s *WorkerStats) add(o WorkerStats) {
	s.Tasks, s.Reissued, s.Checked = s.Tasks+o.Tasks, s.Reissued+o.Reissued, s.Checked+o.Checked
	s.Passed, s.Failed, s.Lies = s.Passed+o.Passed, s.Failed+o.Failed, s.Lies+o.Lies
	s.Late += o.Late
	s.Bytes, s.Busy, s.Canaries = s.Bytes+o.Bytes, s.Busy+o.Busy, s.Canaries+o.Canaries
	if !o.FirstTask.IsZero() && (s.FirstTask.IsZero() || o.FirstTask.Before(s.FirstTask)) {
		s.FirstTask = o.FirstTask
	}
	if o.Updated.After(s.Updated) {
		s.Updated = o.Updated
	}
}

func (n names) workers() string { return "sonda_" + n.cluster + "_workers" }

// WorkerRegistry opens (creating it if needed) a cluster's worker registry.
func WorkerRegistry(ctx context.Context, js jetstream.JetStream, cluster string) (jetstream.KeyValue, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	return openKV(ctx, js, jetstream.KeyValueConfig{Bucket: names{cluster}.workers(), History: 1,
		Description: "sonda cluster " + cluster + ": volunteer workers and what the nodes saw of them"})
}

// AddWorker issues a credential for a new worker and records it as active. A name already
// in use is refused (revoke it first): names are what nodes and operators know workers by.
func AddWorker(ctx context.Context, js jetstream.JetStream, a *Auth, cluster, name string) (creds []byte, err error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	kv, err := WorkerRegistry(ctx, js, cluster)
	if err != nil {
		return nil, err
	}
	creds, pub, err := a.IssueWorker(cluster, name)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	rec, _ := json.Marshal(WorkerRecord{Name: name, Key: pub, State: WorkerActive, Added: now, Since: now})
	_, err = kv.Create(ctx, "w."+name, rec)
	if errors.Is(err, jetstream.ErrKeyExists) {
		// A revoked name may be admitted again, with a new key (the old one stays revoked).
		e, gerr := kv.Get(ctx, "w."+name)
		var old WorkerRecord
		if gerr != nil || json.Unmarshal(e.Value(), &old) != nil || old.State != WorkerRevoked {
			return nil, fmt.Errorf("worker %q exists already: revoke it first or pick another name", name)
		}
		// The new worker's record remembers the old one, whose pages nodes still tell
		// apart (and purge, if it was quarantined).
		former := append(old.Former, FormerWorker{Key: old.Key, Quarantined: old.Quarantined})
		rec, _ = json.Marshal(WorkerRecord{Name: name, Key: pub, State: WorkerActive, Added: now, Since: now,
			Former: former[max(0, len(former)-maxFormer):]})
		_, err = kv.Update(ctx, "w."+name, rec, e.Revision())
	}
	if err != nil {
		return nil, jsError("record the worker", err)
	}
	return creds, nil
}

// RevokeWorker revokes a worker's credential on the server (through sys, a connection with
// the system account's credentials) and marks it revoked; the server closes its
// connection at once.
func RevokeWorker(ctx context.Context, js jetstream.JetStream, sys *nats.Conn, a *Auth, cluster, name string) error {
	rec, err := GetWorker(ctx, js, cluster, name)
	if err != nil {
		return err
	}
	if err := a.Revoke(sys, rec.Key); err != nil {
		return err
	}
	return SetWorkerState(ctx, js, cluster, name, WorkerRevoked, "revoked by an operator")
}

// GetWorker reads a worker's record.
func GetWorker(ctx context.Context, js jetstream.JetStream, cluster, name string) (WorkerRecord, error) {
	var rec WorkerRecord
	kv, err := WorkerRegistry(ctx, js, cluster)
	if err != nil {
		return rec, err
	}
	e, err := kv.Get(ctx, "w."+name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, fmt.Errorf("no worker %q in cluster %s (`sonda cluster workers list` shows them)", name, cluster)
	}
	if err != nil {
		return rec, jsError("read the worker", err)
	}
	err = json.Unmarshal(e.Value(), &rec)
	return rec, err
}

// SetWorkerState changes a worker's state (compare-and-set, so two nodes quarantining the
// same liar do not lose each other's reason). A revoked worker stays revoked.
func SetWorkerState(ctx context.Context, js jetstream.JetStream, cluster, name, state, reason string) error {
	kv, err := WorkerRegistry(ctx, js, cluster)
	if err != nil {
		return err
	}
	for range 10 {
		e, err := kv.Get(ctx, "w."+name)
		if err != nil {
			return jsError("read the worker", err)
		}
		var rec WorkerRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return err
		}
		if rec.State == state || rec.State == WorkerRevoked {
			return nil
		}
		rec.State, rec.Reason, rec.Since = state, reason, time.Now().UTC()
		if state == WorkerQuarantined {
			rec.Quarantined = rec.Since
		}
		b, _ := json.Marshal(rec)
		if _, err := kv.Update(ctx, "w."+name, b, e.Revision()); err == nil {
			return nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return jsError("update the worker", err)
		}
	}
	return fmt.Errorf("worker %q: its record kept changing under us", name)
}

// PutWorkerStats records what node saw of worker name.
func PutWorkerStats(ctx context.Context, kv jetstream.KeyValue, name, node string, st WorkerStats) error {
	b, _ := json.Marshal(st)
	_, err := kv.Put(ctx, "s."+name+"."+node, b)
	return err
}

// ListWorkers reads every worker with its counters summed over the nodes.
func ListWorkers(ctx context.Context, js jetstream.JetStream, cluster string) ([]WorkerView, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	kv, err := js.KeyValue(ctx, names{cluster}.workers())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil // no worker was ever admitted
	}
	if err != nil {
		return nil, jsError("open the worker registry", err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, jsError("list the workers", err)
	}
	views := map[string]*WorkerView{}
	view := func(name string) *WorkerView {
		v := views[name]
		if v == nil {
			v = &WorkerView{WorkerRecord: WorkerRecord{Name: name}}
			views[name] = v
		}
		return v
	}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue // deleted meanwhile
		}
		switch {
		case strings.HasPrefix(k, "w."):
			v := view(strings.TrimPrefix(k, "w."))
			if err := json.Unmarshal(e.Value(), &v.WorkerRecord); err != nil {
				return nil, fmt.Errorf("worker record %s: %w", k, err)
			}
		case strings.HasPrefix(k, "s."):
			name, _, _ := strings.Cut(strings.TrimPrefix(k, "s."), ".")
			var st WorkerStats
			if json.Unmarshal(e.Value(), &st) != nil {
				continue
			}
			view(name).WorkerStats.add(st)
		}
	}
	out := make([]WorkerView, 0, len(views))
	for _, v := range views {
		if v.Key == "" {
			continue // counters of a worker whose record is gone
		}
		v.Reputation = float64(v.Passed+1) / float64(v.Passed+v.Failed+v.Lies+2)
		if el := v.Updated.Sub(v.FirstTask).Seconds(); el > 0 && !v.FirstTask.IsZero() {
			v.PagesPerSec = float64(v.Tasks) / el
		}
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
