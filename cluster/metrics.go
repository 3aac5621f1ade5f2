package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a node's Prometheus metrics (sonda node --metrics-addr serves them with the
// crawl's).
type metrics struct {
	reg        *prometheus.Registry
	routingLag prometheus.Histogram
}

func (n *Node) newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	labels := prometheus.Labels{"node": n.opts.NodeID, "cluster": n.names.cluster}
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f))
	}
	counter := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, f))
	}
	gauge("sonda_cluster_partitions", "Partitions this node owns and serves.", func() float64 {
		n.mu.Lock()
		defer n.mu.Unlock()
		k := 0
		for _, pt := range n.owned {
			if pt.ready {
				k++
			}
		}
		return float64(k)
	})
	gauge("sonda_cluster_member", "1 while this node's membership is fresh (it may fetch), else 0.", func() float64 {
		n.mu.Lock()
		defer n.mu.Unlock()
		if time.Now().Before(n.validUntil) {
			return 1
		}
		return 0
	})
	gauge("sonda_cluster_outbox_records", "Links and URL states committed locally, not yet acknowledged by JetStream.", func() float64 {
		return float64(n.outCount.Load())
	})
	counter("sonda_cluster_failovers_total", "Partitions taken from a node whose membership expired.", func() float64 {
		return float64(n.failOvers.Load())
	})
	counter("sonda_cluster_admitted_total", "Routed URLs this node admitted as their owner.", func() float64 {
		return float64(n.admitted.Load())
	})
	counter("sonda_cluster_links_skipped_total", "Discovered links not routed: this node's seen set has them, or it routed them recently.", func() float64 {
		return float64(n.skipped.Load())
	})
	counter("sonda_cluster_published_total", "Outbox records published to JetStream.", func() float64 {
		return float64(n.published.Load())
	})
	m.routingLag = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sonda_cluster_routing_lag_seconds",
		Help: "From the commit of a page to JetStream's acknowledgement of what it found.", ConstLabels: labels,
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)})
	m.reg.MustRegister(m.routingLag)
	return m
}

// Gatherer gives the node's metrics to a server that merges them with the crawl's.
func (n *Node) Gatherer() prometheus.Gatherer { return n.metrics.reg }
