// Package fingerprint gives page text identities for change and duplicate
// detection: an exact digest of the normalized text (same words, ignoring
// case, accents, punctuation and spacing), a 64-bit SimHash for near
// duplicates, and the MD5 of stripped text that seed 002 stores per page.
//
// Normalization is hand-written rather than chained from x/text transforms
// (norm.NFKD, runes.Remove, cases.Fold): it runs once per fetched page, and
// one pass over the string that looks up each non-ASCII rune's
// decomposition directly is several times faster and allocation-free.
package fingerprint

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// NearDuplicateBits is the largest SimHash Hamming distance at which two
// texts count as near duplicates (Manku et al., WWW 2007: 64-bit
// fingerprints, k = 3).
const NearDuplicateBits = 3

// shingleWords is the number of consecutive words in a SimHash feature.
// Two-word shingles keep word order in the hash (unrelated pages land 16+
// bits apart, where single words let shared stop words pull them together)
// while a one-word edit in a 500-word text changes only four of ~500
// features: 92% of such edits stay within NearDuplicateBits, against 84%
// with three-word shingles (see TestSimHashOneWordEdit).
const shingleWords = 2

// Normalizer turns text into the canonical word sequence that fingerprints
// are computed from. The zero value is the standard normalization; fields
// switch on extra rules, and rules for other volatile fragments (dates,
// counters) belong here too.
type Normalizer struct {
	// DropNumbers removes words made only of digits (counters, prices,
	// dates written with digits), so they do not make a page look changed.
	DropNumbers bool
	// Volatile, when set, masks volatile fragments (dates, times, counters,
	// ids, versions) before normalizing (see volatile.go).
	Volatile *Volatile
}

// Digest is a 128-bit content digest.
type Digest [16]byte

// String returns the digest as 32 lowercase hex digits.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Fingerprint is what a page record stores about its text.
type Fingerprint struct {
	Exact   Digest // equal for texts whose normalized forms are equal
	SimHash uint64 // close (Hamming <= NearDuplicateBits) for near duplicates
}

// NormalizeText returns s as lowercase words without accents, separated by
// single spaces: compatibility decomposition (NFKD, so ligatures and
// full-width forms become plain letters), nonspacing marks removed, case
// folded, and every character that is not a letter or digit treated as a
// word separator. Han, Hiragana and Katakana characters each form a word of
// their own, since those scripts do not separate words with spaces.
func NormalizeText(s string) string { return Normalizer{}.Normalize(s) }

// Exact returns the digest of NormalizeText(text).
func Exact(text string) Digest { return Normalizer{}.Exact(text) }

// SimHash returns the SimHash of NormalizeText(text).
func SimHash(text string) uint64 { return Normalizer{}.SimHash(text) }

// Of returns both fingerprints of text, normalizing it once.
func Of(text string) Fingerprint { return Normalizer{}.Of(text) }

// MD5Stripped is seed 002's page identifier: the MD5, as 32 hex digits
// (zero padded, unlike the thesis listing), of the text stripped of special
// characters, accent-folded and lowercased, which is NormalizeText. Pass the
// page's visible text (parse.Page.Text), not its HTML.
func MD5Stripped(text string) string {
	buf := getBuf()
	defer putBuf(buf)
	*buf = Normalizer{}.appendNormalized((*buf)[:0], text)
	sum := md5.Sum(*buf)
	return hex.EncodeToString(sum[:])
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// NearDuplicate reports whether two SimHashes are within NearDuplicateBits.
func NearDuplicate(a, b uint64) bool { return Hamming(a, b) <= NearDuplicateBits }

// Bands splits a SimHash into four 16-bit bands, lowest bits first. Two
// hashes within NearDuplicateBits (3) of each other differ in at most three
// bands, so they share at least one: indexing every page under its four
// (band number, band value) keys finds all candidate near duplicates with
// four exact lookups, to be confirmed with Hamming.
func Bands(h uint64) [4]uint16 {
	return [4]uint16{uint16(h), uint16(h >> 16), uint16(h >> 32), uint16(h >> 48)}
}

// Normalize returns s normalized as NormalizeText describes, plus the
// Normalizer's extra rules.
func (n Normalizer) Normalize(s string) string {
	buf := getBuf()
	defer putBuf(buf)
	*buf = n.appendNormalized((*buf)[:0], s)
	return string(*buf)
}

// Exact returns the digest of the normalized text: the first 128 bits of
// its SHA-256 (hardware-accelerated on current CPUs, so faster here than
// MD5, and collision-free in practice at any crawl size). Texts without
// words all share one digest; a caller flagging duplicates should skip them.
func (n Normalizer) Exact(text string) Digest {
	buf := getBuf()
	defer putBuf(buf)
	*buf = n.appendNormalized((*buf)[:0], text)
	return digest(*buf)
}

func digest(normalized []byte) (d Digest) {
	sum := sha256.Sum256(normalized)
	copy(d[:], sum[:])
	return d
}

// SimHash returns the 64-bit Charikar SimHash of the normalized text. Its
// features are the overlapping two-word shingles, each hashed with xxHash64
// and weighted by occurrence; a text of one word is a single feature, and
// a text without words hashes to 0.
func (n Normalizer) SimHash(text string) uint64 {
	buf := getBuf()
	defer putBuf(buf)
	*buf = n.appendNormalized((*buf)[:0], text)
	return simHash(*buf)
}

// Of returns both fingerprints of text, normalizing it once.
func (n Normalizer) Of(text string) Fingerprint {
	buf := getBuf()
	defer putBuf(buf)
	*buf = n.appendNormalized((*buf)[:0], text)
	return Fingerprint{Exact: digest(*buf), SimHash: simHash(*buf)}
}

// OfMain returns the fingerprints of text, as Of, and the exact digest of its main text:
// the lines (separated by "\n") for which inMain(line number) is true, joined by "\n".
// It normalizes each line once: a page's fingerprint and its main text's digest
// (the page's blocks without the site's menus and footers, for change detection) used to
// normalize and mask the main text twice, 4 % of a crawl's CPU with the index on.
// With no main line, the main digest is the whole text's.
func (n Normalizer) OfMain(text string, inMain func(line int) bool) (all Fingerprint, main Digest) {
	buf, mbuf := getBuf(), getBuf()
	defer putBuf(buf)
	defer putBuf(mbuf)
	b, m := (*buf)[:0], (*mbuf)[:0]
	mainLines := 0
	for line, rest := 0, text; ; line++ {
		l, after, more := strings.Cut(rest, "\n")
		from := len(b)
		b = n.appendNormalized(b, l) // a line's masks are its own (chunkEnd)
		if inMain(line) {
			mainLines++
			if words := bytes.TrimPrefix(b[from:], []byte{' '}); len(words) > 0 {
				if len(m) > 0 {
					m = append(m, ' ')
				}
				m = append(m, words...)
			}
		}
		if !more {
			break
		}
		rest = after
	}
	*buf, *mbuf = b, m
	all = Fingerprint{Exact: digest(b), SimHash: simHash(b)}
	if mainLines == 0 {
		return all, all.Exact
	}
	return all, digest(m)
}

// bufPool recycles normalization buffers: fingerprints are computed for
// every fetched page and the normalized text is garbage right after.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 4<<20 { // let pathological pages' buffers go
		bufPool.Put(b)
	}
}

// asciiFold maps an ASCII byte to its folded form (lowercase letter or
// digit), or 0 for a separator.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = byte(c)
		t[c-'a'+'A'] = byte(c)
	}
	return t
}()

// wordWriter appends words to dst separated by single spaces.
type wordWriter struct {
	dst         []byte
	inWord      bool
	wordFrom    int  // len(dst) before the current word and its separator
	digitsOnly  bool // the current word has only digits so far
	dropNumbers bool
}

func (w *wordWriter) begin() {
	if w.inWord {
		return
	}
	w.inWord, w.wordFrom, w.digitsOnly = true, len(w.dst), true
	if len(w.dst) > 0 {
		w.dst = append(w.dst, ' ')
	}
}

func (w *wordWriter) byte(c byte) {
	w.begin()
	w.dst = append(w.dst, c)
	w.digitsOnly = w.digitsOnly && c <= '9'
}

func (w *wordWriter) rune(r rune, digit bool) {
	w.begin()
	w.dst = utf8.AppendRune(w.dst, r)
	w.digitsOnly = w.digitsOnly && digit
}

func (w *wordWriter) end() {
	if w.inWord && w.dropNumbers && w.digitsOnly {
		w.dst = w.dst[:w.wordFrom]
	}
	w.inWord = false
}

func (n Normalizer) appendNormalized(dst []byte, s string) []byte {
	s = n.Volatile.Mask(s)
	w := wordWriter{dst: dst, dropNumbers: n.DropNumbers}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiFold[c] == 0 {
				w.end()
				i++
				continue
			}
			// Copy the whole run of ASCII letters and digits, then fold it.
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && asciiFold[s[j]] != 0 {
				j++
			}
			w.begin()
			from := len(w.dst)
			w.dst = append(w.dst, s[i:j]...)
			run := w.dst[from:]
			for k, b := range run {
				run[k] = asciiFold[b]
			}
			if w.digitsOnly && w.dropNumbers {
				for _, b := range run {
					if b > '9' {
						w.digitsOnly = false
						break
					}
				}
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.end() // invalid byte: a separator
			i++
			continue
		}
		if d := norm.NFKD.PropertiesString(s[i : i+size]).Decomposition(); d != nil {
			for _, dr := range string(d) {
				foldRune(&w, dr)
			}
		} else {
			foldRune(&w, r)
		}
		i += size
	}
	w.end()
	return w.dst
}

// foldRune writes one rune of a decomposed character.
func foldRune(w *wordWriter, r rune) {
	if r < utf8.RuneSelf {
		if f := asciiFold[r]; f != 0 {
			w.byte(f)
		} else {
			w.end()
		}
		return
	}
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me):
		// Accents and other nonspacing marks vanish without splitting the word.
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
		w.end()
		w.rune(r, false)
		w.end()
	case unicode.IsLetter(r) || unicode.Is(unicode.Mc, r):
		// ToUpper then ToLower folds variants such as the final sigma and
		// the long s onto one letter.
		w.rune(unicode.ToLower(unicode.ToUpper(r)), false)
	case unicode.IsNumber(r):
		w.rune(r, true)
	default:
		w.end()
	}
}

// spreadBits[b] has bit i of b in the lowest bit of byte i.
var spreadBits = func() (t [256]uint64) {
	for b := range t {
		for i := 0; i < 8; i++ {
			t[b] |= uint64(b>>i&1) << (8 * i)
		}
	}
	return t
}()

// simHash computes the SimHash of normalized text (words separated by
// single spaces).
func simHash(text []byte) uint64 {
	// Per-bit counts are kept eight at a time: lanes[j] holds the counts of
	// bits 8j..8j+7 in its eight bytes, so one feature costs eight table
	// lookups and adds instead of 64. Lanes are flushed into ones before a
	// byte can overflow.
	var ones [64]int
	var lanes [8]uint64
	features, pending := 0, 0
	flush := func() {
		for j, l := range lanes {
			for i := 0; i < 8; i++ {
				ones[8*j+i] += int(l >> (8 * i) & 0xff)
			}
		}
		lanes, pending = [8]uint64{}, 0
	}
	add := func(h uint64) {
		lanes[0] += spreadBits[byte(h)]
		lanes[1] += spreadBits[byte(h>>8)]
		lanes[2] += spreadBits[byte(h>>16)]
		lanes[3] += spreadBits[byte(h>>24)]
		lanes[4] += spreadBits[byte(h>>32)]
		lanes[5] += spreadBits[byte(h>>40)]
		lanes[6] += spreadBits[byte(h>>48)]
		lanes[7] += spreadBits[byte(h>>56)]
		features++
		if pending++; pending == 255 {
			flush()
		}
	}
	// starts holds the start offsets of the last shingleWords words.
	var starts [shingleWords]int
	words := 0
	for from := 0; from < len(text); {
		end := from
		for end < len(text) && text[end] != ' ' {
			end++
		}
		starts[words%shingleWords] = from
		words++
		if words >= shingleWords {
			add(xxhash.Sum64(text[starts[words%shingleWords]:end]))
		}
		from = end + 1
	}
	if words > 0 && words < shingleWords {
		add(xxhash.Sum64(text))
	}
	flush()
	var h uint64
	for b, n := range ones {
		if 2*n > features {
			h |= 1 << b
		}
	}
	return h
}
