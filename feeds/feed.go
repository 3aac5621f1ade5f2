package feeds

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/mmcdole/gofeed"
)

// parseFeed reads an RSS, Atom or JSON feed with gofeed. An item's URL is its link (or
// its first link, or a GUID that is a URL), resolved against the feed's address.
func parseFeed(body []byte, pageURL string, lim Limits) (*Document, error) {
	f, err := gofeed.NewParser().Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("malformed feed: %w", err)
	}
	doc := &Document{Kind: KindFeed, Title: strings.TrimSpace(f.Title)}
	base := pageURL
	if base == "" {
		base = f.Link
	}
	for _, it := range f.Items {
		if it == nil {
			continue
		}
		u := itemURL(it, base)
		if u == "" {
			continue
		}
		if len(doc.Entries) >= lim.MaxEntries {
			doc.Truncated = true
			break
		}
		e := Entry{URL: u, Title: strings.TrimSpace(it.Title)}
		if it.PublishedParsed != nil {
			e.Published = *it.PublishedParsed
		}
		if it.UpdatedParsed != nil {
			e.Modified = *it.UpdatedParsed
		}
		doc.Entries = append(doc.Entries, e)
	}
	return doc, nil
}

func itemURL(it *gofeed.Item, base string) string {
	if u := resolve(base, it.Link); u != "" {
		return u
	}
	for _, l := range it.Links {
		if u := resolve(base, l); u != "" {
			return u
		}
	}
	if strings.HasPrefix(it.GUID, "http://") || strings.HasPrefix(it.GUID, "https://") {
		return resolve(base, it.GUID)
	}
	return ""
}

// newest is the latest publication or modification time among entries (zero if none).
func newest(entries []Entry) time.Time {
	var t time.Time
	for _, e := range entries {
		for _, c := range []time.Time{e.Published, e.Modified} {
			if c.After(t) {
				t = c
			}
		}
	}
	return t
}
