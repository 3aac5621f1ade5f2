package robots

import "strings"

// This file owns the octet-level side of RFC 9309 §2.2.2: the canonical form
// that both rule patterns and request paths are brought into before they are
// compared, and the wildcard matcher itself.

const upperHex = "0123456789ABCDEF"

// alwaysEscaped marks the octets that are percent-encoded wherever they occur:
// controls, space, DEL, non-ASCII octets and the ASCII characters RFC 3986
// never allows literally in a path or query. A site that writes "/ツ" in its
// rules and a crawler that requests "/%E3%83%84" then compare equal.
var alwaysEscaped = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c <= ' ' || c >= 0x7f
	}
	for _, c := range []byte("\"<>\\^`{|}") {
		t[c] = true
	}
	return t
}()

// queryReserved marks the reserved characters of RFC 3986 whose escapes a query compares
// decoded ("#", "*" and "$" are not among them: see canonical).
var queryReserved = func() (t [256]bool) {
	for _, c := range []byte(":/?@[]!&'()+,;=") {
		t[c] = true
	}
	return t
}()

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// canonical returns s rewritten so that two spellings of the same URI octets
// compare equal. With pattern set, s is a rule value: "*" stays a wildcard
// and a final "$" stays the end anchor; without it s is a request path+query
// and a "#" ends it (the fragment is never sent to a server).
//
// The rewrite, applied identically to both sides:
//   - "%hh" naming an unreserved character is decoded ("%7E" -> "~");
//     any other "%hh" keeps its escape with upper-case hex ("%2f" -> "%2F");
//     a "%" that starts no valid escape becomes "%25";
//   - octets in alwaysEscaped are encoded ("ツ" -> "%E3%83%84", " " -> "%20");
//   - a literal "*" or "$" that is not a pattern operator becomes "%2A" or
//     "%24", which is how RFC 9309 §2.2.3 says a rule names those characters;
//   - after the first "?", a reserved character of RFC 3986 and its escape
//     are one: "%3A", "%2F", "%26", "%3D" and the like are decoded. RFC 9309
//     §2.2.2's table (/foo/bar?baz=https://foo.bar ≡
//     ...?baz=https%3A%2F%2Ffoo.bar) equates them in a query, and a crawler
//     cannot tell which spelling a site means. Decoding rather than encoding
//     keeps ordinary queries unchanged, so deciding them allocates nothing.
//     "#", "*" and "$" are left encoded (they would end the URL or become
//     operators), and in the path reserved escapes keep their meaning, so
//     "/a%2Fb" is not "/a/b".
//
// When nothing changes s itself is returned, so the common case allocates
// nothing.
func canonical(s string, pattern bool) string {
	var b []byte // nil until the first octet that must change
	inQuery := false
	for i := 0; i < len(s); {
		c := s[i]
		n := 1 // input octets consumed
		var out [3]byte
		m := 0 // octets in out; 0 keeps s[i:i+n] as it is
		escape := false
		switch {
		case c == '%':
			hi, ok1 := byte(0), false
			lo, ok2 := byte(0), false
			if i+2 < len(s) {
				hi, ok1 = unhex(s[i+1])
				lo, ok2 = unhex(s[i+2])
			}
			if !ok1 || !ok2 {
				escape = true
				break
			}
			n = 3
			if v := hi<<4 | lo; isUnreserved(v) || inQuery && queryReserved[v] {
				out[0], m = v, 1
			} else if s[i+1] >= 'a' || s[i+2] >= 'a' {
				out, m = [3]byte{'%', upperHex[hi], upperHex[lo]}, 3
			}
		case c == '#' && !pattern:
			if b == nil {
				return s[:i]
			}
			return string(b)
		case c == '*':
			escape = !pattern
		case c == '$':
			escape = !pattern || i != len(s)-1
		case c == '?':
			inQuery = true
		default:
			escape = alwaysEscaped[c]
		}
		if escape {
			out, m = [3]byte{'%', upperHex[c>>4], upperHex[c&15]}, 3
		}
		if m == 0 {
			if b != nil {
				b = append(b, s[i:i+n]...)
			}
		} else {
			if b == nil {
				b = make([]byte, 0, len(s)+16)
				b = append(b, s[:i]...)
			}
			b = append(b, out[:m]...)
		}
		i += n
	}
	if b == nil {
		return s
	}
	return string(b)
}

// pattern is a compiled allow or disallow value in canonical form.
//
// Matching splits the pattern at its wildcards and places each literal
// segment at its leftmost possible position after the previous one. With
// "*" as the only operator the leftmost placement is always safe (it leaves
// the longest remainder for the segments that follow), so one pass suffices:
// the cost is that of the substring searches, never exponential, however
// many stars a hostile file uses.
type pattern struct {
	segs     []string // literal pieces between "*"s; segs[0] is anchored at the start
	anchored bool     // the pattern ended in "$": the last segment must end the path
}

func compilePattern(canon string) pattern {
	p := pattern{}
	if strings.HasSuffix(canon, "$") { // only an anchor "$" survives canonical unescaped
		p.anchored = true
		canon = canon[:len(canon)-1]
	}
	p.segs = strings.Split(canon, "*")
	return p
}

// matches reports whether the canonical path+query s matches the pattern.
func (p *pattern) matches(s string) bool {
	first := p.segs[0]
	if len(p.segs) == 1 {
		if p.anchored {
			return s == first
		}
		return strings.HasPrefix(s, first)
	}
	if !strings.HasPrefix(s, first) {
		return false
	}
	pos := len(first)
	last := len(p.segs) - 1
	for _, seg := range p.segs[1:last] {
		i := strings.Index(s[pos:], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	tail := p.segs[last]
	if p.anchored {
		return len(s)-pos >= len(tail) && strings.HasSuffix(s, tail)
	}
	return strings.Contains(s[pos:], tail)
}
