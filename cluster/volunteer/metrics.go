package volunteer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sonda-search/sonda/cluster"
)

// Metrics per worker, as this node saw it (sonda node --metrics-addr serves them with the
// crawl's and the cluster's). `sonda cluster workers list` shows the sum over the nodes.
var (
	labels     = []string{"worker"}
	descTasks  = prometheus.NewDesc("sonda_volunteer_tasks_total", "Worker results this node accepted (checked or not).", labels, nil)
	descReiss  = prometheus.NewDesc("sonda_volunteer_reissued_total", "Tasks a worker let pass their deadline; they went to another worker or to this node.", labels, nil)
	descChecks = prometheus.NewDesc("sonda_volunteer_checks_total", "Worker results checked against this node's own fetch, by outcome.", []string{"worker", "outcome"}, nil)
	descLies   = prometheus.NewDesc("sonda_volunteer_lies_total", "Worker results contradicting their own body.", labels, nil)
	descLate   = prometheus.NewDesc("sonda_volunteer_late_total", "Complete worker results that came well after their deadline.", labels, nil)
	descBytes  = prometheus.NewDesc("sonda_volunteer_bytes_total", "Body bytes a worker delivered.", labels, nil)
	descBusy   = prometheus.NewDesc("sonda_volunteer_task_seconds_total", "Seconds from task to result, summed.", labels, nil)
	descFlight = prometheus.NewDesc("sonda_volunteer_in_flight", "This node's tasks a worker holds now.", labels, nil)
	descQuar   = prometheus.NewDesc("sonda_volunteer_quarantined", "1 when the worker is quarantined or revoked, else 0.", labels, nil)
	descRep    = prometheus.NewDesc("sonda_volunteer_reputation", "Posterior mean share of checks the worker passes, over every node's checks.", labels, nil)
)

// Describe implements prometheus.Collector.
func (d *Dispatcher) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{descTasks, descReiss, descChecks, descLies, descLate, descBytes, descBusy, descFlight, descQuar, descRep} {
		ch <- x
	}
}

// Collect implements prometheus.Collector.
func (d *Dispatcher) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, w := range d.workers {
		if w.state == "" {
			continue // heard of, never registered
		}
		st := w.stats
		c := func(desc *prometheus.Desc, v float64, lv ...string) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, append([]string{name}, lv...)...)
		}
		g := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, name)
		}
		c(descTasks, float64(st.Tasks))
		c(descReiss, float64(st.Reissued))
		c(descChecks, float64(st.Passed), "passed")
		c(descChecks, float64(st.Failed), "failed")
		c(descLies, float64(st.Lies))
		c(descLate, float64(st.Late))
		c(descBytes, float64(st.Bytes))
		c(descBusy, st.Busy)
		g(descFlight, float64(w.inFlight))
		q := 0.0
		if w.state != cluster.WorkerActive {
			q = 1
		}
		g(descQuar, q)
		all := w.evidence()
		g(descRep, float64(all.Passed+1)/float64(all.Passed+all.Failed+all.Lies+2))
	}
}
