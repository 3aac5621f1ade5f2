package parse

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/atom"
)

// textBuilder accumulates visible text into one buffer: whitespace runs
// collapse to one space inside a block, blocks are separated by "\n", and
// nothing is ever glued across a block boundary. It remembers each block's
// span so Page.Blocks can be slices of the final string.
//
// Separators are written lazily, just before the next visible character, so
// the buffer never starts or ends with one and an anchor's span can begin
// exactly at its first character.
type textBuilder struct {
	buf       []byte
	max       int // byte cap on buf; < 0 means none
	truncated bool

	spans      []blockSpan
	inBlock    bool      // the current block has text
	blockStart int       // offset of the current block's first byte
	blockTag   atom.Atom // tag of the current block
	nextTag    atom.Atom // tag for the block that starts with the next character
	chrome     bool      // the current block is page chrome (Block.Chrome)
	nextChrome bool      // the block that starts with the next character is
	space      bool      // a space is due before the next character
}

type blockSpan struct {
	start, end int
	tag        atom.Atom
	chrome     bool
}

// asciiSpace marks the bytes that separate words: HTML's ASCII whitespace
// plus the other C0 controls and DEL, which have no business in text.
var asciiSpace = func() (t [utf8.RuneSelf]bool) {
	for c := 0; c < ' '+1; c++ {
		t[c] = true
	}
	t[0x7f] = true
	return t
}()

// boundary ends the current block; tag labels the block that follows.
func (t *textBuilder) boundary(tag atom.Atom) {
	if t.inBlock {
		t.spans = append(t.spans, blockSpan{t.blockStart, len(t.buf), t.blockTag, t.chrome})
		t.inBlock = false
	}
	t.space = false
	t.nextTag = tag
}

// wordBreak makes sure the next character starts a new word.
func (t *textBuilder) wordBreak() { t.space = true }

// room reports whether n more bytes fit under the cap, marking truncation
// when they do not.
func (t *textBuilder) room(n int) bool {
	if t.max >= 0 && len(t.buf)+n > t.max {
		t.truncated = true
		return false
	}
	return true
}

// write appends decoded text, collapsing whitespace. Invalid UTF-8 becomes
// U+FFFD, so the page text is always valid UTF-8.
func (t *textBuilder) write(s []byte) {
	for i := 0; i < len(s) && !t.truncated; {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if asciiSpace[c] {
				t.space = true
				continue
			}
			// A run of visible ASCII bytes (most of a page's text) is written at once:
			// the separator due before its first byte, then the rest as far as the cap
			// lets it, as byte by byte would.
			j := i
			for j < len(s) && s[j]-0x21 < 0x7f-0x21 { // [!-~]: ASCII, neither space nor control
				j++
			}
			if !t.sep(1) {
				continue
			}
			t.buf = append(t.buf, c)
			rest := s[i:j]
			if t.max >= 0 && len(t.buf)+len(rest) > t.max {
				rest = rest[:t.max-len(t.buf)]
				t.truncated = true
			}
			t.buf = append(t.buf, rest...)
			i = j
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			r = utf8.RuneError // invalid byte: write the replacement character
		case r == '\u00ad' || r == '\u200b' || r == '\ufeff':
			continue // soft hyphen, zero-width space, BOM: invisible, not word breaks
		case unicode.IsSpace(r):
			t.space = true // NBSP, ideographic space, ...
			continue
		}
		if t.sep(utf8.RuneLen(r)) {
			t.buf = utf8.AppendRune(t.buf, r)
		}
	}
}

// sep writes the separator due before a visible character of n bytes and
// reports whether the character fits.
func (t *textBuilder) sep(n int) bool {
	if !t.inBlock {
		if len(t.buf) > 0 {
			n++
		}
		if !t.room(n) {
			return false
		}
		if len(t.buf) > 0 {
			t.buf = append(t.buf, '\n')
		}
		t.inBlock, t.blockStart, t.blockTag, t.chrome = true, len(t.buf), t.nextTag, t.nextChrome
	} else if t.space {
		if !t.room(n + 1) {
			return false
		}
		t.buf = append(t.buf, ' ')
	} else if !t.room(n) {
		return false
	}
	t.space = false
	return true
}

// finish closes the last block.
func (t *textBuilder) finish() { t.boundary(0) }
