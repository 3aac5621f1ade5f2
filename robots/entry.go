package robots

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxRedirects is how many consecutive redirects the fetcher should follow
// for /robots.txt (RFC 9309 §2.3.1.2: "at least five", across hosts too).
// A response that is still a redirect after that is passed to FromFetch as
// it is and means "unavailable".
const MaxRedirects = 5

// Outcome classifies a robots.txt fetch the way RFC 9309 §2.3.1 does.
type Outcome uint8

const (
	// Fetched: a 2xx response; the body's rules apply.
	Fetched Outcome = iota + 1
	// Unavailable: a 4xx other than 429, or more than MaxRedirects
	// redirects. The file is treated as absent: everything is allowed.
	Unavailable
	// Unreachable: a 5xx, a 429, a network error or any other status. The
	// file is undefined: everything is disallowed until a retry succeeds.
	Unreachable
)

func (o Outcome) String() string {
	switch o {
	case Fetched:
		return "fetched"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Policy sets the cache and retry timing of entries. The zero Policy uses
// the defaults given for each field.
type Policy struct {
	// TTL is the longest an entry is trusted before it is fetched again
	// (default and upper bound 24h: RFC 9309 §2.4 says crawlers SHOULD NOT
	// use a cached copy longer). A Cache-Control max-age can only shorten it.
	TTL time.Duration
	// MinTTL is the floor for a Cache-Control max-age (default 1h), so that
	// "max-age=0" or "no-cache" does not make every page fetch a robots.txt
	// fetch too.
	MinTTL time.Duration
	// RetryMin is the wait after the first unreachable fetch (default 1m);
	// it doubles with each further consecutive failure.
	RetryMin time.Duration
	// RetryMax caps that wait (default 1h).
	RetryMax time.Duration
	// MaxFailures is how many consecutive unreachable fetches make GiveUp
	// true (default 5, which spends about 15 minutes with the default
	// retries); negative means never give up.
	MaxFailures int
}

func (p Policy) withDefaults() Policy {
	if p.TTL <= 0 || p.TTL > 24*time.Hour {
		p.TTL = 24 * time.Hour
	}
	if p.MinTTL <= 0 {
		p.MinTTL = time.Hour
	}
	p.MinTTL = min(p.MinTTL, p.TTL)
	if p.RetryMin <= 0 {
		p.RetryMin = time.Minute
	}
	if p.RetryMax <= 0 {
		p.RetryMax = time.Hour
	}
	p.RetryMax = max(p.RetryMax, p.RetryMin)
	if p.MaxFailures == 0 {
		p.MaxFailures = 5
	}
	return p
}

// Response is what the fetcher learned when it asked for /robots.txt,
// after following at most MaxRedirects redirects.
type Response struct {
	Status       int    // HTTP status of the last response; ignored when Err is set
	Body         []byte // its body; only the first MaxSize octets are used
	CacheControl string // its Cache-Control header, if any
	Err          error  // the transport error (DNS, connect, TLS, timeout, reading the body)
}

// Entry is the crawler's knowledge of one host's robots.txt: which rules
// apply, until when, and how often fetching it has failed in a row. Entries
// are values the crawler keeps per host and persists with MarshalBinary;
// an Entry is not modified after FromFetch or UnmarshalBinary returns it.
type Entry struct {
	Outcome   Outcome
	Status    int       // HTTP status; 0 after a transport error
	FetchedAt time.Time // when the fetch finished
	Expires   time.Time // when to fetch again: the cache TTL, or the retry time when Unreachable
	Failures  int       // consecutive Unreachable fetches ending with this one; 0 otherwise
	Err       string    // why the fetch was Unreachable

	body      []byte // the parsed body (Fetched only), at most MaxSize octets
	truncated bool   // the body was cut to MaxSize
	rules     *Robots
}

// FromFetch turns a fetch of /robots.txt into an Entry (RFC 9309 §2.3-2.4):
//
//   - 2xx: the body is parsed (first MaxSize octets) and cached for the TTL,
//     shortened by Cache-Control max-age down to MinTTL.
//   - 304 Not Modified: prev's rules are kept and cached afresh; without a
//     fetched prev it is treated like any other 3xx.
//   - 3xx (the fetcher gave up after MaxRedirects): unavailable, allow all.
//   - 4xx except 429 (401 and 403 included): unavailable, allow all.
//   - 429, 5xx, other statuses, transport errors: unreachable, disallow all,
//     retried after RetryMin doubled per consecutive failure up to RetryMax.
//     RFC 9309 lets a crawler keep using a stale copy instead; sonda does not,
//     so a failing server sees no page requests until robots.txt recovers.
//     429 is grouped with 5xx (as Google does) because "too many requests"
//     is not permission to crawl everything.
//
// prev is the host's previous entry or nil; it carries the failure count.
func FromFetch(resp Response, now time.Time, prev *Entry, p Policy) *Entry {
	p = p.withDefaults()
	e := &Entry{Status: resp.Status, FetchedAt: now}
	switch {
	case resp.Err != nil:
		e.Status = 0
		e.unreachable(resp.Err.Error(), now, prev, p)
	case resp.Status == 304 && prev != nil && prev.Outcome == Fetched:
		e.Outcome = Fetched
		e.body, e.truncated, e.rules = prev.body, prev.truncated, prev.rules
		e.Expires = now.Add(cacheTTL(resp.CacheControl, p))
	case resp.Status >= 200 && resp.Status <= 299:
		e.Outcome = Fetched
		var body []byte
		body, e.truncated = clip(resp.Body, false)
		e.body = append([]byte(nil), body...) // keep only what is parsed
		e.rules = parse(e.body, e.truncated)
		e.Expires = now.Add(cacheTTL(resp.CacheControl, p))
	case resp.Status >= 300 && resp.Status <= 499 && resp.Status != 429:
		e.Outcome = Unavailable
		e.Expires = now.Add(cacheTTL(resp.CacheControl, p))
	default:
		e.unreachable("HTTP "+strconv.Itoa(resp.Status), now, prev, p)
	}
	return e
}

func (e *Entry) unreachable(reason string, now time.Time, prev *Entry, p Policy) {
	e.Outcome = Unreachable
	e.Err = reason
	e.Failures = 1
	if prev != nil && prev.Outcome == Unreachable {
		e.Failures = prev.Failures + 1
	}
	wait := p.RetryMin
	for i := 1; i < e.Failures && wait < p.RetryMax; i++ {
		wait *= 2
	}
	e.Expires = now.Add(min(wait, p.RetryMax))
}

// cacheTTL applies a Cache-Control header to the policy TTL: max-age
// shortens it (never below MinTTL), no-cache and no-store count as
// max-age=0, and anything unparseable is ignored. s-maxage and Expires are
// not consulted: they describe shared caches and clocks we do not trust.
func cacheTTL(cc string, p Policy) time.Duration {
	ttl := p.TTL
	for d := range strings.SplitSeq(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "no-cache", "no-store":
			ttl = 0
		case "max-age":
			secs, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
			if err == nil && secs >= 0 && secs < int64(ttl/time.Second) {
				ttl = time.Duration(secs) * time.Second
			}
		}
	}
	return max(ttl, p.MinTTL)
}

// Rules returns the rules the entry stands for: the parsed file when
// Fetched, AllowAll when Unavailable and DisallowAll when Unreachable. A
// nil or zero Entry (robots.txt not fetched yet) gives DisallowAll, so
// nothing is fetched from a host before its robots.txt.
func (e *Entry) Rules() *Robots {
	if e == nil {
		return DisallowAll()
	}
	switch e.Outcome {
	case Fetched:
		if e.rules != nil {
			return e.rules
		}
	case Unavailable:
		return AllowAll()
	}
	return DisallowAll()
}

// Expired reports whether the entry should be refetched at now.
func (e *Entry) Expired(now time.Time) bool {
	return e == nil || !now.Before(e.Expires)
}

// GiveUp reports whether robots.txt has been unreachable MaxFailures times
// in a row, so the crawler should stop waiting for this host (drop or park
// its queue) rather than retry forever.
func (e *Entry) GiveUp(p Policy) bool {
	p = p.withDefaults()
	return e != nil && e.Outcome == Unreachable && p.MaxFailures > 0 && e.Failures >= p.MaxFailures
}

// Body returns the parsed robots.txt body (nil unless Fetched); callers
// must not modify it.
func (e *Entry) Body() []byte {
	if e == nil {
		return nil
	}
	return e.body
}

const entryVersion = 1

// MarshalBinary encodes the entry for a key-value store. The body is
// stored, not the parsed rules: UnmarshalBinary parses it again, so stored
// entries pick up parser fixes and stay at most MaxSize plus a few dozen
// octets.
func (e *Entry) MarshalBinary() ([]byte, error) {
	fetched, err := e.FetchedAt.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("robots: encode entry: fetched-at: %w", err)
	}
	expires, err := e.Expires.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("robots: encode entry: expires: %w", err)
	}
	var flags byte
	if e.truncated {
		flags |= 1
	}
	b := make([]byte, 0, 48+len(e.Err)+len(e.body))
	b = append(b, entryVersion, byte(e.Outcome), flags)
	b = binary.AppendUvarint(b, uint64(max(e.Status, 0)))
	b = binary.AppendUvarint(b, uint64(max(e.Failures, 0)))
	for _, f := range [][]byte{fetched, expires, []byte(e.Err), e.body} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote and parses the stored
// body again.
func (e *Entry) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if v := d.u8(); v != entryVersion {
		if d.err != nil {
			return d.err
		}
		return fmt.Errorf("robots: decode entry: unknown version %d", v)
	}
	var n Entry
	n.Outcome = Outcome(d.u8())
	flags := d.u8()
	n.truncated = flags&1 != 0
	n.Status = d.int()
	n.Failures = d.int()
	fetched, expires, errText, body := d.bytes(), d.bytes(), d.bytes(), d.bytes()
	switch {
	case d.err != nil:
		return d.err
	case len(d.b) != 0:
		return fmt.Errorf("robots: decode entry: %d trailing octets", len(d.b))
	case n.Outcome < Fetched || n.Outcome > Unreachable:
		return fmt.Errorf("robots: decode entry: unknown outcome %d", n.Outcome)
	case len(body) > MaxSize:
		return fmt.Errorf("robots: decode entry: body of %d octets exceeds %d", len(body), MaxSize)
	}
	if err := n.FetchedAt.UnmarshalBinary(fetched); err != nil {
		return fmt.Errorf("robots: decode entry: fetched-at: %w", err)
	}
	if err := n.Expires.UnmarshalBinary(expires); err != nil {
		return fmt.Errorf("robots: decode entry: expires: %w", err)
	}
	n.Err = string(errText)
	if n.Outcome == Fetched {
		n.body = append([]byte(nil), body...)
		n.rules = parse(n.body, n.truncated)
	}
	*e = n
	return nil
}

var errShort = errors.New("robots: decode entry: data ends early")

// decoder reads the MarshalBinary layout, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) u8() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.uvarint()
	if v > 1<<31 {
		if d.err == nil {
			d.err = fmt.Errorf("robots: decode entry: integer %d out of range", v)
		}
		return 0
	}
	return int(v)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}
