package urlnorm

import (
	"strconv"
	"strings"
)

// fast normalizes s (trimmed, without tabs or newlines; hasScheme means it starts with http:
// or https:) by scanning it once, for the common inputs: no backslash before the query, an
// absolute URL written "scheme://" or a relative reference, and a host made of ASCII
// letters, digits, '-' and '_' labels that is neither punycode nor possibly an IPv4 number.
// It reports handled=false for anything else, and the caller then uses the library. When
// it handles an input, the result (URL or error) is what the library path would give; a
// fuzz test holds it to that.
func (n *Normalizer) fast(sc *scratch, s string, hasScheme bool, base *URL) (u URL, handled bool, err error) {
	// The authority and path end at the first '?' or '#'.
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	head, tail := s[:end], s[end:]
	if strings.IndexByte(head, '\\') >= 0 {
		return URL{}, false, nil
	}
	var query, frag string
	var hasQuery bool
	if tail != "" {
		if tail[0] == '?' {
			hasQuery = true
			query, frag, _ = strings.Cut(tail[1:], "#")
		} else {
			frag = tail[1:]
		}
	}

	b := sc.b[:0]
	sc.segs = sc.segs[:0]
	var hostStart, hostEnd, pathStart int
	switch {
	case hasScheme || strings.HasPrefix(head, "//"):
		// An absolute URL or a scheme-relative reference: "http://host/p", "//host/p".
		var rest string
		if hasScheme {
			colon := strings.IndexByte(head, ':')
			b = append(b, strings.ToLower(head[:colon])...)
			rest = head[colon+1:]
		} else {
			b = append(b, base.Scheme()...)
			rest = head
		}
		// "http:foo", "http:/foo" and "http:///foo" have their own rules (relative to a base
		// of the same scheme, extra slashes skipped): the library handles them.
		if !strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "///") {
			return URL{}, false, nil
		}
		rest = rest[2:]
		auth, path, _ := strings.Cut(rest, "/")
		b = append(b, "://"...)
		hostStart = len(b)
		var ok bool
		b, hostEnd, ok, err = appendAuthority(b, auth, b[0:hostStart-3])
		if !ok || err != nil {
			return URL{}, ok, err
		}
		pathStart = len(b)
		b = n.appendPath(b, sc, path)
	default:
		// Relative to base: scheme, host and port are the base's.
		b = append(b, base.s[:base.pathStart]...)
		hostStart, hostEnd, pathStart = int(base.hostStart), int(base.hostEnd), int(base.pathStart)
		switch {
		case head != "" && head[0] == '/':
			b = n.appendPath(b, sc, head[1:])
		case head != "":
			// Merge: the base path without its last segment, then the reference's.
			b = n.appendPath(b, sc, base.Path()[1:])
			b = b[:sc.segs[len(sc.segs)-1]]
			sc.segs = sc.segs[:len(sc.segs)-1]
			b = n.appendPath(b, sc, head)
		default:
			// "", "?q" or "#f": the base path, and the base query unless one is given.
			b = n.appendPath(b, sc, base.Path()[1:])
			if !hasQuery {
				query = base.RawQuery()
			}
		}
	}
	u, err = n.finish(sc, b, hostStart, hostEnd, pathStart, query, frag)
	return u, true, err
}

// appendAuthority appends the host and non-default port of auth (the text between "//" and
// the path) to b, dropping any userinfo. ok=false means the host is not one the scanner
// handles.
func appendAuthority(b []byte, auth string, scheme []byte) (out []byte, hostEnd int, ok bool, err error) {
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
		if auth == "" {
			return b, 0, true, ErrEmptyHost
		}
	}
	host, port, hasPort := strings.Cut(auth, ":")
	if host == "" {
		return b, 0, true, ErrEmptyHost
	}
	if !plainHost(host) {
		return b, 0, false, nil
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		b = append(b, lower(host[i]))
	}
	hostEnd = len(b)
	if !hasPort || port == "" {
		return b, hostEnd, true, nil
	}
	p := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return b, 0, true, ErrInvalidPort
		}
		if p = p*10 + int(c-'0'); p > 65535 {
			return b, 0, true, ErrInvalidPort
		}
	}
	if !(p == 80 && string(scheme) == "http" || p == 443 && string(scheme) == "https") {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return b, hostEnd, true, nil
}

// plainHost reports whether h is a host name the scanner may take as is (after lowercasing
// and removing one trailing dot): non-empty labels of ASCII letters, digits, '-' and '_', no
// punycode label ("xn--", which IDNA must validate), and a last label not starting with a
// digit (WHATWG would try it as an IPv4 number: "127.1", "0x7f.1").
func plainHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	label := 0 // start of the current label
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if i == label || i-label >= 4 && strings.EqualFold(h[label:label+4], "xn--") {
				return false
			}
			label = i + 1
			continue
		}
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	return last[0] < '0' || last[0] > '9'
}

// finish appends query and fragment to b (scheme, host, port and path written), checks the
// length and returns the URL with its offsets.
func (n *Normalizer) finish(sc *scratch, b []byte, hostStart, hostEnd, pathStart int, query, frag string) (URL, error) {
	queryStart := len(b)
	if query != "" {
		b = n.appendQuery(b, sc, query)
	}
	fragStart := len(b)
	if n.opts.KeepFragment {
		b = appendFragment(b, frag)
	}
	sc.b = b
	if len(b) > MaxLength {
		return URL{}, ErrTooLong
	}
	return URL{
		s:         string(b),
		hostStart: uint32(hostStart), hostEnd: uint32(hostEnd), pathStart: uint32(pathStart),
		queryStart: uint32(queryStart), fragStart: uint32(fragStart),
	}, nil
}
