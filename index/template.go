package index

import (
	"hash/maphash"
	"sync"
)

// siteTemplates learns, host by host, which text blocks a site repeats on its pages: a
// block found on templatePages earlier pages of the same host is the site's template
// (a "popular topics" box, a slogan, a legal footer built from plain <div>s, which
// neither landmarks nor link density reveal) and is left out of the pages indexed after
// that. A site's first few pages, usually its home and listing pages, keep it; every
// abstract or article after them loses it. (Bar-Yossef and Rajagopalan, "Template
// detection via data mining", WWW 2002, find templates the same way, as fragments shared
// by many pages of a site.)
//
// Memory is bounded whatever the crawl's size: at most templateHosts hosts (the least
// recently seen is forgotten first) and templateBlocks distinct blocks per host (blocks
// first seen after that are not counted; a template shows itself on a site's first pages).
type siteTemplates struct {
	mu    sync.Mutex
	seed  maphash.Seed
	hosts map[string]*hostBlocks
	clock uint64
}

const (
	templatePages  = 3
	templateHosts  = 1024
	templateBlocks = 2048
)

type hostBlocks struct {
	seen   map[uint64]uint8 // block hash → pages it was on (saturating at templatePages)
	usedAt uint64
}

func newSiteTemplates() *siteTemplates {
	return &siteTemplates{seed: maphash.MakeSeed(), hosts: map[string]*hostBlocks{}}
}

// observe counts one page of host with blocks and reports, for each block, whether it is
// the site's template: found on templatePages earlier pages.
func (t *siteTemplates) observe(host string, blocks []string) []bool {
	hashes := make([]uint64, len(blocks))
	for i, b := range blocks {
		hashes[i] = maphash.String(t.seed, b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clock++
	h := t.hosts[host]
	if h == nil {
		if len(t.hosts) >= templateHosts {
			t.forgetOldest()
		}
		h = &hostBlocks{seen: map[uint64]uint8{}}
		t.hosts[host] = h
	}
	h.usedAt = t.clock
	out := make([]bool, len(blocks))
	for i, x := range hashes {
		out[i] = h.seen[x] >= templatePages // before this page counts
	}
	counted := make(map[uint64]bool, len(blocks))
	for _, x := range hashes {
		n, ok := h.seen[x]
		if counted[x] {
			continue // a block twice on one page is one page
		}
		counted[x] = true
		switch {
		case ok && n < templatePages:
			h.seen[x] = n + 1
		case !ok && len(h.seen) < templateBlocks:
			h.seen[x] = 1
		}
	}
	return out
}

func (t *siteTemplates) forgetOldest() {
	oldest, at := "", uint64(0)
	for host, h := range t.hosts {
		if oldest == "" || h.usedAt < at {
			oldest, at = host, h.usedAt
		}
	}
	delete(t.hosts, oldest)
}
