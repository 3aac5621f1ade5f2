package feeds

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/sonda-search/sonda/extract"
)

// parseSitemap streams a <urlset> or <sitemapindex>. Elements are matched by local name
// inside their parent (<url><loc>, <url><lastmod>, <news:news><news:title>, <image:image>
// <image:loc>), so namespace prefixes and unknown extensions do not matter. Encodings other
// than UTF-8 are decoded as their XML declaration says.
func parseSitemap(r io.Reader, pageURL string, lim Limits) (*Document, error) {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = charset.NewReaderLabel
	dec.Strict = true
	doc := &Document{}
	var stack []string // local names of the open elements
	var cur *Entry     // the <url> or <sitemap> being read
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, col := dec.InputPos()
			return doc, fmt.Errorf("malformed sitemap XML at line %d, column %d: %w", line, col, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			stack = append(stack, name)
			text.Reset()
			switch {
			case len(stack) == 1:
				switch name {
				case "urlset":
					doc.Kind = KindSitemap
				case "sitemapindex":
					doc.Kind = KindSitemapIndex
				default:
					return doc, fmt.Errorf("root element <%s> is not a sitemap", t.Name.Local)
				}
			case len(stack) == 2 && (name == "url" || name == "sitemap"):
				cur = &Entry{}
			}
		case xml.CharData:
			if cur != nil && text.Len() < 64<<10 {
				text.Write(t)
			}
		case xml.EndElement:
			if len(stack) == 0 {
				continue
			}
			name := stack[len(stack)-1]
			parent := ""
			if len(stack) >= 2 {
				parent = stack[len(stack)-2]
			}
			value := strings.TrimSpace(text.String())
			text.Reset()
			stack = stack[:len(stack)-1]
			if cur == nil {
				continue
			}
			if len(stack) == 1 { // </url> or </sitemap>
				if full := doc.add(cur, pageURL, lim); full {
					return doc, nil
				}
				cur = nil
				continue
			}
			cur.set(parent, name, value, pageURL)
		}
	}
	if doc.Kind == KindNone {
		return doc, errors.New("empty sitemap: no root element")
	}
	return doc, nil
}

// add keeps a finished entry; full says the limit was reached (the document is cut).
func (d *Document) add(e *Entry, pageURL string, lim Limits) (full bool) {
	if e.URL == "" {
		return false
	}
	list := &d.Entries
	if d.Kind == KindSitemapIndex {
		list = &d.Sitemaps
	}
	if len(*list) >= lim.MaxEntries {
		d.Truncated = true
		return true
	}
	*list = append(*list, *e)
	return false
}

// set records one child element of a <url> or <sitemap>: parent is the element that
// contains it (url, news, publication, image...).
func (e *Entry) set(parent, name, value, pageURL string) {
	switch {
	case (parent == "url" || parent == "sitemap") && name == "loc":
		e.URL = resolve(pageURL, value)
	case (parent == "url" || parent == "sitemap") && name == "lastmod":
		e.Modified, _ = extract.ParseDate(value, "", time.UTC)
	case parent == "url" && name == "changefreq":
		e.Frequency = strings.ToLower(value)
	case parent == "news" && name == "title":
		e.Title = value
	case parent == "news" && name == "publication_date":
		e.Published, _ = extract.ParseDate(value, "", time.UTC)
	case parent == "news" && name == "keywords":
		for _, k := range strings.Split(value, ",") {
			if k = strings.TrimSpace(k); k != "" && len(e.Keywords) < 50 {
				e.Keywords = append(e.Keywords, k)
			}
		}
	case parent == "publication" && name == "name":
		e.Source = value
	case parent == "publication" && name == "language":
		e.Language = value
	case parent == "image" && name == "loc":
		if u := resolve(pageURL, value); u != "" && len(e.Images) < 100 {
			e.Images = append(e.Images, u)
		}
	}
}

// resolve makes ref absolute against base and keeps only http(s) URLs.
func resolve(base, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || len(ref) > 8<<10 {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if !u.IsAbs() {
		b, err := url.Parse(base)
		if err != nil || !b.IsAbs() {
			return ""
		}
		u = b.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return ""
	}
	return u.String()
}
