package extract

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// cascade is ModeSonda: metadata from the most reliable signal per field, body from
// go-trafilatura (or the fast path, when enabled).
func (e *Extractor) cascade(doc *nethtml.Node, pageURL string, base *url.URL) *Article {
	s := gather(doc)
	a := &Article{URL: pageURL, Mode: ModeSonda}
	main := s.ld.mainArticle(pageURL, absURL(base, s.link("canonical")), absURL(base, s.meta("og:url")))
	e.metadata(a, s, main, base)
	e.body(a, doc, s, main, base)
	if a.Language == "" {
		if lang := detectLanguage(a.Text()); lang != "" {
			a.Language = lang
			a.source("language", "detected")
		}
	}
	if a.Published.IsZero() {
		e.dateFromURL(a)
	}
	e.finish(a)
	classify(a, s, main, e.opts.MinArticleWords)
	return a
}

// metadata fills every field but the body from the page's signals.
func (e *Extractor) metadata(a *Article, s *signals, main ldObject, base *url.URL) {
	g := &s.ld
	lang := e.language(a, s, main)

	// Site name first: the title cleaner strips it from <title>.
	var website ldObject
	for _, o := range g.top {
		if hasType(ldTypes(o), wordSet("website")) {
			website = o
			break
		}
	}
	a.SiteName = a.pick("site_name",
		cand{"og", s.meta("og:site_name")},
		cand{"jsonld", g.text(ldProp(g, main, "publisher"))},
		cand{"jsonld", ldString(g, website, "name")},
		cand{"meta", s.meta("application-name", "apple-mobile-web-app-title", "al:ios:app_name", "dc.publisher", "dcterms.publisher")},
	)
	titleFromTag := ""
	if s.title != "" {
		titleFromTag = cleanTitle(cleanText(s.title), a.SiteName, s.h1, base)
	}
	a.Title = a.pickCorroborated("title", titleEvidence(s),
		cand{"jsonld", ldString(g, main, "headline")},
		cand{"og", s.meta("og:title")},
		cand{"twitter", s.meta("twitter:title")},
		cand{"meta", s.meta("dc.title", "dcterms.title", "parsely-title", "sailthru.title")},
		cand{"jsonld", ldString(g, main, "name")},
		cand{"microdata", s.micro("headline")},
		cand{"title", titleFromTag},
		cand{"h1", first(s.h1)},
	)
	a.Description = a.pick("description",
		cand{"og", s.meta("og:description")},
		cand{"meta", s.meta("description")},
		cand{"twitter", s.meta("twitter:description")},
		cand{"meta", s.meta("dc.description", "dcterms.description")},
		cand{"jsonld", ldString(g, main, "description")},
	)

	// Authors.
	e.authors(a, s, main)

	// Times.
	pub := []cand{
		{"jsonld", ldString(g, main, "datePublished")},
		{"og", s.meta("article:published_time", "og:published_time", "article:published", "og:article:published_time")},
		{"meta", s.meta("datepublished", "publishdate", "publish-date", "publish_date", "pubdate", "parsely-pub-date",
			"sailthru.date", "dc.date.issued", "dcterms.issued", "dc.date.created", "dcterms.created", "dc.date",
			"dcterms.date", "article.published", "article_date_original", "cxenseparse:recs:publishtime",
			"originalpublicationdate", "citation_publication_date", "date", "og:pubdate", "release_date")},
		{"jsonld", ldString(g, main, "dateCreated")},
		{"microdata", s.micro("datepublished")},
		{"time", pubTime(s)},
	}
	a.Published = e.firstDate(a, "published", lang, pub)
	mod := []cand{
		{"jsonld", ldString(g, main, "dateModified")},
		{"og", s.meta("article:modified_time", "og:updated_time", "article:modified", "og:modified_time")},
		{"meta", s.meta("datemodified", "last-modified", "lastmod", "dc.date.modified", "dcterms.modified", "article.updated", "sailthru.lastmodified")},
		{"microdata", s.micro("datemodified")},
	}
	a.Modified = e.firstDate(a, "modified", lang, mod)

	a.Section = a.pick("section",
		cand{"og", s.meta("article:section")},
		cand{"jsonld", ldString(g, main, "articleSection")},
		cand{"meta", s.meta("parsely-section", "section", "article.section", "sailthru.section")},
		cand{"microdata", s.micro("articlesection")},
	)
	var ldKeywords []string
	if main != nil {
		ldKeywords = g.texts(main["keywords"])
	}
	for _, c := range []struct {
		from string
		tags []string
	}{
		{"og", s.metaAll("article:tag")},
		{"jsonld", ldKeywords},
		{"meta", nonEmpty(s.meta("news_keywords", "keywords", "parsely-tags", "sailthru.tags"))},
	} {
		if tags := splitTags(c.tags); len(tags) > 0 {
			a.Tags = tags
			a.source("tags", c.from)
			break
		}
	}
	var ldImage string
	if main != nil {
		ldImage = g.urlOf(main["image"])
	}
	a.Image = a.pick("image",
		cand{"og", absURL(base, s.meta("og:image:secure_url", "og:image", "og:image:url"))},
		cand{"twitter", absURL(base, s.meta("twitter:image", "twitter:image:src"))},
		cand{"jsonld", absURL(base, ldImage)},
		cand{"meta", absURL(base, s.link("image_src"))},
	)
	var ldURL string
	if main != nil {
		ldURL = g.urlOf(main["url"])
	}
	a.CanonicalURL = a.pick("canonical_url",
		cand{"link", httpOnly(absURL(base, s.link("canonical")))},
		cand{"og", httpOnly(absURL(base, s.meta("og:url")))},
		cand{"jsonld", httpOnly(absURL(base, ldURL))},
	)
}

// cand is one candidate value of a field and the signal it comes from.
type cand struct{ from, value string }

// pick sets the field from the first candidate with a value (cleaned) and records its
// source.
func (a *Article) pick(field string, cands ...cand) string {
	for _, c := range cands {
		if v := cleanText(c.value); v != "" {
			a.source(field, c.from)
			return v
		}
	}
	return ""
}

// pickCorroborated is pick, preferring the first candidate the page confirms: one that
// appears in its <title>, an <h1> or og:title. A JSON-LD headline that the visible title
// never mentions is often a summary or a different field misused (Wikipedia writes its
// one-line description there); a confirmed lower-priority value is the safer title.
func (a *Article) pickCorroborated(field string, evidence []string, cands ...cand) string {
	for _, c := range cands {
		v := strings.ToLower(cleanText(c.value))
		if v == "" {
			continue
		}
		for _, ev := range evidence {
			if strings.Contains(ev, v) {
				return a.pick(field, c)
			}
		}
	}
	return a.pick(field, cands...)
}

// titleEvidence is the page's visible titles, lowercased: <title>, <h1>s and og:title.
func titleEvidence(s *signals) []string {
	var ev []string
	for _, t := range append([]string{s.title, s.meta("og:title")}, s.h1...) {
		if t = strings.ToLower(cleanText(t)); t != "" {
			ev = append(ev, t)
		}
	}
	return ev
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func httpOnly(u string) string {
	if isHTTP(u) {
		return u
	}
	return ""
}

// ldProp returns a property of o with references followed.
func ldProp(g *ldGraph, o ldObject, key string) any {
	if o == nil {
		return nil
	}
	return g.resolve(o[key])
}

func ldString(g *ldGraph, o ldObject, key string) string {
	if o == nil {
		return ""
	}
	return g.text(o[key])
}

// firstDate parses the first source that holds a date.
func (e *Extractor) firstDate(a *Article, field, lang string, sources []cand) time.Time {
	for _, d := range sources {
		if d.value == "" {
			continue
		}
		if t, ok := ParseDate(d.value, lang, e.opts.Location); ok {
			a.source(field, d.from)
			return t
		}
	}
	return time.Time{}
}

// pubTime is the datetime of the <time> element most likely to be the publication time:
// one marked pubdate or itemprop=datePublished, or whose class says published, else the
// first <time> with a datetime, if the page has few (a page with many is a listing).
func pubTime(s *signals) string {
	var first string
	withDatetime := 0
	for _, t := range s.times {
		dt := strings.TrimSpace(attr(t, "datetime"))
		if dt == "" {
			continue
		}
		withDatetime++
		if first == "" {
			first = dt
		}
		if _, ok := attrOK(t, "pubdate"); ok {
			return dt
		}
		cls := strings.ToLower(attr(t, "class") + " " + attr(t, "itemprop"))
		if strings.Contains(cls, "publish") || strings.Contains(cls, "posted") || strings.Contains(cls, "created") {
			return dt
		}
		// An ancestor whose class names the publication date (WordPress's entry-date).
		for p, i := t.Parent, 0; p != nil && i < 3; p, i = p.Parent, i+1 {
			c := strings.ToLower(attr(p, "class"))
			if strings.Contains(c, "publish") || strings.Contains(c, "posted-on") {
				return dt
			}
		}
	}
	if withDatetime <= 3 {
		return first
	}
	return ""
}

var urlDate = regexp.MustCompile(`/((?:19|20)\d{2})[/-](0?[1-9]|1[0-2])[/-](0?[1-9]|[12]\d|3[01])(?:[/-]|$)`)

// dateFromURL is the last resort for the publication date: a date in the URL's path
// (/2018/05/12/), read as midnight in Options.Location.
func (e *Extractor) dateFromURL(a *Article) {
	for _, u := range []string{a.CanonicalURL, a.URL} {
		if m := urlDate.FindStringSubmatch(u); m != nil {
			if t, ok := ParseDate(m[1]+"-"+pad2(m[2])+"-"+pad2(m[3]), "", e.opts.Location); ok {
				a.Published = t
				a.source("published", "url")
				return
			}
		}
	}
}

func pad2(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

// language is the page's declared language as a BCP 47 tag: <html lang>, Content-Language,
// JSON-LD inLanguage, og:locale, Dublin Core.
func (e *Extractor) language(a *Article, s *signals, main ldObject) string {
	cands := []cand{
		{"html", s.htmlLang},
		{"meta", s.meta("content-language", "language", "dc.language", "dcterms.language")},
		{"jsonld", ldString(&s.ld, main, "inLanguage")},
		{"og", s.meta("og:locale")},
	}
	for _, c := range cands {
		if tag := normalizeLangTag(c.value); tag != "" {
			a.Language = tag
			a.source("language", c.from)
			return strings.ToLower(tag)
		}
	}
	return ""
}

// normalizeLangTag turns "pt_BR", "PT-br", "en-US,en" into "pt-BR", "en-US"; it returns
// "" for values that are not language tags.
func normalizeLangTag(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, ",;"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	v = strings.ReplaceAll(v, "_", "-")
	parts := strings.Split(v, "-")
	if len(parts[0]) < 2 || len(parts[0]) > 3 {
		return ""
	}
	for _, p := range parts {
		if p == "" || len(p) > 8 {
			return ""
		}
		for _, r := range p {
			if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
				return ""
			}
		}
	}
	for i := range parts[0] {
		if !unicode.IsLetter(rune(parts[0][i])) {
			return ""
		}
	}
	parts[0] = strings.ToLower(parts[0])
	if parts[0] == "xx" || parts[0] == "und" {
		return ""
	}
	for i := 1; i < len(parts); i++ {
		switch len(parts[i]) {
		case 2:
			parts[i] = strings.ToUpper(parts[i])
		case 4:
			parts[i] = strings.ToUpper(parts[i][:1]) + strings.ToLower(parts[i][1:])
		default:
			parts[i] = strings.ToLower(parts[i])
		}
	}
	return strings.Join(parts, "-")
}

// splitTags splits comma- or semicolon-separated keyword lists and drops duplicates.
func splitTags(values []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range values {
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == '|' }) {
			t = cleanText(t)
			k := strings.ToLower(t)
			if t == "" || seen[k] || len(out) >= 50 {
				continue
			}
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// absURL resolves ref against base; with no base, only absolute references are kept.
func absURL(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if !u.IsAbs() {
		if strings.HasPrefix(ref, "//") {
			return "https:" + ref
		}
		return ""
	}
	return u.String()
}

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// sameURL compares URLs ignoring scheme, a leading www., a trailing slash, query and fragment.
func sameURL(a string, others ...string) bool {
	k := urlKey(a)
	if k == "" {
		return false
	}
	for _, o := range others {
		if urlKey(o) == k {
			return true
		}
	}
	return false
}

func urlKey(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Host), "www.") + strings.TrimSuffix(u.Path, "/")
}

// titleSeparators split a <title> into the article's title and the site's name.
var titleSeparators = []string{" | ", " - ", " – ", " — ", " :: ", " · ", " • ", " « ", " » ", " / ", " > "}

// cleanTitle removes the site's name from a <title>: the segment after (or before) a
// separator when it names the site (it equals the site name or the host, or the page's
// <h1> is the rest). Without such evidence the title is kept whole: "Mozilla - Wikipedia"
// could be either.
func cleanTitle(title, siteName string, h1 []string, base *url.URL) string {
	host := ""
	if base != nil {
		host = strings.TrimPrefix(strings.ToLower(base.Hostname()), "www.")
	}
	for _, sep := range titleSeparators {
		i := strings.LastIndex(title, sep)
		if i <= 0 {
			continue
		}
		head, tail := strings.TrimSpace(title[:i]), strings.TrimSpace(title[i+len(sep):])
		if namesSite(tail, siteName, host) || matchesAny(head, h1) {
			return head
		}
		j := strings.Index(title, sep)
		head2, tail2 := strings.TrimSpace(title[:j]), strings.TrimSpace(title[j+len(sep):])
		if namesSite(head2, siteName, host) || matchesAny(tail2, h1) {
			return tail2
		}
	}
	return title
}

func namesSite(seg, siteName, host string) bool {
	if seg == "" {
		return false
	}
	ls := strings.ToLower(seg)
	if siteName != "" && ls == strings.ToLower(siteName) {
		return true
	}
	if host != "" {
		squashed := strings.ReplaceAll(ls, " ", "")
		if squashed == host || strings.HasPrefix(host, squashed+".") || strings.Contains(host, "."+squashed+".") {
			return true
		}
	}
	return false
}

func matchesAny(s string, list []string) bool {
	for _, l := range list {
		if strings.EqualFold(s, l) {
			return true
		}
	}
	return false
}

// hasAncestor reports whether n has an ancestor element with one of the atoms, stopping
// at (not testing) stop.
func hasAncestor(n, stop *nethtml.Node, atoms ...atom.Atom) bool {
	for p := n.Parent; p != nil && p != stop; p = p.Parent {
		if p.Type != nethtml.ElementNode {
			continue
		}
		for _, a := range atoms {
			if p.DataAtom == a {
				return true
			}
		}
	}
	return false
}
