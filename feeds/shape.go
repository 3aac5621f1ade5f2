package feeds

import (
	"bytes"
	"fmt"
)

// Limits on the shape of a feed's or sitemap's XML, checked before any XML parser sees
// it. encoding/xml (and gofeed on top of it) allocates per open element and per
// attribute: 20 MiB of "<a><a><a>..." took 1.2 GB of heap, one tag with 3.5 million
// attributes 580 MB. A sitemap nests five elements deep (urlset, url, news:news,
// news:publication, news:name) and its longest tag is the root's namespace declarations;
// feeds are about as shallow. So anything far past these is refused, named as what it is.
const (
	maxXMLDepth = 64
	maxXMLTag   = 64 << 10
	// maxSitemapText bounds a text run of a sitemap (a <loc> holds at most 2,048
	// characters by the protocol): encoding/xml holds a text run whole, several times over
	// while it grows. Feeds carry whole articles in their descriptions and are not held to it.
	maxSitemapText = 1 << 20
)

// checkXMLShape scans body once, without allocating, and returns an error naming the
// first element nested deeper than maxXMLDepth, the first tag longer than maxXMLTag or
// the first text run (CDATA included) longer than maxText (0: no limit). Comments are
// skipped; a processing instruction or a DOCTYPE counts as a tag for its length.
func checkXMLShape(body []byte, maxText int) error {
	depth, textStart := 0, 0
	tooLong := func() error {
		return fmt.Errorf("a text of more than %d KiB at byte %d: a hostile or broken sitemap, not read (a <loc> holds at most 2,048 characters; the limit bounds the parser's memory)", maxText>>10, textStart)
	}
	for i := 0; i < len(body); {
		lt := bytes.IndexByte(body[i:], '<')
		if lt < 0 {
			if maxText > 0 && len(body)-textStart > maxText {
				return tooLong()
			}
			return nil
		}
		i += lt
		rest := body[i:]
		if maxText > 0 && i-textStart > maxText && !bytes.HasPrefix(rest, []byte("<![CDATA[")) {
			return tooLong()
		}
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest[4:], []byte("-->"))
			if end < 0 {
				return nil // unterminated: the parser says so
			}
			i += 4 + end + 3
			textStart = i
			continue
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			end := bytes.Index(rest[9:], []byte("]]>"))
			if end < 0 {
				end = len(rest) - 9
			}
			i += 9 + end + 3
			if maxText > 0 && i-textStart > maxText {
				return tooLong()
			}
			continue
		}
		end, selfClosing := tagEnd(rest)
		if end < 0 {
			if len(rest) > maxXMLTag {
				return fmt.Errorf("a tag at byte %d runs on for more than %d KiB: a hostile or broken document, not read (feeds.maxXMLTag bounds the parser's memory)", i, maxXMLTag>>10)
			}
			return nil
		}
		if end > maxXMLTag {
			return fmt.Errorf("a tag of %d KiB at byte %d (at most %d KiB are read): a hostile or broken document, not read (it bounds the parser's memory)", end>>10, i, maxXMLTag>>10)
		}
		switch {
		case len(rest) > 1 && (rest[1] == '?' || rest[1] == '!'):
		case len(rest) > 1 && rest[1] == '/':
			depth--
		case !selfClosing:
			depth++
			if depth > maxXMLDepth {
				return fmt.Errorf("elements nested more than %d deep at byte %d: a hostile or broken document, not read (feeds and sitemaps nest a few levels; the limit bounds the parser's memory)", maxXMLDepth, i)
			}
		}
		i += end + 1
		textStart = i
	}
	return nil
}

// tagEnd returns the offset of the '>' that ends the tag at the start of b (-1: none),
// skipping quoted attribute values, and whether the tag closes itself ("/>").
func tagEnd(b []byte) (end int, selfClosing bool) {
	var quote byte
	for j := 1; j < len(b); j++ {
		c := b[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j, b[j-1] == '/'
		}
	}
	return -1, false
}
