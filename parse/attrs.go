package parse

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// attrKey names the attributes the parser reads. Attributes not listed are
// skipped without being copied.
type attrKey uint8

const (
	attrHref attrKey = iota
	attrSrc
	attrSrcset
	attrDataSrc
	attrRel
	attrTitle
	attrAlt
	attrName
	attrProperty
	attrContent
	attrHTTPEquiv
	attrHreflang
	attrType
	attrLang
	attrXMLLang
	attrXlinkHref
	attrData
	attrPoster
	attrDownload
	numAttrKeys
)

func lookupAttr(key []byte) (attrKey, bool) {
	switch string(key) { // no allocation: the compiler compares in place
	case "href":
		return attrHref, true
	case "src":
		return attrSrc, true
	case "srcset":
		return attrSrcset, true
	case "data-src":
		return attrDataSrc, true
	case "rel":
		return attrRel, true
	case "title":
		return attrTitle, true
	case "alt":
		return attrAlt, true
	case "name":
		return attrName, true
	case "property":
		return attrProperty, true
	case "content":
		return attrContent, true
	case "http-equiv":
		return attrHTTPEquiv, true
	case "hreflang":
		return attrHreflang, true
	case "type":
		return attrType, true
	case "lang":
		return attrLang, true
	case "xml:lang":
		return attrXMLLang, true
	case "xlink:href":
		return attrXlinkHref, true
	case "data":
		return attrData, true
	case "poster":
		return attrPoster, true
	case "download":
		return attrDownload, true
	}
	return 0, false
}

// attrs holds the interesting attributes of the current tag. As in a
// browser, the first of duplicated attributes wins.
type attrs struct {
	has [numAttrKeys]bool
	val [numAttrKeys]string
}

func (a *attrs) read(z *html.Tokenizer) {
	a.has = [numAttrKeys]bool{}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if key, ok := lookupAttr(k); ok && !a.has[key] {
			a.has[key], a.val[key] = true, string(v)
		}
	}
}

func (a *attrs) get(k attrKey) (string, bool) { return a.val[k], a.has[k] }

// str returns the attribute's value, "" if absent.
func (a *attrs) str(k attrKey) string {
	if !a.has[k] {
		return ""
	}
	return a.val[k]
}

// htmlSpace is HTML's ASCII whitespace, for strings.Trim*.
const htmlSpace = " \t\n\f\r"

// isHTMLSpace reports HTML's ASCII whitespace.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// collapseSpace trims s, turns every run of ASCII whitespace into one
// space and replaces invalid UTF-8, for text taken from attributes. It
// returns s itself when nothing changes.
func collapseSpace(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	clean := true
	for i := 0; i < len(s); i++ {
		if isHTMLSpace(s[i]) && (s[i] != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		if isHTMLSpace(s[i]) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitTokens splits an attribute such as rel on ASCII whitespace and
// lowercases the tokens.
func splitTokens(s string) []string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isHTMLSpace(s[i]) && (i == 0 || isHTMLSpace(s[i-1])) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < len(s); {
		for i < len(s) && isHTMLSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isHTMLSpace(s[j]) {
			j++
		}
		if j > i {
			out = append(out, strings.ToLower(s[i:j]))
		}
		i = j
	}
	return out
}

// srcsetURLs calls fn with each image candidate URL of a srcset attribute,
// following the HTML candidate grammar: URLs are separated from their
// descriptors by whitespace and candidates by commas (a comma inside
// parentheses in a descriptor does not separate).
func srcsetURLs(s string, fn func(string)) {
	i := 0
	for {
		for i < len(s) && (isHTMLSpace(s[i]) || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return
		}
		start := i
		for i < len(s) && !isHTMLSpace(s[i]) {
			i++
		}
		u := s[start:i]
		if trimmed := strings.TrimRight(u, ","); len(trimmed) < len(u) {
			fn(trimmed) // "a.jpg," has no descriptors
			continue
		}
		fn(u)
		depth := 0
	descriptors:
		for ; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				if depth > 0 {
					depth--
				}
			case ',':
				if depth == 0 {
					i++
					break descriptors
				}
			}
		}
	}
}
