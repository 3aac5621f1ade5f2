package urlnorm

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// URL is a parsed, canonical http or https URL. It is an immutable value: the canonical string
// plus the offsets of its parts, so every accessor is a substring and allocates nothing. The
// zero URL is not valid; IsZero reports it. Obtain URLs from a [Normalizer].
type URL struct {
	s string
	// Offsets into s. The host is s[hostStart:hostEnd] (IPv6 with its brackets), an explicit
	// port runs from hostEnd+1 to pathStart, the path from pathStart to queryStart; a query
	// is present iff queryStart < fragStart (s[queryStart] == '?'), a fragment iff
	// fragStart < len(s) (s[fragStart] == '#'). uint32 is ample: MaxLength bounds s.
	hostStart, hostEnd, pathStart, queryStart, fragStart uint32
}

// String returns the canonical form, e.g. "http://example.com/a/c?id=1".
func (u URL) String() string { return u.s }

// IsZero reports whether u is the zero URL (not the result of a successful parse).
func (u URL) IsZero() bool { return u.s == "" }

// Scheme returns "http" or "https".
func (u URL) Scheme() string {
	if u.s == "" {
		return ""
	}
	return u.s[:u.hostStart-3]
}

// Host returns the hostname and, if it is not the scheme's default, ":port"; IPv6 addresses
// keep their brackets ("[::1]:8080"). This is the authority a request is sent to.
func (u URL) Host() string { return u.s[u.hostStart:u.pathStart] }

// HostOf returns the host, and the port if the string has one, of an absolute URL string in
// lowercase, or "" when s has no "://". It reads only the authority, so it suits callers that
// hold a URL as a string (stored records, routed links, feed items) and need its host for
// every one of thousands: for a canonical URL it equals [URL.Host]. User information, which a
// canonical URL never has, is skipped up to the authority's last "@", as the URL Standard reads it.
func HostOf(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.ToLower(rest) // no copy when it is lowercase already
}

// Hostname returns the host without port: lowercase punycode, a dotted IPv4 address, or an
// IPv6 address without brackets (the form net.JoinHostPort and netip.ParseAddr expect).
func (u URL) Hostname() string {
	h := u.s[u.hostStart:u.hostEnd]
	if len(h) > 1 && h[0] == '[' {
		return h[1 : len(h)-1]
	}
	return h
}

// Port returns the explicit port, or "" when the URL uses the scheme's default port (80 for
// http, 443 for https).
func (u URL) Port() string {
	if u.hostEnd == u.pathStart {
		return ""
	}
	return u.s[u.hostEnd+1 : u.pathStart]
}

// Path returns the path, always starting with "/", percent-encoded as in String.
func (u URL) Path() string { return u.s[u.pathStart:u.queryStart] }

// RawQuery returns the query without its "?", or "" if there is none.
func (u URL) RawQuery() string {
	if u.queryStart == u.fragStart {
		return ""
	}
	return u.s[u.queryStart+1 : u.fragStart]
}

// Fragment returns the fragment without its "#"; always "" unless Options.KeepFragment.
func (u URL) Fragment() string {
	if int(u.fragStart) == len(u.s) {
		return ""
	}
	return u.s[u.fragStart+1:]
}

// PathQuery returns the path and, if present, "?" and the query: the part robots.txt rules
// are matched against and the request target sent to the server.
func (u URL) PathQuery() string { return u.s[u.pathStart:u.fragStart] }

// HostPath returns Host followed by Path ("example.com:8080/a/b"): the resource without scheme
// and query, which is what crawler-trap guards count query variants by.
func (u URL) HostPath() string { return u.s[u.hostStart:u.queryStart] }

// HostKey returns the politeness and partitioning key: the lowercase punycode hostname plus
// ":port" only when the port is not the scheme's default. http://example.com/ and
// https://example.com/ share the key "example.com". It equals Host.
func (u URL) HostKey() string { return u.Host() }

// DomainKey returns the registrable domain (eTLD+1 by the public suffix list, private
// suffixes such as github.io included): "www.bbc.co.uk" gives "bbc.co.uk". IP addresses,
// single-label hosts and hosts that are themselves public suffixes give Hostname. The port
// is never part of it.
func (u URL) DomainKey() string {
	h := u.Hostname()
	if u.IsIP() {
		return h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

// IsIP reports whether the host is an IPv4 or IPv6 address rather than a domain name.
func (u URL) IsIP() bool {
	h := u.s[u.hostStart:u.hostEnd]
	if h == "" {
		return false
	}
	if h[0] == '[' {
		return true
	}
	// A canonical domain never consists of digits and dots only: WHATWG parses such a host
	// as IPv4 or refuses it.
	for i := 0; i < len(h); i++ {
		if c := h[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Key is the seen-set identity of a URL: the first 16 bytes of the SHA-256 of its canonical
// string. With n distinct URLs the chance that any two share a key is below n²/2¹²⁹, about
// 10⁻¹⁹ for ten billion URLs, and because SHA-256 is collision-resistant a hostile site cannot
// craft colliding URLs to hide pages from the crawler. Keys are stable across runs and
// versions as long as the canonical form is.
type Key [16]byte

// Key returns the seen-set key of u.
func (u URL) Key() Key { return KeyOf(u.s) }

// KeyOf is the key of a URL already in normalized form (a URL.String() kept in a record):
// the same as URL.Key of that URL, without parsing it again.
func KeyOf(normalized string) Key {
	sum := sha256.Sum256([]byte(normalized))
	var k Key
	copy(k[:], sum[:16])
	return k
}

// String returns the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }
