package extract

import (
	"strings"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// commentSection reports whether n is the container of a page's readers' comments (or
// of the form to post one): a div, section or list whose id or class attribute begins
// with "comment" (comments, comment-list, commentlist, comment-respond; "commentary" is
// an article genre, not a thread), names an article's or post's comments
// (article-comments, post-comments), or is one of the comment services' containers
// (Disqus). These are the containers go-trafilatura itself treats as comments (its
// RemovedComments selector), which it prunes only when asked to favour precision: with
// comments excluded it leaves them in the page, and go-readability and DOM Distiller
// know nothing of comments at all, so a long thread under a short post is taken for
// text, or for the article itself.
func commentSection(n *nethtml.Node) bool {
	switch n.DataAtom {
	case atom.Div, atom.Section, atom.Ol, atom.Ul, atom.Dl:
	default:
		return false
	}
	id, class := strings.ToLower(attr(n, "id")), strings.ToLower(attr(n, "class"))
	for _, v := range [2]string{id, class} {
		if strings.HasPrefix(v, "comment") && !strings.HasPrefix(v, "commentary") {
			return true
		}
	}
	return strings.Contains(class, "article-comments") || strings.Contains(class, "post-comments") ||
		strings.HasPrefix(id, "disqus_thread") || strings.HasPrefix(id, "dsq-comments")
}
