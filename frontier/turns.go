package frontier

// turns shares leases between a host's two queues, the scheduled one (due revisits and
// retries) and the new one (never-fetched URLs), and picks between hosts of the two kinds,
// so that the scheduled side gets share of them while both have work, spread as evenly as
// the share allows: at 0.5 the two alternate, at 0.8 four scheduled leases come in every
// five, at 0.25 one in four. Every lease counts, also one made while the other queue was
// empty: a revisit that comes due after three new URLs at 0.25 goes next, as revisits that
// ask for less than their share keep their time. The credit is bounded, so a queue that was
// alone for a while gets at most one turn ahead from it, never a backlog. The zero value
// starts with the scheduled queue.
type turns struct {
	credit float64 // scheduled leases owed (positive) or taken ahead (negative), in [-0.5, 0.5]
}

// scheduledNext reports whether the scheduled side goes next when both have work.
func (t turns) scheduledNext(share float64) bool { return t.credit+share >= 0.5 }

// took records a lease (or pick) from the scheduled side or the new one.
func (t *turns) took(scheduled bool, share float64) {
	t.credit += share
	if scheduled {
		t.credit--
	}
	t.credit = min(max(t.credit, -0.5), 0.5)
}
