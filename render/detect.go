package render

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sonda-search/sonda/parse"
)

// Signals are what a page's raw HTML says about who builds its content. A page without
// any script has none: whatever it shows, the server sent.
type Signals struct {
	Scripts     int  // <script> elements, inline or not
	TextRunes   int  // visible text, in characters
	Links       int  // followable links in the markup
	EmptyRoot   bool // an app mount point (id root, app, __next, __nuxt...) with nothing inside
	NoScript    bool // a <noscript> asking for JavaScript
	Framework   bool // markers of a client-side framework (React, Angular, Vue, Next, Nuxt, Svelte, Ember)
	ScriptLinks bool // URL paths or API endpoints appear in script code but few links in the markup
}

// Thresholds of Detect: a page shows "little text" below littleText characters and "few
// links" below fewLinks links. A real article or listing has far more of both; an app
// shell has a title, maybe a heading and a footer.
const (
	littleText = 400
	fewLinks   = 3
)

// Reasons lists the signals that make the page look script-built, empty when it does not.
// The rule: there must be scripts, and either the markup is an empty shell (an empty app
// root, or a noscript plea, with little text) or its content is thin in a way scripts
// explain (little text with a framework marker, few links with URLs inside scripts, or
// next to no text at all).
func (s Signals) Reasons() []string {
	if s.Scripts == 0 {
		return nil
	}
	var r []string
	thin := s.TextRunes < littleText
	if s.EmptyRoot && thin {
		r = append(r, "empty app root")
	}
	if s.NoScript && thin {
		r = append(r, "noscript asks for JavaScript")
	}
	if s.Framework && thin {
		r = append(r, "framework marker with little text")
	}
	if s.ScriptLinks {
		r = append(r, "links only in scripts")
	}
	if s.TextRunes < littleText/4 && s.Links < fewLinks {
		r = append(r, "next to no text or links")
	}
	return r
}

// ScriptBuilt says whether the page looks built by script (Reasons is not empty).
func (s Signals) ScriptBuilt() bool { return len(s.Reasons()) > 0 }

var (
	scriptBlock  = regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script>`)
	emptyRoot    = regexp.MustCompile(`(?i)<(div|main|section|app-root)\b[^>]*\bid\s*=\s*["']?(root|app|__next|__nuxt|svelte|main-app|ember-app|application)["']?[^>]*>\s*</(div|main|section|app-root)>`)
	appRootTag   = regexp.MustCompile(`(?i)<app-root\b[^>]*>\s*</app-root>`)
	noscriptText = regexp.MustCompile(`(?is)<noscript\b[^>]*>(.*?)</noscript>`)
	// A path-looking string literal in code: "/api/...", '/datasets/...', "https://...".
	scriptURL = regexp.MustCompile(`["'\x60](https?://[^"'\x60\s]{3,}|/[A-Za-z0-9_\-]+/[^"'\x60\s]*)["'\x60]`)
)

// frameworkMarkers are strings the popular client-side frameworks leave in their HTML.
var frameworkMarkers = []string{
	"data-reactroot", "data-reactid", "__next_data__", "window.__nuxt__", "data-v-app", "ng-version", "ng-app",
	"data-server-rendered", "__svelte", "ember-application", "window.__initial_state__", "window.__apollo_state__",
}

// Detect reads the signals of a page: page is its parse, raw its HTML as UTF-8.
func Detect(page *parse.Page, raw []byte) Signals {
	s := Signals{Scripts: countScripts(raw)}
	if s.Scripts == 0 {
		return s
	}
	if page != nil {
		s.TextRunes = utf8.RuneCountInString(page.Text())
		s.Links = len(page.Links)
	}
	if s.TextRunes >= littleText && s.Links >= fewLinks {
		// The shell signals only count on thin pages (see Reasons): a page with text and
		// links, the common case, is judged without scanning for them.
		return s
	}
	s.EmptyRoot = emptyRoot.Match(raw) || appRootTag.Match(raw)
	for _, m := range noscriptText.FindAllSubmatch(raw, -1) {
		if bytes.Contains(bytes.ToLower(m[1]), []byte("javascript")) {
			s.NoScript = true
			break
		}
	}
	lower := bytes.ToLower(raw)
	for _, m := range frameworkMarkers {
		if bytes.Contains(lower, []byte(m)) {
			s.Framework = true
			break
		}
	}
	if s.Links < fewLinks {
		n := 0
		for _, m := range scriptBlock.FindAllSubmatch(raw, -1) {
			for _, u := range scriptURL.FindAllSubmatch(m[1], -1) {
				if !strings.HasSuffix(string(u[1]), ".js") {
					n++
				}
			}
		}
		s.ScriptLinks = n > 0
	}
	return s
}

// countScripts counts <script> start tags, any case: it runs on every HTML page of an
// auto crawl, so it scans with IndexByte rather than a regular expression.
func countScripts(raw []byte) int {
	n := 0
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], '<')
		if j < 0 {
			return n
		}
		i += j + 1
		if len(raw)-i >= 7 && asciiFoldEqual(raw[i:i+6], "script") {
			if c := raw[i+6]; c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' {
				n++
			}
		}
	}
}

func asciiFoldEqual(b []byte, lower string) bool {
	for i := range len(lower) {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
