// Package volunteer owns sonda's untrusted volunteer workers: machines nobody on the team
// controls that fetch and parse pages for the nodes of a cluster (package cluster), and
// the trusted side that hands them work and checks what they return.
//
// A worker keeps no crawl state. A node still decides everything that needs trust: which
// URL is fetched and when (scope, robots.txt, politeness stay in the node's crawl loop,
// which leases the URL as usual); the node then sends the worker a task on the worker's
// own subject, with a deadline and a lease token (an HMAC of the task by the node's secret),
// and waits. A result must come back on the worker's own result subject, for a task still
// waiting, with the token it was given: anything else (late, repeated, forged) is dropped,
// so submissions are idempotent. A task whose deadline passes goes to another worker after
// the host's politeness delay (an honest worker never starts a request after the
// deadline), and finally to the node's own fetcher.
//
// # Validation
//
// The node parses the returned body itself, as it parses its own fetches: nothing the
// worker says about the page is used. The worker's own digest of the page (links and a
// hash of the text) is recomputed from the body; a result that contradicts its own body is
// a certain lie. A share of results is checked against a fetch by the node itself (after
// the politeness delay): a page whose text or links differ beyond what a changing page
// explains fails the check, and the trusted copy is what the crawl keeps. The share comes
// from the worker's reputation, a Beta posterior over the share of checks it fails:
// check = min(1, max(MinCheck, 4·E[fail])), so a new worker is checked on every task, an
// established one on about MinCheck of them, and one that failed a check has its next
// Probation results all checked. A certain lie, or failed checks that make a failure rate above what
// changing pages explain nearly certain (Convicted), quarantines the worker cluster-wide (the registry, package cluster): every node stops giving it tasks,
// and removes from its index and fetches again every page it accepted from it unchecked.
//
// # NATS names
//
//	sonda.<cluster>.worker.<name>.task               tasks for worker name (it subscribes)
//	sonda.<cluster>.worker.<name>.out.hello          worker's heartbeat with its free slots
//	sonda.<cluster>.worker.<name>.out.res.<node id>  its results for node
//
// A worker's credential (cluster.Auth.IssueWorker) allows exactly its task subject and its
// out subjects, so the worker's name on a message is vouched for by the server.
package volunteer

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sonda-search/sonda/cluster"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
)

// Task is what a node asks a worker to fetch.
type Task struct {
	ID       string    `json:"id"`
	Node     string    `json:"node"` // where the result goes
	Token    string    `json:"token"`
	URL      string    `json:"url"`
	Deadline time.Time `json:"deadline"` // no request may start after it; the result is useless after it
	// Conditional request headers of a revisit.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	UserAgent    string `json:"user_agent"`
	MaxBody      int64  `json:"max_body"`
}

// Result is what a worker returns: the response as received and its digest of the page.
type Result struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	// The response: status, header, body as received (content-encoded; the node decodes
	// it as its own fetcher would), and what the WARC capture needs.
	Status            int         `json:"status"`
	Header            http.Header `json:"header,omitempty"`
	Wire              []byte      `json:"wire,omitempty"`
	RawRequest        []byte      `json:"raw_request,omitempty"`
	RawResponseHeader []byte      `json:"raw_response_header,omitempty"`
	Location          string      `json:"location,omitempty"`
	Truncated         string      `json:"truncated,omitempty"`
	Skipped           string      `json:"skipped,omitempty"`
	StartedAt         time.Time   `json:"started_at"`
	Millis            int64       `json:"ms"`
	ErrKind           string      `json:"err_kind,omitempty"`
	Err               string      `json:"err,omitempty"`
	Digest            Digest      `json:"digest"`
}

// Hello is a worker's heartbeat: how many tasks it can take.
type Hello struct {
	Concurrency int `json:"concurrency"`
	Free        int `json:"free"`
}

// Digest is what a page says, reduced to what can be compared: its followable links
// (sorted, distinct) and a hash of its visible text.
type Digest struct {
	Links []string `json:"links,omitempty"`
	Text  string   `json:"text,omitempty"`
}

// Equal says two digests describe the same page.
func (d Digest) Equal(o Digest) bool { return d.Text == o.Text && slices.Equal(d.Links, o.Links) }

// page is a parsed page: its digest and its words, for comparing two copies.
type page struct {
	Digest
	words map[string]bool
}

// digestOf parses a decoded response's text the way worker and node both do.
func digestOf(res *fetch.Result) page {
	if res == nil || res.UTF8 == nil || !strings.Contains(res.MediaType, "html") {
		sum := sha256.Sum256(bodyOf(res))
		return page{Digest: Digest{Text: hex.EncodeToString(sum[:16])}}
	}
	url := res.FinalURL
	if url == "" {
		url = res.URL
	}
	p, err := parse.Parse(res.UTF8, url, parse.Options{})
	if err != nil {
		sum := sha256.Sum256(res.UTF8)
		return page{Digest: Digest{Text: hex.EncodeToString(sum[:16])}}
	}
	var d page
	seen := map[string]bool{}
	for _, l := range p.Links {
		if !seen[l.URL] {
			seen[l.URL] = true
			d.Links = append(d.Links, l.URL)
		}
	}
	slices.Sort(d.Links)
	text := p.Text()
	sum := sha256.Sum256([]byte(text))
	d.Text = hex.EncodeToString(sum[:16])
	d.words = map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(text)) {
		d.words[w] = true
	}
	return d
}

func bodyOf(res *fetch.Result) []byte {
	if res == nil {
		return nil
	}
	return res.Body
}

// Agreement thresholds between a worker's copy of a page and the node's own: a page that
// changes between two fetches (a date, a counter, a rotating link) stays above them; a page
// whose text was rewritten or into which links were injected falls below.
const (
	minWordOverlap = 0.9 // Jaccard similarity of the two copies' word sets
	maxForeignLink = 0.2 // share of the worker's links (on sites the page links to) the node's copy does not have, beyond 2
)

// agree says whether a worker's copy w of a page and the node's copy t tell the same
// story, allowing for a page that changes.
func agree(w, t *fetch.Result) (bool, string) {
	if w.Status != t.Status {
		return false, "status " + strconv.Itoa(w.Status) + " where the node got " + strconv.Itoa(t.Status)
	}
	return agreePages(digestOf(w), digestOf(t))
}

// agreePages compares two parsed copies of a page (a worker's a, the node's b).
func agreePages(a, b page) (bool, string) {
	if a.Digest.Equal(b.Digest) {
		return true, ""
	}
	if a.words == nil || b.words == nil {
		return false, "the body differs"
	}
	inter := 0
	for w := range a.words {
		if b.words[w] {
			inter++
		}
	}
	union := len(a.words) + len(b.words) - inter
	if union > 0 && float64(inter)/float64(union) < minWordOverlap {
		return false, "the text differs (word overlap " + strconv.FormatFloat(float64(inter)/float64(union), 'f', 2, 64) + ")"
	}
	theirs, sites := map[string]bool{}, map[string]bool{}
	for _, l := range b.Links {
		theirs[l] = true
		sites[siteOf(l)] = true
	}
	foreign := 0
	for _, l := range a.Links {
		if theirs[l] {
			continue
		}
		// A page that changes rotates links among the sites it already links to; a link
		// to a site the node's copy never mentions was put there.
		if !sites[siteOf(l)] {
			return false, "a link to " + siteOf(l) + ", a site the page does not link to"
		}
		foreign++
	}
	if foreign > 2 && float64(foreign) > maxForeignLink*float64(len(a.Links)) {
		return false, strconv.Itoa(foreign) + " links the page does not have"
	}
	return true, ""
}

// siteOf is a link's registrable domain ("" when it does not parse).
func siteOf(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	return cluster.DomainOf(u.Host)
}

// sign is a task's lease token: only the node that issued the task can make it, and it
// binds the task to its worker, URL and deadline.
func sign(secret []byte, worker string, t *Task) string {
	m := hmac.New(sha256.New, secret)
	for _, s := range []string{worker, t.ID, t.Node, t.URL, strconv.FormatInt(t.Deadline.UnixMilli(), 10)} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Subjects of a cluster's workers.
func taskSubject(cluster, worker string) string {
	return "sonda." + cluster + ".worker." + worker + ".task"
}
func helloSubject(cluster, worker string) string {
	return "sonda." + cluster + ".worker." + worker + ".out.hello"
}
func resultSubject(cluster, worker, node string) string {
	return "sonda." + cluster + ".worker." + worker + ".out.res." + node
}
