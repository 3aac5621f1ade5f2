package fetch

import (
	"bytes"
	"strings"
)

// prescanMeta implements the HTML standard's "prescan a byte stream to
// determine its encoding" over b (callers pass the first 1024 bytes) and
// returns the canonical name of the charset a <meta> declares, or "".
//
// It is written here because golang.org/x/net/html/charset runs the same
// prescan only inside DetermineEncoding, which does not say whether the
// answer came from a <meta> or from its own guess — and Result.CharsetSource
// must say exactly that. The two <meta> forms are <meta charset="x"> and
// <meta http-equiv="content-type" content="...; charset=x">; comments and
// other tags are skipped so that a charset inside them is not picked up.
func prescanMeta(b []byte) string {
	for pos := 0; pos < len(b); pos++ {
		rest := b[pos:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			// The comment ends at the first "-->" whose dashes may overlap
			// the opening ones ("<!-->" is a complete comment).
			end := bytes.Index(b[pos+2:], []byte("-->"))
			if end < 0 {
				return ""
			}
			pos += 2 + end + 2
		case len(rest) > 5 && hasPrefixFold(rest, "<meta") && (isSpace(rest[5]) || rest[5] == '/'):
			name, next, ok := metaCharset(b, pos+5)
			if !ok {
				return ""
			}
			if name != "" {
				return name
			}
			pos = next
		case len(rest) > 1 && rest[0] == '<' && (isLetter(rest[1]) || rest[1] == '/' && len(rest) > 2 && isLetter(rest[2])):
			// Some other tag: skip its name and attributes so that an
			// attribute value like "<meta charset=x>" is not mistaken for
			// a tag.
			pos++
			for pos < len(b) && !isSpace(b[pos]) && b[pos] != '>' {
				pos++
			}
			for {
				_, _, next, found, ok := getAttribute(b, pos)
				if !ok {
					return ""
				}
				pos = next
				if !found {
					break
				}
			}
		case bytes.HasPrefix(rest, []byte("<!")), bytes.HasPrefix(rest, []byte("</")), bytes.HasPrefix(rest, []byte("<?")):
			end := bytes.IndexByte(rest, '>')
			if end < 0 {
				return ""
			}
			pos += end
		}
	}
	return ""
}

// metaCharset reads the attributes of a <meta> tag starting at pos and
// returns the charset it validly declares ("" if none), the position of the
// tag's end, and ok=false if the input ended inside the tag.
func metaCharset(b []byte, pos int) (name string, next int, ok bool) {
	var seen []string
	gotPragma := false
	needPragma := 0 // 0: unknown, 1: content= needs http-equiv, 2: charset= needs nothing
	charset := ""   // canonical name, once set
	charsetSet := false
	for {
		attr, value, p, found, ok := getAttribute(b, pos)
		if !ok {
			return "", 0, false
		}
		pos = p
		if !found {
			break
		}
		dup := false
		for _, s := range seen {
			if s == attr {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		seen = append(seen, attr)
		switch attr {
		case "http-equiv":
			if value == "content-type" {
				gotPragma = true
			}
		case "content":
			if label := charsetFromContent(value); label != "" && !charsetSet {
				if _, n := lookupCharset(label); n != "" {
					charset, charsetSet, needPragma = n, true, 1
				}
			}
		case "charset":
			_, charset = lookupCharset(value) // "" when unknown: a failure that still blocks content=
			charsetSet, needPragma = true, 2
		}
	}
	if needPragma == 0 || needPragma == 1 && !gotPragma {
		return "", pos, true
	}
	return charset, pos, true
}

// getAttribute is the HTML standard's "get an attribute" step of the
// prescan. It returns the lowercased name and value, the position after the
// attribute (or of the '>' that ends the tag), found=false at the end of the
// tag, and ok=false if the input ran out first.
func getAttribute(b []byte, pos int) (name, value string, next int, found, ok bool) {
	for pos < len(b) && (isSpace(b[pos]) || b[pos] == '/') {
		pos++
	}
	if pos >= len(b) {
		return "", "", pos, false, false
	}
	if b[pos] == '>' {
		return "", "", pos, false, true
	}
	var n, v []byte
	// Name: up to '=', whitespace, '/' or '>'. The first byte is taken
	// as-is even if it is '=' (the standard's "name is empty" rule).
	sawEquals := false
	for !sawEquals {
		if pos >= len(b) {
			return "", "", pos, false, false
		}
		c := b[pos]
		switch {
		case c == '=' && len(n) > 0:
			sawEquals = true
		case isSpace(c):
			// Whitespace may separate the name from "=".
			for pos < len(b) && isSpace(b[pos]) {
				pos++
			}
			if pos >= len(b) {
				return "", "", pos, false, false
			}
			if b[pos] != '=' {
				return string(n), "", pos, true, true
			}
			sawEquals = true
		case c == '/' || c == '>':
			return string(n), "", pos, true, true
		default:
			n = append(n, lower(c))
		}
		pos++
	}
	for pos < len(b) && isSpace(b[pos]) {
		pos++
	}
	if pos >= len(b) {
		return "", "", pos, false, false
	}
	switch q := b[pos]; q {
	case '"', '\'':
		pos++
		end := bytes.IndexByte(b[pos:], q)
		if end < 0 {
			return "", "", len(b), false, false
		}
		for _, c := range b[pos : pos+end] {
			v = append(v, lower(c))
		}
		return string(n), string(v), pos + end + 1, true, true
	case '>':
		return string(n), "", pos, true, true
	}
	for pos < len(b) && !isSpace(b[pos]) && b[pos] != '>' {
		v = append(v, lower(b[pos]))
		pos++
	}
	if pos >= len(b) {
		return "", "", pos, false, false
	}
	return string(n), string(v), pos, true, true
}

// charsetFromContent extracts the charset label from a <meta content> value
// such as "text/html; charset=iso-8859-1" (already lowercased), following
// the HTML standard's rules for quotes and separators.
func charsetFromContent(s string) string {
	for {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = s[i+len("charset"):]
		j := 0
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		if j == len(s) || s[j] != '=' {
			s = s[j:]
			continue
		}
		s = s[j+1:]
		for len(s) > 0 && isSpace(s[0]) {
			s = s[1:]
		}
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		end := 0
		for end < len(s) && !isSpace(s[end]) && s[end] != ';' {
			end++
		}
		return s[:end]
	}
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(b[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return 'a' <= lower(c) && lower(c) <= 'z' }
