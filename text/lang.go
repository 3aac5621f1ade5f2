package text

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sort"
	"unicode/utf8"
)

// detectWords is how many words DetectLanguage reads at most: a page's language shows in
// its first few hundred words, and reading the rest only costs time.
const detectWords = 2000

// DetectLanguage guesses the language of s from its function words: every word that is a
// function word of English, Portuguese, Spanish, French, German, Italian or Dutch votes for
// those languages (a word shared by k languages gives each 1/k), and a few letters that
// belong to one language (ã and õ Portuguese, ñ Spanish, ß ä ö German, œ ù French) add half a
// vote. Function words make up a third to a half of running text in these languages, so a
// sentence or two suffices, and no model has to be shipped.
//
// lang is an ISO 639-1 code, "" when s has too little evidence (fewer than two votes).
// confidence is in [0, 1]: the winner's share of the votes, scaled down when there are
// fewer than eight votes in all.
func DetectLanguage(s string) (lang string, confidence float64) {
	var v langVotes
	v.words(s)
	v.letters(s)
	return v.result()
}

// DetectLanguageOf returns what DetectLanguage(title + "\n" + body) returns, without making
// that string: a page's language from its title and its text.
func DetectLanguageOf(title, body string) (lang string, confidence float64) {
	var v langVotes
	// "\n" separates words, so the joined text's words are the title's, then the body's.
	if v.words(title) {
		v.words(body)
	}
	v.letters(title)
	v.letters("\n")
	v.letters(body)
	return v.result()
}

// langVotes counts DetectLanguage's votes over a text given in parts, word votes first.
type langVotes struct {
	votes       [len(detectLangs)]float64
	n           int // words read
	lettersRead int // bytes letters read
}

// words adds the votes of the words of s while fewer than detectWords were read, and
// reports whether more may be read.
func (v *langVotes) words(s string) bool {
	if v.n >= detectWords {
		return false
	}
	eachWord(s, func(start, end, _ int) bool {
		v.n++
		if mask := detectTable.lookup(s[start:end]); mask != 0 {
			share := 1 / float64(bits.OnesCount16(mask))
			for i := range detectLangs {
				if mask&(1<<i) != 0 {
					v.votes[i] += share
				}
			}
		}
		return v.n < detectWords // the rest of a long text is not read at all
	})
	return v.n < detectWords
}

// letters adds the votes of the letters of s within the text's first letterBytes.
func (v *langVotes) letters(s string) {
	s = s[:min(len(s), letterBytes-v.lettersRead)]
	v.lettersRead += len(s)
	letterVotes(s, &v.votes)
}

func (v *langVotes) result() (lang string, confidence float64) {
	votes := &v.votes
	var total float64
	best := 0
	for i, v := range votes {
		total += v
		if v > votes[best] {
			best = i // ties go to the earlier language in detectLangs
		}
	}
	if total < 2 {
		return "", 0
	}
	return detectLangs[best], votes[best] / total * min(1, total/8)
}

// detectLangs are the languages DetectLanguage tells apart, in tie-break order.
var detectLangs = [...]string{"en", "pt", "es", "fr", "de", "it", "nl"}

// detectIndex maps a folded function word to the set of detectLangs (bit i for
// detectLangs[i]) it belongs to.
var detectIndex = func() map[string]uint16 {
	idx := map[string]uint16{}
	for i, l := range detectLangs {
		for w := range detectSets[l] {
			idx[w] |= 1 << i
		}
	}
	return idx
}()

// detectTable is detectIndex as DetectLanguage looks words up, once for each of a page's
// first 2,000: a folded function word is at most detectKeyBytes long, so it packs, padded
// with zero bytes (never part of a folded word), into two integers that an open-addressing
// table hashes and compares without the map's string hashing and probing; most words of a
// text are longer and are given up while being folded. A crawl spent 4 % of its CPU (with
// --index off) in the map look-ups.
var detectTable = func() (t *wordTable) {
	t = new(wordTable)
	for w, mask := range detectIndex {
		k, ok := detectKeyOf(w)
		if !ok {
			panic("text: the function word " + w + " is longer than detectKeyBytes")
		}
		if string(k.bytes()) == w { // a word not folded already is never looked up
			t.add(k, mask)
		}
	}
	return t
}()

// detectKeyBytes is the longest folded word detectTable holds.
const detectKeyBytes = 12

// detectKey is a folded word of at most detectKeyBytes bytes, little-endian, padded with
// zero bytes: its first eight bytes in lo, the rest in hi.
type detectKey struct {
	lo uint64
	hi uint32
}

func (k detectKey) bytes() []byte {
	b := binary.LittleEndian.AppendUint64(nil, k.lo)
	b = binary.LittleEndian.AppendUint32(b, k.hi)
	return bytes.TrimRight(b, "\x00")
}

// detectKeyOf folds w as appendFolded does, into a key; ok is false when the folded word
// is longer than detectKeyBytes (it is then no function word), or empty.
func detectKeyOf(w string) (k detectKey, ok bool) {
	var b [detectKeyBytes + utf8.UTFMax]byte
	n := 0
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if n == detectKeyBytes {
				return k, false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[n] = c
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			continue
		}
		var rb [2 * utf8.UTFMax]byte
		f := appendFoldedRune(rb[:0], r)
		if n+len(f) > detectKeyBytes {
			return k, false
		}
		n += copy(b[n:], f)
	}
	if n == 0 {
		return k, false
	}
	return detectKey{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint32(b[8:12])}, true
}

// detectSlots is detectTable's size, a power of two over twice the function words.
const detectSlots = 1 << 11

type wordTable struct {
	slots [detectSlots]struct {
		key  detectKey
		mask uint16
	}
}

func (k detectKey) slot() uint64 {
	return ((k.lo ^ uint64(k.hi)<<29) * 0x9e3779b97f4a7c15) >> (64 - 11)
}

func (t *wordTable) add(k detectKey, mask uint16) {
	for i := k.slot(); ; i = (i + 1) & (detectSlots - 1) {
		if s := &t.slots[i]; s.key == (detectKey{}) {
			s.key, s.mask = k, mask
			return
		}
	}
}

// lookup returns the languages of which w, folded, is a function word (0 for none).
func (t *wordTable) lookup(w string) uint16 {
	k, ok := detectKeyOf(w)
	if !ok {
		return 0
	}
	for i := k.slot(); ; i = (i + 1) & (detectSlots - 1) {
		switch s := &t.slots[i]; s.key {
		case k:
			return s.mask
		case detectKey{}:
			return 0
		}
	}
}

func langIndex(l string) int {
	for i, d := range detectLangs {
		if d == l {
			return i
		}
	}
	panic("text: " + l + " is not in detectLangs")
}

var (
	ptIndex = langIndex("pt")
	esIndex = langIndex("es")
	deIndex = langIndex("de")
	frIndex = langIndex("fr")
)

// letterBytes is how much of a text DetectLanguage reads for letters.
const letterBytes = 64 << 10

// letterVotes adds the votes of letters that single out one language.
func letterVotes(s string, votes *[len(detectLangs)]float64) {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			// Eight bytes at a time over ASCII, most of these languages' text.
			for i+8 <= len(s) && load64(s[i:i+8])&0x8080808080808080 == 0 {
				i += 8
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case 'ã', 'õ', 'Ã', 'Õ':
			votes[ptIndex] += 0.5
		case 'ñ', 'Ñ':
			votes[esIndex] += 0.5
		case 'ß', 'ä', 'ö', 'Ä', 'Ö':
			votes[deIndex] += 0.5
		case 'œ', 'ù', 'Œ', 'Ù':
			votes[frIndex] += 0.5
		}
	}
}

// load64 reads 8 bytes of s little-endian (the compiler makes it one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func sortStrings(s []string) { sort.Strings(s) }
