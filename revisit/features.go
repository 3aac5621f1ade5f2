package revisit

import (
	"fmt"
	"math"
	"strings"
)

// Features describe a page at its first visit, for the classifier that predicts its change
// class before any history exists. The first seven are seed 004's (§2.5 of the digest);
// the rest are cheap signals the literature ties to change that the dissertation did not
// try (backward elimination decides whether they help: `sonda train revisit`).
type Features struct {
	Links        float64 // followable outgoing links
	Mailto       float64 // mailto: links
	Images       float64 // <img> elements
	TextSize     float64 // bytes of visible text (the thesis's size without markup)
	LastModified float64 // 1 when the response carried Last-Modified (its absence suggests a dynamic page)
	URLLevel     float64 // directory level of the URL: the root is 1, each directory adds 1
	Depth        float64 // link hops from a seed (the thesis measured it from the domain root and dropped it)

	Query  float64 // 1 when the URL has a query string (generated pages)
	Dates  float64 // dates and times in the text (news, listings, logs carry many)
	Feeds  float64 // feeds the page advertises (<link rel=alternate type=rss/atom>)
	MaxAge float64 // log10(1 + Cache-Control max-age in seconds): the server's own freshness hint; −1 when absent

	// Section is the part of its site the page is in (URLSection): /news/ and /about/
	// pages change differently on most sites. It is not a number, so not in Vector; the
	// optimal policy groups pages by it (GroupKeys).
	Section string
}

// FeatureNames name the entries of Vector, in order.
var FeatureNames = []string{"links", "mailto", "images", "text_size", "last_modified", "url_level", "depth", "query", "dates", "feeds", "max_age"}

// ThesisFeatures are the features seed 004 selected by backward elimination.
var ThesisFeatures = []string{"links", "mailto", "images", "text_size", "last_modified", "url_level"}

// Vector returns the features in FeatureNames order.
func (f Features) Vector() []float64 {
	return []float64{f.Links, f.Mailto, f.Images, f.TextSize, f.LastModified, f.URLLevel, f.Depth, f.Query, f.Dates, f.Feeds, f.MaxAge}
}

// GroupKeys name the groups of pages that look like this one, coarsest first: its site
// section, then its section with the other cheap signals bucketed (dates visible in the
// text, Last-Modified present, a query string, the Cache-Control max-age, the URL level).
// The optimal policy learns a prior over change rates for each group from the pages of it
// already revisited (estimate.Groups), so a new page starts from what pages like it do.
func (f Features) GroupKeys() []string {
	section := "section " + f.Section
	ma := -1
	if f.MaxAge >= 0 {
		ma = int(math.Min(f.MaxAge, 6)) // log10 seconds: 0 (no-cache) … 6 (weeks)
	}
	detail := fmt.Sprintf("%s|dates %d|lm %d|query %d|max-age %d|level %d", section,
		int(math.Min(f.Dates, 3)), int(f.LastModified), int(f.Query), ma, int(math.Min(f.URLLevel, 4)))
	return []string{section, detail}
}

// URLSection is the first segment of a URL path, lower-cased, with runs of digits as one
// '#' (so /2026/… and /2025/… are one section, as are page-1.html and page-2.html); a
// path of a single file gives the file's name without extension, the root "".
func URLSection(path string) string {
	seg := strings.Trim(path, "/")
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg = seg[:i]
	} else if j := strings.LastIndexByte(seg, '.'); j > 0 {
		seg = seg[:j]
	}
	seg = strings.ToLower(seg)
	var b strings.Builder
	digits := false
	for _, c := range seg {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// URLLevel is seed 004's directory level of a URL path: the root is 1 and every directory
// adds 1 (http://www.cin.ufpe.br is 1, http://www.cin.ufpe.br/~lab is 2). The last segment
// counts as a directory unless it looks like a file (has an extension).
func URLLevel(path string) int {
	level := 1
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if s == "" {
			continue
		}
		if i == len(segs)-1 && !strings.HasSuffix(path, "/") && strings.Contains(s, ".") {
			continue // a file
		}
		level++
	}
	return level
}

// maxAge parses the max-age (or s-maxage) directive of a Cache-Control header and returns
// log10(1 + seconds), or −1 when there is none. no-cache and no-store count as 0 seconds.
func maxAge(cacheControl string) float64 {
	best := -1.0
	for _, d := range strings.Split(cacheControl, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		name, val, _ := strings.Cut(d, "=")
		switch strings.TrimSpace(name) {
		case "no-cache", "no-store":
			best = 0
		case "max-age", "s-maxage":
			var secs float64
			ok := false
			for _, c := range strings.Trim(strings.TrimSpace(val), `"`) {
				if c < '0' || c > '9' {
					ok = false
					break
				}
				secs = secs*10 + float64(c-'0')
				ok = true
			}
			if ok {
				best = math.Log10(1 + secs)
			}
		}
	}
	return best
}
