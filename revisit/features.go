package revisit

import (
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
}

// FeatureNames name the entries of Vector, in order.
var FeatureNames = []string{"links", "mailto", "images", "text_size", "last_modified", "url_level", "depth", "query", "dates", "feeds", "max_age"}

// ThesisFeatures are the features seed 004 selected by backward elimination.
var ThesisFeatures = []string{"links", "mailto", "images", "text_size", "last_modified", "url_level"}

// Vector returns the features in FeatureNames order.
func (f Features) Vector() []float64 {
	return []float64{f.Links, f.Mailto, f.Images, f.TextSize, f.LastModified, f.URLLevel, f.Depth, f.Query, f.Dates, f.Feeds, f.MaxAge}
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
