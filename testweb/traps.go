package testweb

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// trapRoute answers every URL of one trap on one host.
type trapRoute struct {
	kind  string
	trap  *Trap
	match func(path, query string) bool
	serve func(w *Web, path, query string, b []byte) []byte
}

// trapKinds are the three traps; each lands on its own host.
var trapKinds = []struct {
	kind  string
	entry func(seed uint64) string
	match func(path, query string) bool
	serve func(w *Web, path, query string, b []byte) []byte
}{
	{"calendar", calendarEntry, calendarMatch, calendarPage},
	{"repeated-segments", func(uint64) string { return "/deep/" }, deepMatch, deepPage},
	{"session-id", func(seed uint64) string { return "/shop/?sid=" + strconv.FormatUint(seed%1e9, 10) }, shopMatch, shopPage},
}

// The calendar: /calendar?month=YYYY-MM links to the months before and
// after, forever.

func calendarEntry(seed uint64) string {
	return fmt.Sprintf("/calendar?month=%04d-%02d", 2020+seed%5, 1+seed%12)
}

// parseMonth reads "month=YYYY-MM" (years 0001 to 9999).
func parseMonth(query string) (year, month int, ok bool) {
	v, found := strings.CutPrefix(query, "month=")
	if !found || len(v) != 7 || v[4] != '-' {
		return 0, 0, false
	}
	for i, c := range []byte(v) {
		if i != 4 && (c < '0' || c > '9') {
			return 0, 0, false
		}
	}
	year, _ = strconv.Atoi(v[:4])
	month, _ = strconv.Atoi(v[5:])
	return year, month, year >= 1 && month >= 1 && month <= 12
}

func calendarMatch(path, query string) bool {
	_, _, ok := parseMonth(query)
	return path == "/calendar" && ok
}

func calendarPage(_ *Web, _, query string, b []byte) []byte {
	y, m, _ := parseMonth(query)
	month := func(d int) string {
		k := y*12 + m - 1 + d
		return fmt.Sprintf("?month=%04d-%02d", k/12, k%12+1)
	}
	hrefs := []string{"/", "Home"}
	if y*12+m < 9999*12+12 {
		hrefs = append(hrefs, month(1), "Next month")
	}
	if y*12+m > 12+1 {
		hrefs = append(hrefs, month(-1), "Previous month")
	}
	return tinyPage(b, fmt.Sprintf("Events in %04d-%02d", y, m), "No events this month.", hrefs...)
}

// Repeated segments: /deep/ links to "sub/", so /deep/sub/, /deep/sub/sub/, ...

func deepMatch(path, query string) bool {
	rest, ok := strings.CutPrefix(path, "/deep/")
	for ok && rest != "" {
		rest, ok = strings.CutPrefix(rest, "sub/")
	}
	return ok && query == ""
}

func deepPage(_ *Web, path, _ string, b []byte) []byte {
	return tinyPage(b, "Level "+strconv.Itoa(strings.Count(path, "/")-2), "Go one level deeper.", "sub/", "Deeper", "/", "Home")
}

// Session ids: every link under /shop/ carries a sid derived from the URL of
// the page it is on, so each page leads to new URLs. (Derived rather than
// counted so that a page's bytes depend on its URL only.)

func shopMatch(path, query string) bool {
	if path != "/shop/" {
		n, ok := strings.CutPrefix(path, "/shop/item-")
		n, ok2 := strings.CutSuffix(n, ".html")
		if !ok || !ok2 || len(n) != 1 || n[0] < '1' || n[0] > '5' {
			return false
		}
	}
	sid, ok := strings.CutPrefix(query, "sid=")
	if query == "" {
		return true
	}
	if !ok || sid == "" || len(sid) > 12 {
		return false
	}
	for _, c := range []byte(sid) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func shopPage(w *Web, path, query string, b []byte) []byte {
	h := mix(w.seed, path+"?"+query)
	sid := func(i uint64) string { return strconv.FormatUint(mix(h, strconv.FormatUint(i, 10))%1e9, 10) }
	hrefs := []string{"/", "Home", "/shop/?sid=" + sid(0), "Shop front"}
	for i := uint64(1); i <= 3; i++ {
		item := (h>>(8*i))%5 + 1
		hrefs = append(hrefs, fmt.Sprintf("/shop/item-%d.html?sid=%s", item, sid(i)), fmt.Sprintf("Item %d", item))
	}
	return tinyPage(b, "Shop", "Your session is "+query+".", hrefs...)
}

// serveTrap answers a trap URL with a small generated page.
func (w *Web) serveTrap(rw http.ResponseWriter, r *http.Request, t *trapRoute, path, query string) int {
	buf := getBuf()
	defer putBuf(buf)
	*buf = t.serve(w, path, query, (*buf)[:0])
	return writeBody(rw, r, http.StatusOK, htmlType, *buf)
}
