package urlnorm

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file writes path, query and fragment in canonical form. Both the scanner and the
// library path use it: the input is either raw text from the URL or the library's
// already-encoded output, and for the second the writers change nothing but what the
// canonical form adds (escape case, unreserved decoding, stray '%', stripped parameters).

// Percent-encode sets of the WHATWG URL Standard for special schemes, as whatwg-url v0.6.2
// implements them. A true entry means the byte needs more than copying: it is percent-encoded,
// or it is '%' (an escape to normalize), or it starts a multi-byte UTF-8 sequence (always
// encoded; an invalid sequence as U+FFFD).
var pathSet, querySet, fragmentSet [256]bool

// unreserved marks RFC 3986 unreserved characters, whose escapes are decoded.
var unreserved [256]bool

func init() {
	for _, set := range []*[256]bool{&pathSet, &querySet, &fragmentSet} {
		for c := 0; c <= ' '; c++ {
			set[c] = true
		}
		for c := 0x7f; c <= 0xff; c++ {
			set[c] = true
		}
		set['%'] = true
	}
	for _, c := range `"#<>?{}` + "`" {
		pathSet[c] = true
	}
	for _, c := range `"#<>'` {
		querySet[c] = true
	}
	for _, c := range `"<>` + "`" {
		fragmentSet[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		unreserved[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		unreserved[c], unreserved[c-'a'+'A'] = true, true
	}
	for _, c := range "-._~" {
		unreserved[c] = true
	}
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// appendEscaped appends s percent-encoded with set and percent-normalized: valid escapes get
// upper-case hex or, for unreserved characters, are decoded; a '%' that starts no escape
// becomes %25.
func appendEscaped(b []byte, s string, set *[256]bool) []byte {
	for i := 0; i < len(s); {
		// Copy the run of bytes that stay as they are in one go.
		j := i
		for j < len(s) && !set[s[j]] {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				if v := unhex(s[i+1])<<4 | unhex(s[i+2]); unreserved[v] {
					b = append(b, v)
				} else {
					b = append(b, '%', upper(s[i+1]), upper(s[i+2]))
				}
				i += 3
				continue
			}
			b = append(b, "%25"...)
			i++
		case c < utf8.RuneSelf:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// WHATWG reads the input as scalar values: an invalid byte is U+FFFD.
				b = append(b, "%EF%BF%BD"...)
			} else {
				for _, x := range []byte(s[i : i+size]) {
					b = append(b, '%', upperHex[x>>4], upperHex[x&15])
				}
			}
			i += size
		}
	}
	return b
}

// appendPath runs the WHATWG path state over p (the path after its leading '/', without
// query or fragment) and appends the segments to b, continuing the segments already listed
// in sc.segs: ".." removes the last one, "." nothing, and a dot segment at the end leaves an
// empty last segment ("/a/b/.." is "/a/").
func (n *Normalizer) appendPath(b []byte, sc *scratch, p string) []byte {
	for {
		seg, rest, more := strings.Cut(p, "/")
		b = n.appendSegment(b, sc, seg, !more)
		if !more {
			return b
		}
		p = rest
	}
}

func (n *Normalizer) appendSegment(b []byte, sc *scratch, seg string, last bool) []byte {
	dots := dotSegment(seg)
	if dots == 0 {
		start := len(b)
		b = append(b, '/')
		b = appendEscaped(b, seg, &pathSet)
		b = n.stripPathParams(b, start+1)
		// Removing ";jsessionid=x" from ".;jsessionid=x" leaves a dot segment, which a
		// re-parse would resolve: resolve it now so that normalization is idempotent.
		if dots = dotSegment(string(b[start+1:])); dots == 0 {
			sc.segs = append(sc.segs, start)
			return b
		}
		b = b[:start]
	}
	if dots == 2 && len(sc.segs) > 0 {
		b = b[:sc.segs[len(sc.segs)-1]]
		sc.segs = sc.segs[:len(sc.segs)-1]
	}
	if last {
		sc.segs = append(sc.segs, len(b))
		b = append(b, '/')
	}
	return b
}

// dotSegment returns 1 for a single-dot segment ("." or "%2e"), 2 for a double-dot one
// ("..", ".%2e", "%2e.", "%2e%2e", any case) and 0 otherwise.
func dotSegment(s string) int {
	switch len(s) {
	case 1:
		if s == "." {
			return 1
		}
	case 2:
		if s == ".." {
			return 2
		}
	case 3:
		if strings.EqualFold(s, "%2e") {
			return 1
		}
	case 4:
		if strings.EqualFold(s, ".%2e") || strings.EqualFold(s, "%2e.") {
			return 2
		}
	case 6:
		if strings.EqualFold(s, "%2e%2e") {
			return 2
		}
	}
	return 0
}

// stripPathParams removes, from the segment b[start:], the ";name=value" parameters whose
// name is stripped (";jsessionid=0123" in "/cart;jsessionid=0123").
func (n *Normalizer) stripPathParams(b []byte, start int) []byte {
	first := bytes.IndexByte(b[start:], ';')
	if first < 0 || !n.strips() {
		return b
	}
	w := start + first
	for r := w; r < len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[r+1:], ';'); i >= 0 {
			end = r + 1 + i
		}
		if !n.stripped(paramName(b[r+1 : end])) {
			w += copy(b[w:], b[r:end])
		}
		r = end
	}
	return b[:w]
}

// appendQuery appends "?" and the canonical form of query q, or nothing when no parameter
// remains.
func (n *Normalizer) appendQuery(b []byte, sc *scratch, q string) []byte {
	mark := len(b)
	b = append(b, '?')
	sc.spans = sc.spans[:0]
	for q != "" {
		var piece string
		piece, q, _ = strings.Cut(q, "&")
		if piece == "" {
			continue
		}
		before := len(b)
		if before > mark+1 {
			b = append(b, '&')
		}
		start := len(b)
		b = appendEscaped(b, piece, &querySet)
		if n.strips() && n.stripped(paramName(b[start:])) {
			b = b[:before]
			continue
		}
		if n.opts.SortQuery {
			sc.spans = append(sc.spans, span{start, len(b)})
		}
	}
	if len(b) == mark+1 {
		return b[:mark]
	}
	if len(sc.spans) > 1 {
		b = sortParams(b, mark+1, sc)
	}
	return b
}

// sortParams rewrites the parameters listed in sc.spans, which fill b[from:], in stable
// order of their names.
func sortParams(b []byte, from int, sc *scratch) []byte {
	sc.tmp = append(sc.tmp[:0], b...)
	tmp := sc.tmp
	slices.SortStableFunc(sc.spans, func(x, y span) int {
		return bytes.Compare(paramName(tmp[x.start:x.end]), paramName(tmp[y.start:y.end]))
	})
	b = b[:from]
	for i, sp := range sc.spans {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, tmp[sp.start:sp.end]...)
	}
	return b
}

// appendFragment appends "#" and the canonical fragment f, or nothing if f is empty.
func appendFragment(b []byte, f string) []byte {
	if f == "" {
		return b
	}
	b = append(b, '#')
	return appendEscaped(b, f, &fragmentSet)
}

func paramName(p []byte) []byte {
	if i := bytes.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

func (n *Normalizer) strips() bool { return n.exact != nil || n.prefixes != nil }

// stripped reports whether the parameter name (percent-normalized) is one to remove.
func (n *Normalizer) stripped(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	if len(name) <= n.maxExact {
		var buf [64]byte
		var low []byte
		if len(name) <= len(buf) {
			low = buf[:len(name)]
		} else {
			low = make([]byte, len(name))
		}
		for i, c := range name {
			low[i] = lower(c)
		}
		if _, ok := n.exact[string(low)]; ok {
			return true
		}
	}
	for _, p := range n.prefixes {
		if len(name) >= len(p) && equalFoldASCII(name[:len(p)], p) {
			return true
		}
	}
	return false
}

// equalFoldASCII compares b with the lowercase ASCII string p, ignoring the case of b.
func equalFoldASCII(b []byte, p string) bool {
	for i := range len(p) {
		if lower(b[i]) != p[i] {
			return false
		}
	}
	return true
}
