package extract

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/RadhiFadlillah/whatlanggo"
	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// classify decides whether the page is an article. A page is not an article when:
//
//   - its body has fewer than minWords words (KindEmpty below ten, KindMedia when the page
//     is built around a video or audio player, KindPage otherwise);
//   - it declares itself something else and nowhere an article: JSON-LD whose top-level
//     nodes are a CollectionPage, ItemList, SearchResultsPage, WebSite, Product, Event,
//     ProfilePage… without any Article type, or an og:type such as video.movie, product,
//     profile (KindListing for collections, KindMedia for video and music, KindPage else);
//   - it is a listing: three or more <article> teasers each holding a link, or most of its
//     words are link text (a home page or section front), unless it declares an article.
//
// Everything else with enough prose is an article. The thesis had only the last test's
// opposite ("paragraphs inside <article>"), which rejected every page without <article>
// and accepted listings whose teasers had a <p>.
func classify(a *Article, s *signals, main ldObject, minWords int) {
	kind, why := judge(a, s, main, minWords)
	a.Kind = kind
	a.IsArticle = kind == KindArticle
	if !a.IsArticle {
		a.NotArticle = why
	}
}

func judge(a *Article, s *signals, main ldObject, minWords int) (kind, why string) {
	ogType := strings.ToLower(strings.TrimSpace(s.meta("og:type")))
	declaredArticle := main != nil || ogType == "article" || strings.HasPrefix(ogType, "article") || ogType == "news" || strings.HasSuffix(ogType, ":article")
	if a.WordCount < 10 {
		return KindEmpty, fmt.Sprintf("body has %d words", a.WordCount)
	}
	if !declaredArticle {
		if k, t := declaredKind(s, ogType); k != "" {
			return k, "the page declares itself " + t
		}
	}
	if !declaredArticle {
		if n := teaserCount(s); n >= 3 {
			return KindListing, fmt.Sprintf("%d <article> teasers with links", n)
		}
		if s.body != nil {
			words, linkWords := linkDensity(s.body)
			if words > 0 && float64(linkWords) >= 0.5*float64(words) && a.WordCount < 2*linkWords {
				return KindListing, fmt.Sprintf("%d of the page's %d words are link text", linkWords, words)
			}
		}
	}
	if a.WordCount < minWords {
		if ogType == "video" || strings.HasPrefix(ogType, "video.") || strings.HasPrefix(ogType, "music.") || hasPlayer(s) {
			return KindMedia, fmt.Sprintf("body has %d words around a media player", a.WordCount)
		}
		return KindPage, fmt.Sprintf("body has %d words (fewer than %d)", a.WordCount, minWords)
	}
	return KindArticle, ""
}

// declaredKind reads what a page says it is when that is not an article.
func declaredKind(s *signals, ogType string) (kind, what string) {
	hasArticle := false
	var other string
	for _, o := range s.ld.top {
		types := ldTypes(o)
		if isArticleType(types) {
			hasArticle = true
			break
		}
		for _, t := range types {
			lt := strings.ToLower(t)
			if pageTypes[lt] && other == "" && lt != "organization" && lt != "website" {
				other = t
			}
		}
	}
	if !hasArticle && other != "" {
		switch strings.ToLower(other) {
		case "collectionpage", "itemlist", "searchresultspage":
			return KindListing, "a schema.org " + other
		case "videoobject", "musicrecording", "movie":
			return KindMedia, "a schema.org " + other
		}
		return KindPage, "a schema.org " + other
	}
	switch {
	case strings.HasPrefix(ogType, "video") || strings.HasPrefix(ogType, "music"):
		return KindMedia, "og:type " + ogType
	case ogType == "product" || ogType == "profile" || ogType == "book" || ogType == "place" ||
		strings.HasPrefix(ogType, "business") || strings.HasPrefix(ogType, "product"):
		return KindPage, "og:type " + ogType
	}
	return "", ""
}

// teaserCount counts top-level <article> elements that look like teasers: short, with a
// link. A page of several of them lists stories rather than telling one.
func teaserCount(s *signals) int {
	n := 0
	for _, art := range s.articles {
		if nestedInArticle(art) {
			continue
		}
		hasLink := false
		eachElement(art, func(c *nethtml.Node) bool {
			if c.DataAtom == atom.A && attr(c, "href") != "" {
				hasLink = true
			}
			return !hasLink
		})
		if hasLink && countWords(nodeText(art)) < 150 {
			n++
		}
	}
	return n
}

// linkDensity counts the words of the visible text under root and those inside links.
func linkDensity(root *nethtml.Node) (words, linkWords int) {
	eachElement(root, func(n *nethtml.Node) bool {
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head:
			return false
		case atom.A:
			w := countWords(nodeText(n))
			linkWords += w
			words += w
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == nethtml.TextNode {
				words += countWords(c.Data)
			}
		}
		return true
	})
	return words, linkWords
}

// hasPlayer reports a video or audio element or an embedded player.
func hasPlayer(s *signals) bool {
	if s.body == nil {
		return false
	}
	found := false
	eachElement(s.body, func(n *nethtml.Node) bool {
		switch n.DataAtom {
		case atom.Video, atom.Audio:
			found = true
		case atom.Iframe:
			src := strings.ToLower(attr(n, "src"))
			for _, p := range []string{"youtube", "vimeo", "dailymotion", "player", "soundcloud", "spotify"} {
				if strings.Contains(src, p) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// detectLanguage guesses the language of a text that declares none, with whatlanggo's
// trigram profiles; "" when the text is short or the guess unreliable.
func detectLanguage(text string) string {
	if countWords(text) < 20 {
		return ""
	}
	if len(text) > 20000 {
		text = text[:20000]
	}
	info := whatlanggo.Detect(text)
	if !info.IsReliable() {
		return ""
	}
	return info.Lang.Iso6391()
}

// isWordRune is the \w of Unicode regular expressions: letters, numbers and underscore.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }
