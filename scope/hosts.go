package scope

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sonda-search/sonda/urlnorm"
)

// patternNorm normalizes host patterns exactly as URLs are normalized, so "Bücher.de." in a
// rule matches https://xn--bcher-kva.de/.
var patternNorm = urlnorm.New(urlnorm.Options{})

// hostSet matches URLs against host patterns.
type hostSet struct {
	keys     map[string]string // "host:port" patterns by host key
	names    map[string]string // plain host names (any port)
	suffixes domainSet         // "*.example.com" patterns, by example.com
}

func (h hostSet) empty() bool { return len(h.keys) == 0 && len(h.names) == 0 && len(h.suffixes) == 0 }

// match returns the pattern, as written, that u's host matches.
func (h hostSet) match(u urlnorm.URL) (string, bool) {
	if p, ok := h.keys[u.HostKey()]; ok {
		return p, true
	}
	if p, ok := h.names[u.Hostname()]; ok {
		return p, true
	}
	return h.suffixes.match(u)
}

// domainSet matches a URL whose host is one of its domains or a subdomain of one; values are
// the patterns as written.
type domainSet map[string]string

func (d domainSet) match(u urlnorm.URL) (string, bool) {
	if len(d) == 0 {
		return "", false
	}
	h := u.Hostname()
	if u.IsIP() {
		p, ok := d[h]
		return p, ok
	}
	for {
		if p, ok := d[h]; ok {
			return p, true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return "", false
		}
		h = h[i+1:]
	}
}

func compileHosts(rule string, patterns []string) (hostSet, error) {
	var h hostSet
	for _, p := range patterns {
		host, wildcard := strings.CutPrefix(strings.TrimSpace(p), "*.")
		u, err := parseHost(host)
		if err == nil && wildcard && hasPort(host) {
			err = errors.New("a wildcard pattern cannot have a port")
		}
		if err != nil {
			return hostSet{}, fmt.Errorf("scope: %s %q: %w", rule, p, err)
		}
		switch {
		case wildcard:
			h.suffixes = add(h.suffixes, u.Hostname(), p)
		case hasPort(host):
			h.keys = add(h.keys, u.HostKey(), p)
		default:
			h.names = add(h.names, u.Hostname(), p)
		}
	}
	return h, nil
}

func compileDomains(rule string, patterns []string) (domainSet, error) {
	var d domainSet
	for _, p := range patterns {
		// "*.example.com" and ".example.com" are read as "example.com", which already
		// covers every subdomain.
		dom := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "*"), ".")
		u, err := parseHost(dom)
		if err == nil && hasPort(dom) {
			err = errors.New("a domain cannot have a port")
		}
		if err != nil {
			return nil, fmt.Errorf("scope: %s %q: %w", rule, p, err)
		}
		d = add(d, u.Hostname(), p)
	}
	return d, nil
}

func add(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string)
	}
	m[k] = v
	return m
}

// hasPort reports whether the host pattern p names a port ("a.com:80", "[::1]:80"; a bare
// IPv6 address "::1" has none).
func hasPort(p string) bool {
	if strings.HasPrefix(p, "[") {
		return strings.LastIndexByte(p, ':') > strings.LastIndexByte(p, ']')
	}
	return strings.Count(p, ":") == 1
}

// parseHost normalizes a host or host:port pattern through the URL parser.
func parseHost(p string) (urlnorm.URL, error) {
	if p == "" {
		return urlnorm.URL{}, errors.New("empty host")
	}
	if strings.ContainsAny(p, "/?#@\\*") {
		return urlnorm.URL{}, errors.New("not a host name")
	}
	if strings.Count(p, ":") > 1 && !strings.HasPrefix(p, "[") {
		p = "[" + p + "]" // a bare IPv6 address
	}
	u, err := patternNorm.Parse("http://" + p + "/")
	if e := (*urlnorm.Error)(nil); errors.As(err, &e) {
		err = e.Err // the pattern, not the URL built around it, is what the user wrote
	}
	return u, err
}
