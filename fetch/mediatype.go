package fetch

import (
	"fmt"
	"net/http"
	"strings"
)

// parseContentType splits a Content-Type value into a lowercased
// "type/subtype" and the raw charset parameter. It is deliberately more
// forgiving than mime.ParseMediaType, which rejects whole headers over one
// malformed parameter — common on the web, and the media type is still
// usable. A value without a "/" yields an empty media type.
func parseContentType(v string) (mediaType, charset string) {
	mt, params, _ := strings.Cut(v, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if i := strings.IndexByte(mt, '/'); i <= 0 || i == len(mt)-1 || strings.ContainsAny(mt, " \t,") {
		mt = ""
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, val, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "charset") {
			charset = strings.Trim(strings.TrimSpace(val), "\"' ")
			break
		}
	}
	return mt, charset
}

// needsSniff reports whether a declared media type says nothing useful, so
// the body's first bytes must decide (as browsers do).
func needsSniff(mediaType string) bool {
	switch mediaType {
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown",
		"unknown/unknown", "application/x-unknown-content-type", "*/*":
		return true
	}
	return false
}

// sniffLen is how many decoded bytes http.DetectContentType looks at.
const sniffLen = 512

func sniff(prefix []byte) string {
	mt, _ := parseContentType(http.DetectContentType(prefix))
	return mt
}

// validateAcceptType checks one AcceptTypes pattern: "type/subtype",
// "type/*" or "*/*".
func validateAcceptType(p string) error {
	t, s, ok := strings.Cut(p, "/")
	switch {
	case !ok || t == "" || s == "":
		return fmt.Errorf("fetch: accept type %q: want type/subtype, type/* or */*", p)
	case t == "*" && s != "*":
		return fmt.Errorf("fetch: accept type %q: */subtype is not a pattern", p)
	case strings.ContainsAny(p, " \t;,") || strings.Contains(t, "*") && t != "*" || strings.Contains(s, "*") && s != "*":
		return fmt.Errorf("fetch: accept type %q: want type/subtype, type/* or */*", p)
	}
	return nil
}

// acceptsType reports whether mediaType matches one of the (lowercased,
// validated) patterns; no patterns means everything is accepted.
func acceptsType(patterns []string, mediaType string) bool {
	if len(patterns) == 0 {
		return true
	}
	t, _, _ := strings.Cut(mediaType, "/")
	for _, p := range patterns {
		switch {
		case p == "*/*", p == mediaType:
			return true
		case strings.HasSuffix(p, "/*") && p[:len(p)-2] == t:
			return true
		}
	}
	return false
}

// isText reports whether a media type carries text that Result.UTF8 should
// hold: text/*, XML and JSON flavours, and JavaScript.
func isText(mediaType string) bool {
	switch {
	case strings.HasPrefix(mediaType, "text/"),
		strings.HasSuffix(mediaType, "+xml"), strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", mediaType == "application/json",
		mediaType == "application/javascript", mediaType == "application/ecmascript":
		return true
	}
	return false
}

func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

func isXML(mediaType string) bool {
	return mediaType == "application/xml" || mediaType == "text/xml" || strings.HasSuffix(mediaType, "+xml")
}
