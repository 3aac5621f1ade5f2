package config

import (
	"fmt"
	"regexp"
	"time"
)

// Cluster configures cluster mode (package cluster): `sonda node`, `sonda cluster status`
// and the NATS server they share.
type Cluster struct {
	NATS string `yaml:"nats"`
	// Creds is the NATS credentials file of a server in operator mode (`sonda nats --auth`).
	Creds      string        `yaml:"creds"`
	Name       string        `yaml:"name"`
	NodeID     string        `yaml:"node-id"`
	TTL        time.Duration `yaml:"ttl"`
	Partitions int           `yaml:"partitions"`
	// Workers lets volunteer workers fetch this node's pages (package cluster/volunteer).
	Workers bool `yaml:"workers"`
	// WorkerTimeout is a worker's deadline for one task; WorkerCheck the least share of an
	// established worker's pages the node fetches again itself to check them.
	WorkerTimeout time.Duration `yaml:"worker-timeout"`
	WorkerCheck   float64       `yaml:"worker-check"`
	// WorkerCanary is the share of tasks preceded by a canary (a page the node knows).
	WorkerCanary float64 `yaml:"worker-canary"`
	// SearchTimeout is how long a search over the cluster (sonda serve --nats) waits for a
	// node in each of its phases.
	SearchTimeout time.Duration `yaml:"search-timeout"`
	// GlobalRanks makes the nodes rank pages by PageRank over the whole cluster's link
	// graph, computed by one node (package cluster, ranks.go), rather than each over its
	// own share of the links.
	GlobalRanks bool `yaml:"global-ranks"`
}

var clusterNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (c *Config) validateCluster(errs *[]string) {
	k := c.Cluster
	add := func(format string, args ...any) { *errs = append(*errs, fmt.Sprintf(format, args...)) }
	if !clusterNameRe.MatchString(k.Name) {
		add("cluster.name: %q: use 1 to 64 letters, digits, '-' or '_'", k.Name)
	}
	if k.NodeID != "" && !clusterNameRe.MatchString(k.NodeID) {
		add("cluster.node-id: %q: use 1 to 64 letters, digits, '-' or '_'", k.NodeID)
	}
	if k.TTL < time.Second {
		add("cluster.ttl: must be at least 1s (got %s)", k.TTL)
	}
	if k.Partitions < 1 || k.Partitions > 4096 {
		add("cluster.partitions: must be from 1 to 4096 (got %d)", k.Partitions)
	}
	if k.WorkerTimeout < 100*time.Millisecond || k.WorkerTimeout > 10*time.Minute {
		add("cluster.worker-timeout: must be from 100ms to 10m (got %s)", k.WorkerTimeout)
	}
	if k.WorkerCheck <= 0 || k.WorkerCheck > 1 {
		add("cluster.worker-check: must be above 0 and at most 1 (got %g)", k.WorkerCheck)
	}
	if k.WorkerCanary < 0 || k.WorkerCanary > 1 {
		add("cluster.worker-canary: must be from 0 to 1 (got %g)", k.WorkerCanary)
	}
	if k.SearchTimeout < 10*time.Millisecond || k.SearchTimeout > time.Minute {
		add("cluster.search-timeout: must be from 10ms to 1m (got %s)", k.SearchTimeout)
	}
}
