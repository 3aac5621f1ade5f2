package testweb

import (
	"strconv"
	"strings"
)

// linkForm is how an href spells its target. All forms of a target resolve,
// after normalization (lowercase scheme and host, default port dropped, dot
// segments resolved, fragment dropped, unreserved percent-escapes decoded,
// utm_* parameters dropped, surrounding whitespace and inner tabs and
// newlines removed), to the target's canonical URL.
type linkForm uint8

const (
	formAbsolute         linkForm = iota // http://www.site07.test/a/b.html
	formRootRelative                     // /a/b.html
	formRelative                         // ../a/b.html, b.html
	formDotRelative                      // ./b.html
	formQuery                            // ?page=2 (only from the same path)
	formUpperHost                        // http://WWW.SITE07.TEST/a/b.html
	formUpperScheme                      // HTTP://www.site07.test/a/b.html
	formPort                             // http://www.site07.test:80/a/b.html
	formProtocolRelative                 // //www.site07.test/a/b.html
	formFragment                         // /a/b.html#part-3
	formTracking                         // /a/b.html?utm_source=...&utm_medium=...
	formDotSegments                      // /./x/../a/b.html
	formWhitespace                       // "\n  /a/b\n.html \t"
	formPercent                          // /a/%62.html
	numForms
)

// crossForms are the forms that name the host, for cross-host links and for
// pages whose bytes are served at other URLs too.
var crossForms = [...]linkForm{formAbsolute, formUpperHost, formUpperScheme, formPort, formProtocolRelative,
	formFragment, formTracking, formDotSegments, formWhitespace, formPercent}

// form picks how from spells its link to to.
func (b *builder) form(from, to *resource) linkForm {
	if from.absOnly || from.site != to.site || to.site == nil {
		return crossForms[b.rng.IntN(len(crossForms))]
	}
	f := linkForm(b.rng.IntN(int(numForms)))
	if f == formQuery && !queryFormFits(from, to) {
		f = formRootRelative
	}
	return f
}

// queryFormFits reports whether "?query" from from resolves to to: same
// path, no <base>, and to has a query.
func queryFormFits(from, to *resource) bool {
	p, _, _ := strings.Cut(from.uri, "?")
	q, query, ok := strings.Cut(to.uri, "?")
	return ok && query != "" && p == q && !from.base && from.site == to.site
}

// appendHref appends how page from spells its link to to in form f. Hosts
// the web does not serve, and relative forms that do not fit, fall back to
// absolute forms. It appends rather than returns a string because pages are
// rendered on every request.
func appendHref(b []byte, from, to *resource, f linkForm) []byte {
	host := unknownHost
	if to.site != nil {
		host = to.site.name
	}
	// loc is the target without decoration: a root-relative path on the same
	// host, the absolute URL otherwise.
	loc := to.uri
	if from.absOnly || from.site != to.site || to.site == nil {
		loc = to.url
		switch f {
		case formRootRelative, formRelative, formDotRelative, formQuery:
			f = formAbsolute
		}
	}
	pathAt := len(loc) - len(to.uri) // where the path starts in loc
	switch f {
	case formRootRelative:
		return append(b, to.uri...)
	case formRelative, formDotRelative:
		r := relative(baseDir(from), to.uri)
		if f == formDotRelative && r[0] != '.' {
			b = append(b, "./"...)
		}
		return append(b, r...)
	case formQuery:
		if _, q, ok := strings.Cut(to.uri, "?"); ok && queryFormFits(from, to) {
			return append(append(b, '?'), q...)
		}
		return append(b, to.uri...)
	case formUpperHost:
		b = append(b, "http://"...)
		for i := 0; i < len(host); i++ {
			c := host[i]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
		}
		return append(b, to.uri...)
	case formUpperScheme:
		return append(append(append(b, "HTTP://"...), host...), to.uri...)
	case formPort:
		return append(append(append(append(b, "http://"...), host...), ":80"...), to.uri...)
	case formProtocolRelative:
		return append(append(append(b, "//"...), host...), to.uri...)
	case formFragment:
		return strconv.AppendInt(append(append(b, loc...), "#part-"...), int64(to.seed%9)+1, 10)
	case formTracking:
		b = append(b, loc...)
		if strings.Contains(loc, "?") {
			b = append(b, '&')
		} else {
			b = append(b, '?')
		}
		b = append(b, "utm_source=sonda&utm_medium=link&utm_campaign=c"...)
		return strconv.AppendInt(b, int64(from.seed%97), 10)
	case formDotSegments:
		return append(append(append(b, loc[:pathAt]...), "/./tmp/.."...), loc[pathAt:]...)
	case formWhitespace:
		return append(append(append(append(append(b, "\n  "...), loc[:pathAt+1]...), '\n'), loc[pathAt+1:]...), " \t"...)
	case formPercent:
		return appendPercentOneLetter(b, loc, pathAt)
	}
	return append(b, to.url...)
}

// appendPercentOneLetter appends loc with the first lowercase letter of its
// last path segment (the path starts at pathAt) percent-encoded: an
// unreserved character, so the escape is equivalent to the letter.
func appendPercentOneLetter(b []byte, loc string, pathAt int) []byte {
	end := len(loc)
	if q := strings.IndexByte(loc[pathAt:], '?'); q >= 0 {
		end = pathAt + q
	}
	for i := pathAt + strings.LastIndexByte(loc[pathAt:end], '/') + 1; i < end; i++ {
		if c := loc[i]; 'a' <= c && c <= 'z' {
			const hex = "0123456789ABCDEF"
			return append(append(append(b, loc[:i]...), '%', hex[c>>4], hex[c&15]), loc[i+1:]...)
		}
	}
	return append(b, loc...)
}

// baseDir is the directory relative references on from resolve against.
func baseDir(from *resource) string {
	if from.base {
		return "/"
	}
	p, _, _ := strings.Cut(from.uri, "?")
	return p[:strings.LastIndexByte(p, '/')+1]
}

// relative returns a relative reference that resolves against a page in
// directory dir (a path ending in '/') to target (a path with an optional
// query). Both are clean absolute paths.
func relative(dir, target string) string {
	path, query, hasQuery := strings.Cut(target, "?")
	common := 0 // length of the longest common prefix ending in '/'
	for k := 0; k < len(dir) && k < len(path) && dir[k] == path[k]; k++ {
		if dir[k] == '/' {
			common = k + 1
		}
	}
	rel := strings.Repeat("../", strings.Count(dir[common:], "/")) + path[common:]
	first, _, _ := strings.Cut(rel, "/")
	if rel == "" || strings.Contains(first, ":") {
		// "" would mean the page itself, and a colon in the first
		// segment would read as a scheme.
		rel = "./" + rel
	}
	if hasQuery {
		rel += "?" + query
	}
	return rel
}
