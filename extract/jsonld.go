package extract

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ldObject is one schema.org node of a page's JSON-LD.
type ldObject = map[string]any

// ldGraph is every JSON-LD node of a page, flattened: top-level objects, list elements,
// @graph members and nested objects, with an index by @id so references such as
// "author": {"@id": "#/schema/person/1"} can be followed (Yoast and Rank Math write them).
type ldGraph struct {
	nodes []ldObject          // every typed node, in document order
	top   []ldObject          // the typed nodes a page states itself: top level and @graph
	byID  map[string]ldObject // nodes with content, by @id
}

// maxLDNodes bounds the nodes kept from one page; real pages have tens.
const maxLDNodes = 2000

// add parses one <script type="application/ld+json"> body. Malformed JSON is read
// leniently (comment and CDATA wrappers, raw newlines in strings, trailing commas); what
// still does not parse is skipped.
func (g *ldGraph) add(script string) {
	v, ok := decodeLD(script)
	if !ok {
		return
	}
	if g.byID == nil {
		g.byID = map[string]ldObject{}
	}
	g.walk(v, 0, true)
}

// walk collects the typed nodes under v; top says v is stated by the page itself (a
// top-level value, a member of a top-level list or of @graph) rather than a property value.
func (g *ldGraph) walk(v any, depth int, top bool) {
	if depth > 32 || len(g.nodes) >= maxLDNodes {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			g.walk(e, depth+1, top)
		}
	case ldObject:
		if _, typed := x["@type"]; typed {
			g.nodes = append(g.nodes, x)
			if top {
				g.top = append(g.top, x)
			}
		}
		if id, ok := x["@id"].(string); ok && id != "" && len(x) > 1 {
			if _, dup := g.byID[id]; !dup {
				g.byID[id] = x
			}
		}
		for k, e := range x {
			if k == "@context" {
				continue
			}
			switch e.(type) {
			case []any, ldObject:
				g.walk(e, depth+1, top && k == "@graph")
			}
		}
	}
}

func decodeLD(s string) (any, bool) {
	s = strings.TrimSpace(s)
	for _, w := range [][2]string{{"<!--", "-->"}, {"<![CDATA[", "]]>"}, {"//<![CDATA[", "//]]>"}, {"/*<![CDATA[*/", "/*]]>*/"}} {
		if strings.HasPrefix(s, w[0]) {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s[len(w[0]):]), w[1]))
		}
	}
	s = strings.TrimSuffix(s, ";")
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, true
	}
	fixed := repairJSON(s)
	if err := json.Unmarshal(fixed, &v); err == nil {
		return v, true
	}
	return nil, false
}

// repairJSON fixes the two mistakes hand-written JSON-LD makes most: control characters
// (raw newlines, tabs) inside strings, and commas before a closing bracket.
func repairJSON(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s))
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c < 0x20:
				b.WriteByte(' ')
				continue
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '"':
			inString = true
		case ',':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\r' || s[j] == '\t') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// resolve follows an {"@id": ...} reference to the node it names, when the page has it.
func (g *ldGraph) resolve(v any) any {
	if o, ok := v.(ldObject); ok && len(o) == 1 {
		if id, ok := o["@id"].(string); ok {
			if full, ok := g.byID[id]; ok {
				return full
			}
		}
	}
	return v
}

// ldTypes returns a node's @type values without schema.org prefixes ("NewsArticle" for
// "http://schema.org/NewsArticle" or "schema:NewsArticle").
func ldTypes(o ldObject) []string {
	var out []string
	add := func(s string) {
		if i := strings.LastIndexAny(s, "/:#"); i >= 0 {
			s = s[i+1:]
		}
		if s != "" {
			out = append(out, s)
		}
	}
	switch t := o["@type"].(type) {
	case string:
		add(t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				add(s)
			}
		}
	}
	return out
}

// articleTypes are the schema.org types whose nodes describe an article: Article and the
// subtypes publishers use.
var articleTypes = wordSet(
	"article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle",
	"opinionnewsarticle", "reviewnewsarticle", "backgroundnewsarticle", "askpublicnewsarticle",
	"satiricalarticle", "scholarlyarticle", "techarticle", "report", "liveblogposting",
	"advertisercontentarticle", "medicalscholarlyarticle", "socialmediaposting",
	"discussionforumposting", "posting", "creativework",
)

// pageTypes describe a page that is not an article (a home page, a listing, a product).
var pageTypes = wordSet(
	"website", "collectionpage", "itemlist", "searchresultspage", "profilepage",
	"product", "productgroup", "offer", "event", "recipe", "jobposting", "faqpage", "qapage",
	"videoobject", "musicrecording", "book", "movie", "softwareapplication", "place",
	"localbusiness", "organization", "store", "restaurant", "course", "dataset",
)

// isArticleType reports whether one of types names an article. CreativeWork counts only
// when it is the sole type (some sites use it for posts).
func isArticleType(types []string) bool {
	for _, t := range types {
		lt := strings.ToLower(t)
		if lt == "creativework" && len(types) > 1 {
			continue
		}
		if articleTypes[lt] {
			return true
		}
	}
	return false
}

func hasType(types []string, set map[string]bool) bool {
	for _, t := range types {
		if set[strings.ToLower(t)] {
			return true
		}
	}
	return false
}

// mainArticle picks the page's article node: the one whose url, @id or mainEntityOfPage
// names the page, else the one with the longest articleBody or the most fields. A
// WebPage's mainEntity pointing at an article counts as naming the page.
func (g *ldGraph) mainArticle(pageURLs ...string) ldObject {
	var best ldObject
	bestScore := -1
	for _, o := range g.nodes {
		if !isArticleType(ldTypes(o)) {
			continue
		}
		score := len(o)
		if b, ok := o["articleBody"].(string); ok {
			score += len(b) / 100
		}
		if _, ok := o["headline"]; ok {
			score += 5
		}
		for _, k := range []string{"url", "@id", "mainEntityOfPage"} {
			if u := g.urlOf(o[k]); u != "" && sameURL(u, pageURLs...) {
				score += 1000
				break
			}
		}
		if score > bestScore {
			best, bestScore = o, score
		}
	}
	return best
}

// urlOf reads a URL-valued property: a string, an object with @id or url, or a list.
func (g *ldGraph) urlOf(v any) string {
	switch x := g.resolve(v).(type) {
	case string:
		return strings.TrimSpace(x)
	case ldObject:
		for _, k := range []string{"url", "@id", "contentUrl"} {
			if s, ok := x[k].(string); ok && s != "" {
				return strings.TrimSpace(s)
			}
		}
	case []any:
		for _, e := range x {
			if s := g.urlOf(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// text reads a text-valued property: a string, the first string of a list, or an
// object's name or @value.
func (g *ldGraph) text(v any) string {
	switch x := g.resolve(v).(type) {
	case string:
		return cleanText(x)
	case []any:
		for _, e := range x {
			if s := g.text(e); s != "" {
				return s
			}
		}
	case ldObject:
		for _, k := range []string{"name", "@value", "headline"} {
			if s, ok := x[k].(string); ok {
				return cleanText(s)
			}
		}
	case float64:
		return strings.TrimSpace(strings.TrimRight(strings.TrimRight(jsonNumber(x), "0"), "."))
	}
	return ""
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// texts reads a property that may hold several values (keywords, authors' names).
func (g *ldGraph) texts(v any) []string {
	switch x := g.resolve(v).(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, g.texts(e)...)
		}
		return out
	case nil:
		return nil
	default:
		if s := g.text(x); s != "" {
			return []string{s}
		}
	}
	return nil
}

// people reads an author or creator property: Person or Organization nodes (their name,
// or given and family name), plain strings, or lists of either. Organizations come after
// people, so a byline names the writer before the newsroom.
func (g *ldGraph) people(v any) (persons, orgs []string) {
	var visit func(v any, depth int)
	visit = func(v any, depth int) {
		if depth > 4 {
			return
		}
		switch x := g.resolve(v).(type) {
		case string:
			if s := cleanText(x); s != "" && !looksLikeURL(s) {
				persons = append(persons, s)
			}
		case []any:
			for _, e := range x {
				visit(e, depth+1)
			}
		case ldObject:
			name := g.text(x["name"])
			if name == "" {
				name = strings.TrimSpace(g.text(x["givenName"]) + " " + g.text(x["familyName"]))
			}
			if name == "" || looksLikeURL(name) {
				return
			}
			if hasType(ldTypes(x), wordSet("organization", "newsmediaorganization", "corporation")) {
				orgs = append(orgs, name)
			} else {
				persons = append(persons, name)
			}
		}
	}
	visit(v, 0)
	return persons, orgs
}

func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "www.")
}
