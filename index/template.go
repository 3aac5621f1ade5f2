package index

import (
	"hash/maphash"
	"strings"
	"sync"
)

// siteTemplates learns, host by host, which text blocks a site repeats on its pages: a
// block found on templatePages distinct pages of the same host is the site's template (a
// "popular topics" box, a slogan, a legal footer built from plain <div>s, which neither
// landmarks nor link density reveal) and is left out of the bodies of all the host's
// pages. (Bar-Yossef and Rajagopalan, "Template detection via data mining", WWW 2002,
// find templates the same way, as fragments shared by many pages of a site.)
//
// What a page is indexed with must not depend on the order in which pages reach the
// index: a crawl with the index in step, one whose index catches up after a crash, and
// a rebuild from the store must all give the same index (crawl order differs between
// runs and between workers). So the rule is a property of the set of pages, not of their
// order: a page's body is its own text (pageText) less every line that is a template
// block of its host (strip). The pages indexed before a block was found to be a template
// are stripped again (Sink.restrip), and strip is a filter of lines, so stripping again
// with a larger template set gives what stripping once with it would.
//
// Stripping again reads every indexed page of the host, so it is done at once only while
// the host is small (restripDeferFrom pages). A large host whose template grows all the
// time (pages that share paragraphs: quotes, syndicated text) would otherwise be read
// again in full for each new block, a cost per page that grows with the host: 20 % of
// a 200,000-page crawl's CPU, 1.6 ms per page, on 200 hosts of 1,000 pages (docs/
// benchmarks.md). A large host is stripped again once its page count has doubled since
// the last time, and when the crawl ends (Sink.Compact), so each page is read again a
// bounded number of times; in between, only its older pages still hold the newest
// template blocks.
//
// Memory is bounded whatever the crawl's size: at most templateHosts hosts (the least
// recently seen is forgotten first) and templateBlocks distinct blocks per host (blocks
// first seen after that are not counted; a template shows itself on a site's first
// pages). These bounds, and a restart (the counts live in memory), are where order can
// still matter: a host forgotten or a block not counted is stripped less.
type siteTemplates struct {
	mu    sync.Mutex
	seed  maphash.Seed
	hosts map[string]*hostBlocks
	clock uint64
	// grown are the hosts with new template blocks since takeGrown.
	grown map[string]struct{}
}

const (
	templatePages    = 4
	templateHosts    = 1024
	templateBlocks   = 2048
	restripDeferFrom = 128
)

type hostBlocks struct {
	seen      map[uint64]blockPages // block hash → the pages it is on
	templates int                   // blocks on templatePages pages
	usedAt    uint64
	pages     int // pages observed (a page observed again counts again: a bound, not a count)
	restripAt int // pages from which the host's grown template is taken for a restrip
}

// blockPages counts the distinct pages a block is on, up to templatePages, telling pages
// apart by a hash of their IDs (a page indexed again, on a revisit or a catch-up, is
// the same page).
type blockPages struct {
	pages [templatePages - 1]uint32
	n     uint8
}

func (b *blockPages) template() bool { return b.n >= templatePages }

// add counts page and reports whether that made the block a template.
func (b *blockPages) add(page uint32) bool {
	if b.template() {
		return false
	}
	for _, p := range b.pages[:b.n] {
		if p == page {
			return false
		}
	}
	if int(b.n) < len(b.pages) {
		b.pages[b.n] = page
	}
	b.n++
	return b.template()
}

func newSiteTemplates() *siteTemplates {
	return &siteTemplates{seed: maphash.MakeSeed(), hosts: map[string]*hostBlocks{}, grown: map[string]struct{}{}}
}

// observe counts the page with ID page of host as holding blocks (each block's text, no
// newlines).
func (t *siteTemplates) observe(host, page string, blocks []string) {
	hashes := make([]uint64, len(blocks))
	for i, b := range blocks {
		hashes[i] = maphash.String(t.seed, b)
	}
	pageHash := uint32(maphash.String(t.seed, page)) | 1 // never 0, an empty slot
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clock++
	h := t.hosts[host]
	if h == nil {
		if len(t.hosts) >= templateHosts {
			t.forgetOldest()
		}
		h = &hostBlocks{seen: map[uint64]blockPages{}}
		t.hosts[host] = h
	}
	h.usedAt = t.clock
	h.pages++
	for _, x := range hashes {
		b, ok := h.seen[x]
		if !ok && len(h.seen) >= templateBlocks {
			continue
		}
		if b.add(pageHash) {
			h.templates++
			t.grown[host] = struct{}{}
		}
		h.seen[x] = b
	}
}

// strip returns body (lines of text blocks) without the lines that are template blocks
// of host. Whether a line is left out depends on the line and the template set alone,
// never on the rest of the body, so stripping twice is stripping once with the larger
// set: a page all of whose blocks are the site's is indexed with no body (its title,
// headings and anchors still find it).
func (t *siteTemplates) strip(host, body string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[host]
	if h == nil || h.templates == 0 {
		return body
	}
	isTemplate := func(line string) bool {
		x, ok := h.seen[maphash.String(t.seed, line)]
		return ok && x.template()
	}
	// Most bodies have no line to leave out (a document is stripped when it is made and
	// again when its batch is written), so nothing is copied until one is found: building
	// every body anew, in a buffer grown by doubling, was a tenth of a crawl's allocated
	// bytes.
	rest := body
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if isTemplate(line) {
			break
		}
		rest = after
	}
	if rest == "" {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	keep := func(line string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	for kept := body[:len(body)-len(rest)]; kept != ""; {
		line, after, _ := strings.Cut(kept, "\n")
		kept = after
		keep(line)
	}
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if !isTemplate(line) {
			keep(line)
		}
	}
	return b.String()
}

// takeGrown returns the hosts that found new template blocks since they were last
// taken and are due for a restrip: every one with all, else the small ones and the large
// ones whose page count has doubled since (restripDeferFrom). The others stay grown.
func (t *siteTemplates) takeGrown(all bool) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.grown))
	for host := range t.grown {
		h := t.hosts[host]
		if !all && h.pages < h.restripAt {
			continue
		}
		if h.pages >= restripDeferFrom {
			h.restripAt = 2 * h.pages
		}
		out = append(out, host)
		delete(t.grown, host)
	}
	return out
}

// regrow gives back hosts taken by takeGrown whose documents could not be stripped.
func (t *siteTemplates) regrow(hosts []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hosts {
		if t.hosts[h] != nil {
			t.grown[h] = struct{}{}
		}
	}
}

func (t *siteTemplates) forgetOldest() {
	oldest, at := "", uint64(0)
	for host, h := range t.hosts {
		if oldest == "" || h.usedAt < at {
			oldest, at = host, h.usedAt
		}
	}
	delete(t.hosts, oldest)
	delete(t.grown, oldest)
}
