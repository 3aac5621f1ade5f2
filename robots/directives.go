package robots

import (
	"strings"
	"time"
)

// Directives are the page-level robots rules of one fetched page, from
// <meta name="robots"> (or a meta named after our product token) and the
// X-Robots-Tag response header. The crawler still fetches such pages; the
// directives say what it may do with them: NoIndex pages are not indexed,
// NoFollow pages give no links.
type Directives struct {
	NoIndex      bool
	NoFollow     bool
	NoArchive    bool // "noarchive", or Bing's "nocache": keep no public copy
	NoSnippet    bool // "nosnippet" or "max-snippet: 0"
	NoImageIndex bool
	// UnavailableAfter is the "unavailable_after" date, zero when absent or
	// unparseable. Indexable honours it: from that instant on the page
	// counts as noindex.
	UnavailableAfter time.Time
}

// Meta is a <meta name=… content=…> element of a page.
type Meta struct {
	Name    string
	Content string
}

// Merge combines two sets of directives; the most restrictive wins (a flag
// set in either is set, the earlier UnavailableAfter is kept).
func (d Directives) Merge(o Directives) Directives {
	d.NoIndex = d.NoIndex || o.NoIndex
	d.NoFollow = d.NoFollow || o.NoFollow
	d.NoArchive = d.NoArchive || o.NoArchive
	d.NoSnippet = d.NoSnippet || o.NoSnippet
	d.NoImageIndex = d.NoImageIndex || o.NoImageIndex
	if d.UnavailableAfter.IsZero() || (!o.UnavailableAfter.IsZero() && o.UnavailableAfter.Before(d.UnavailableAfter)) {
		d.UnavailableAfter = o.UnavailableAfter
	}
	return d
}

// Indexable reports whether the page may be indexed at now: not NoIndex
// and not past its UnavailableAfter date.
func (d Directives) Indexable(now time.Time) bool {
	return !d.NoIndex && (d.UnavailableAfter.IsZero() || now.Before(d.UnavailableAfter))
}

// MetaDirectives reads the meta elements that speak to agent: those named
// "robots" and those named after agent's product token (so "sonda" for
// "Sonda/1.0"), case-insensitively; metas for other crawlers ("googlebot")
// are ignored. Contents are comma lists of directives; "none" means noindex
// and nofollow, "all", "index" and "follow" restrict nothing, unknown words
// are ignored, and several metas merge.
func MetaDirectives(metas []Meta, agent string) Directives {
	tok := ProductToken(agent)
	var d Directives
	for _, m := range metas {
		name := strings.ToLower(strings.TrimSpace(m.Name))
		if name == "robots" || (tok != "" && name == tok) {
			d = d.Merge(parseDirectiveList(m.Content))
		}
	}
	return d
}

// HeaderDirectives reads X-Robots-Tag header values (one per header line)
// for agent. Each value is a comma list of directives that applies to every
// crawler, unless an item starts with a crawler name and a colon
// ("otherbot: noindex, nofollow"): from there to the end of that value the
// directives apply only to the named crawler, and they count when that is
// agent's product token.
func HeaderDirectives(values []string, agent string) Directives {
	tok := ProductToken(agent)
	var d Directives
	for _, v := range values {
		target := "" // "" = every crawler
		items := strings.Split(v, ",")
		for i := 0; i < len(items); i++ {
			item := strings.TrimSpace(items[i])
			if name, rest, ok := strings.Cut(item, ":"); ok {
				lname := strings.ToLower(strings.TrimSpace(name))
				if !valueDirectives[lname] && lname != "" {
					target = ProductToken(lname)
					if tokenLen(lname) != len(lname) {
						target = "\x00" // not a crawler name: matches nobody
					}
					item = strings.TrimSpace(rest)
				}
			}
			if target != "" && target != tok {
				continue
			}
			i += applyDirective(&d, item, items[i+1:])
		}
	}
	return d
}

// valueDirectives are the directives written "name: value", which a header
// parser must not take for a crawler name.
var valueDirectives = map[string]bool{
	"unavailable_after": true,
	"max-snippet":       true,
	"max-image-preview": true,
	"max-video-preview": true,
}

func parseDirectiveList(content string) Directives {
	var d Directives
	items := strings.Split(content, ",")
	for i := 0; i < len(items); i++ {
		i += applyDirective(&d, items[i], items[i+1:])
	}
	return d
}

// applyDirective applies one directive to d. Dates may contain commas
// ("unavailable_after: Fri, 25 Jun 2027 15:00:00 GMT"), so a date that does
// not parse is retried with the following item joined on; the number of
// items so consumed is returned.
func applyDirective(d *Directives, item string, next []string) int {
	item = strings.TrimSpace(item)
	name, value, hasValue := strings.Cut(item, ":")
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	case "none":
		d.NoIndex, d.NoFollow = true, true
	case "noarchive", "nocache":
		d.NoArchive = true
	case "nosnippet":
		d.NoSnippet = true
	case "noimageindex":
		d.NoImageIndex = true
	case "max-snippet":
		if strings.TrimSpace(value) == "0" {
			d.NoSnippet = true
		}
	case "unavailable_after":
		if !hasValue {
			return 0
		}
		value = strings.TrimSpace(value)
		if t, ok := parseDate(value); ok {
			*d = d.Merge(Directives{UnavailableAfter: t})
			return 0
		}
		if len(next) > 0 {
			if t, ok := parseDate(value + "," + next[0]); ok {
				*d = d.Merge(Directives{UnavailableAfter: t})
				return 1
			}
		}
	}
	return 0
}

// dateLayouts are the formats unavailable_after is seen in: RFC 850 and
// RFC 822/1123 (what Google documents), ISO 8601 and a few loose variants.
var dateLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02",
	time.RFC1123,
	time.RFC1123Z,
	time.RFC850,
	time.RFC822,
	time.RFC822Z,
	"2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006",
	"2-Jan-2006 15:04:05 MST",
	"Monday, 2 January 2006 15:04:05 MST",
	"2 January 2006",
	"January 2, 2006",
}

// parseDate returns the instant in UTC. Zone abbreviations other than UTC
// and GMT ("PST") are read as UTC, as time.Parse does: an error of hours on
// a date that usually lies months away.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
