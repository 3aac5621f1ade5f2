package news

import (
	"strings"

	"github.com/sonda-search/sonda/index"
)

// ShapeDoc implements index.Shaper: an article page is indexed as the "article" kind with
// its extracted title, description and text (cleaner than the page's, which carries its
// navigation), its headings, and its dates, authors, site, section and tags as fields, so
// searches can filter by kind and sort or facet by date.
func (a *Article) ShapeDoc(d *index.Doc) {
	d.Kind = index.KindArticle
	if a.Title != "" {
		d.Title = a.Title
	}
	if a.Description != "" {
		d.Description = a.Description
	}
	if text := a.Text(); text != "" {
		d.Body = text
	}
	var heads []string
	for _, b := range a.Body {
		if len(b.Kind) == 2 && b.Kind[0] == 'h' {
			heads = append(heads, b.Text)
		}
	}
	if len(heads) > 0 {
		d.Headings = strings.Join(heads, "\n")
	}
	if lang, _, _ := strings.Cut(strings.ToLower(a.Language), "-"); lang != "" {
		d.Lang = lang
	}
	if d.Fields == nil {
		d.Fields = map[string]any{}
	}
	set := func(name string, v any, ok bool) {
		if ok {
			d.Fields[name] = v
		}
	}
	set("published", a.Published, !a.Published.IsZero())
	set("modified", a.Modified, !a.Modified.IsZero())
	set("authors", a.Authors, len(a.Authors) > 0)
	set("site_name", a.SiteName, a.SiteName != "")
	set("section", a.Section, a.Section != "")
	set("tags", a.Tags, len(a.Tags) > 0)
	set("canonical_url", a.CanonicalURL, a.CanonicalURL != "")
}
