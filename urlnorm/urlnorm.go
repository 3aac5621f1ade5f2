package urlnorm

import (
	"strings"
	"sync"

	"github.com/nlnwa/whatwg-url/url"
)

// MaxLength is the longest URL, in bytes, that is accepted: both the input (after trimming
// surrounding whitespace) and the normalized result. It is far above what sites use (browsers
// and servers commonly stop near 2 to 8 KB; scope rules default to 2048) and bounds the work a
// hostile page can cause per link.
const MaxLength = 16 << 10

// Options configure a Normalizer. The zero Options strip nothing, drop fragments and keep the
// query order; DefaultOptions adds the usual tracking and session parameters.
type Options struct {
	// StripParams names query parameters (and ;path parameters) removed during normalization,
	// matched case-insensitively against the percent-normalized name. An entry ending in '*'
	// is a prefix ("utm_*"); a lone "*" removes every parameter.
	StripParams []string
	// KeepFragment keeps "#fragment"; by default it is removed, since it never reaches the
	// server.
	KeepFragment bool
	// SortQuery sorts query parameters by name (stable: repeated names keep their order).
	// Off by default because some servers depend on parameter order.
	SortQuery bool
}

// DefaultOptions strips common tracking parameters (utm_*, gclid, fbclid, msclkid, dclid,
// yclid, mc_cid, mc_eid, _ga, _hsenc, _hsmi, igshid) and session ids (jsessionid, phpsessid,
// sid, sessionid, aspsessionid*), drops fragments and keeps query order.
func DefaultOptions() Options {
	return Options{StripParams: []string{
		"utm_*", "gclid", "fbclid", "msclkid", "dclid", "yclid", "mc_cid", "mc_eid", "_ga",
		"_hsenc", "_hsmi", "igshid",
		"jsessionid", "phpsessid", "sid", "sessionid", "aspsessionid*",
	}}
}

// Normalizer parses and normalizes URLs with fixed Options. It is safe for concurrent use.
type Normalizer struct {
	opts Options
	// Strip matching: exact holds lowercase names, prefixes lowercase prefixes; maxExact is
	// the longest exact name, so longer parameter names skip the map.
	exact    map[string]struct{}
	prefixes []string
	maxExact int
	lib      url.Parser // the spec-conformant whatwg-url parser, for the inputs the scanner declines
}

// New returns a Normalizer for o.
func New(o Options) *Normalizer {
	n := &Normalizer{opts: o, lib: url.NewParser()}
	n.opts.StripParams = append([]string(nil), o.StripParams...)
	for _, p := range o.StripParams {
		prefix := strings.HasSuffix(p, "*")
		p = strings.TrimSuffix(p, "*")
		if p == "" && !prefix {
			continue
		}
		// Normalize the entry the way parameter names are normalized, so "utm%5F*" and
		// "UTM_*" mean the same as "utm_*".
		name := strings.ToLower(string(appendEscaped(nil, p, &querySet)))
		if prefix {
			n.prefixes = append(n.prefixes, name)
			continue
		}
		if n.exact == nil {
			n.exact = make(map[string]struct{})
		}
		n.exact[name] = struct{}{}
		n.maxExact = max(n.maxExact, len(name))
	}
	return n
}

// Options returns the options n was built with.
func (n *Normalizer) Options() Options {
	o := n.opts
	o.StripParams = append([]string(nil), o.StripParams...)
	return o
}

// Parse parses an absolute http or https URL and returns its canonical form. Relative
// references are refused with ErrNotAbsolute, other schemes with ErrNotCrawlable.
func (n *Normalizer) Parse(raw string) (URL, error) {
	return n.normalize(raw, nil)
}

// ResolveURL resolves the reference ref (an absolute URL or a relative one such as "../a",
// "?page=2" or "//cdn.example.com/x") against base, as a browser resolves a link, and returns
// the canonical result. A zero base makes it the same as Parse.
func (n *Normalizer) ResolveURL(base URL, ref string) (URL, error) {
	if base.IsZero() {
		return n.normalize(ref, nil)
	}
	return n.normalize(ref, &base)
}

// Resolve is ResolveURL on strings: it parses base, resolves ref against it and returns the
// canonical string. An unparsable base gives the base's error.
func (n *Normalizer) Resolve(base, ref string) (string, error) {
	b, err := n.Parse(base)
	if err != nil {
		return "", err
	}
	u, err := n.ResolveURL(b, ref)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// scratch holds the buffers one normalization needs; pooled so the only allocation of a
// normalization is its result string.
type scratch struct {
	b     []byte
	segs  []int  // start offsets in b of the path segments written so far (at their '/')
	spans []span // query parameters written, for SortQuery
	tmp   []byte
}

type span struct{ start, end int }

var scratchPool = sync.Pool{New: func() any {
	return &scratch{b: make([]byte, 0, 512), segs: make([]int, 0, 32)}
}}

func (n *Normalizer) normalize(raw string, base *URL) (URL, error) {
	return n.normalizeWith(raw, base, true)
}

// normalizeWith normalizes raw (relative to base, if not nil), with the scanner first if
// useScanner, else with the library only (tests compare the two).
func (n *Normalizer) normalizeWith(raw string, base *URL, useScanner bool) (URL, error) {
	s := trimControlOrSpace(raw)
	scheme, ok := schemeOf(s)
	if ok && scheme != schemeHTTP && scheme != schemeHTTPS {
		return URL{}, &Error{Input: raw, Err: notCrawlable(schemeText(s))}
	}
	if !ok && base == nil {
		return URL{}, &Error{Input: raw, Err: ErrNotAbsolute}
	}
	if len(s) > MaxLength {
		return URL{}, &Error{Input: raw, Err: ErrTooLong}
	}
	s = removeTabOrNewline(s)

	sc := scratchPool.Get().(*scratch)
	var u URL
	var err error
	handled := false
	if useScanner {
		u, handled, err = n.fast(sc, s, ok, base)
	}
	if !handled {
		u, err = n.slow(sc, s, base)
	}
	if cap(sc.b) <= 4*MaxLength {
		scratchPool.Put(sc)
	}
	if err != nil {
		return URL{}, &Error{Input: raw, Err: err}
	}
	return u, nil
}

const (
	schemeOther = iota
	schemeHTTP
	schemeHTTPS
)

// schemeOf finds the scheme the WHATWG parser would find in s (already trimmed): an ASCII
// letter, then letters, digits, '+', '-' or '.', then ':'. Tabs and newlines are skipped, as
// the parser removes them before it starts. It reports whether there is a scheme and whether
// it is http or https, without allocating.
func schemeOf(s string) (kind int, ok bool) {
	var buf [5]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c == ':' {
			if n == 0 {
				return 0, false
			}
			switch string(buf[:min(n, 5)]) {
			case "http":
				if n == 4 {
					return schemeHTTP, true
				}
			case "https":
				if n == 5 {
					return schemeHTTPS, true
				}
			}
			return schemeOther, true
		}
		c = lower(c)
		isAlpha := 'a' <= c && c <= 'z'
		if n == 0 && !isAlpha {
			return 0, false
		}
		if !isAlpha && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return 0, false
		}
		if n < len(buf) {
			buf[n] = c
		}
		n++
	}
	return 0, false
}

// schemeText returns the scheme of s for an error message (s is known to have one).
func schemeText(s string) string {
	i := strings.IndexByte(s, ':')
	return strings.ToLower(removeTabOrNewline(s[:i]))
}

// trimControlOrSpace removes leading and trailing C0 controls and spaces, as WHATWG does.
func trimControlOrSpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// removeTabOrNewline removes every tab, CR and LF, as WHATWG does; s itself when there are
// none (the usual case, no allocation).
func removeTabOrNewline(s string) string {
	if strings.IndexAny(s, "\t\n\r") < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b = append(b, c)
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
