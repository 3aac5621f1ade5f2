package fingerprint

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Volatile masks the fragments of a page's text that change while the page does not: the
// date in a header, "5 minutes ago", a visitor counter, a session id echoed in the text, the
// build number in a documentation footer. Masked text is what change detection compares, so
// those fragments no longer make a page look changed. A Normalizer with Volatile set masks
// before normalizing.
//
// It is a hand-written token scanner rather than a set of regular expressions: the same
// rules written as one RE2 expression (month names in four languages around digits, counter
// words, relative times) ran at 0.2 MB/s, because Go's regexp simulates an automaton of
// thousands of states at every byte, while nearly every rule is anchored on a run of digits.
// The scanner looks only at the few words next to each number and runs at tens of MB/s
// (BenchmarkVolatileMask). It knows English, Portuguese, Spanish and French month and day
// names, counter words and relative times.
type Volatile struct {
	on    kindSet
	kinds []string
}

// kindSet says which fragment kinds are masked. The scanner asks at every token, so they
// are fields rather than a map.
type kindSet struct{ dates, times, counters, ids, versions, numbers bool }

// flag returns the field of the kind named name (nil for an unknown name).
func (k *kindSet) flag(name string) *bool {
	switch name {
	case "dates":
		return &k.dates
	case "times":
		return &k.times
	case "counters":
		return &k.counters
	case "ids":
		return &k.ids
	case "versions":
		return &k.versions
	case "numbers":
		return &k.numbers
	}
	return nil
}

// VolatileKinds are the fragment kinds NewVolatile accepts.
var VolatileKinds = []string{"dates", "times", "counters", "ids", "versions", "numbers"}

// DefaultVolatileKinds are the kinds masked unless configured otherwise: everything but
// bare numbers, whose changes (a price, a score) usually matter.
var DefaultVolatileKinds = []string{"dates", "times", "counters", "ids", "versions"}

// NewVolatile makes a masker for the given kinds (see VolatileKinds). No kinds gives nil,
// which masks nothing.
func NewVolatile(kinds ...string) (*Volatile, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	v := &Volatile{}
	for _, k := range kinds {
		k = strings.ToLower(strings.TrimSpace(k))
		f := v.on.flag(k)
		if f == nil {
			return nil, fmt.Errorf("fingerprint: unknown volatile fragment kind %q (choose from %s)", k, strings.Join(VolatileKinds, ", "))
		}
		if !*f {
			*f = true
			v.kinds = append(v.kinds, k)
		}
	}
	sort.Strings(v.kinds)
	return v, nil
}

// Kinds lists the kinds masked, sorted.
func (v *Volatile) Kinds() []string {
	if v == nil {
		return nil
	}
	return append([]string{}, v.kinds...)
}

// Mask replaces every volatile fragment of s with spaces.
func (v *Volatile) Mask(s string) string {
	if v == nil || s == "" {
		return s
	}
	var b strings.Builder
	at := 0
	v.scan(s, func(spans []span) {
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		for _, sp := range spans {
			b.WriteString(s[at:sp.from])
			b.WriteByte(' ')
			at = sp.to
		}
	})
	if b.Cap() == 0 {
		return s // nothing masked
	}
	b.WriteString(s[at:])
	return b.String()
}

// Count returns how many volatile fragments s has (a page feature: listings and news pages
// carry many dates).
func (v *Volatile) Count(s string) int {
	if v == nil {
		return 0
	}
	n := 0
	v.scan(s, func(spans []span) { n += len(spans) })
	return n
}

type span struct{ from, to int }

// Token kinds.
const (
	tWord  = iota // letters
	tNum          // ASCII digits
	tSpace        // white space
	tPunct        // one other character
)

type token struct {
	kind     uint8
	from, to int
}

// scanner holds one text's tokens while the rules look at them.
type scanner struct {
	s    string
	toks []token
	v    *Volatile
	out  []span
	low  [maxListedWord]byte // lower's buffer
}

// scan hands the fragments of s to found, in order and with offsets in s, a chunk of the
// text at a time (never with none).
func (v *Volatile) scan(s string, found func([]span)) {
	if !v.on.dates && !v.on.times && !hasDigit(s) {
		return // every other rule is anchored on digits
	}
	// A token takes 24 bytes and a text can have one per byte: a long text is scanned in
	// chunks, so the scanner's memory is bounded whatever the size of the page.
	tp := tokenPool.Get().(*[]token)
	defer tokenPool.Put(tp)
	toks := *tp
	defer func() { *tp = toks[:0] }()
	for off := 0; off < len(s); {
		end := chunkEnd(s, off)
		if end > off {
			sc := scanner{s: s[off:end], v: v, toks: tokenize(toks[:0], s[off:end])}
			sc.run()
			if len(sc.out) > 0 {
				for i := range sc.out {
					sc.out[i].from += off
					sc.out[i].to += off
				}
				found(sc.out)
			}
			toks = sc.toks
		}
		off = end
		if off < len(s) && s[off] == '\n' {
			off++ // the line end belongs to no chunk
		}
	}
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// tokenPool recycles token slices: every fetched page is masked, and a 20 KB text
// has about 10,000 tokens. A chunk bounds a slice to maxScanChunk tokens.
var tokenPool = sync.Pool{New: func() any { return new([]token) }}

// maxScanChunk is the most text the scanner tokenizes at once (see scan).
const maxScanChunk = 64 << 10

// chunkEnd is where the chunk of s starting at off ends: at the end of its line (a fragment
// never spans lines, so a text's lines can be masked one at a time: Normalizer.OfMain), and
// in a line longer than maxScanChunk, at most maxScanChunk bytes on, after the last space of
// its second half if there is one, else at a character boundary.
func chunkEnd(s string, off int) int {
	end := off + maxScanChunk
	if i := strings.IndexByte(s[off:min(end, len(s))], '\n'); i >= 0 {
		return off + i
	}
	if end >= len(s) {
		return len(s)
	}
	half := s[off+maxScanChunk/2 : end]
	if i := strings.LastIndexByte(half, ' '); i >= 0 {
		return off + maxScanChunk/2 + i + 1
	}
	for end > off+1 && !utf8.RuneStart(s[end]) {
		end--
	}
	return end
}

// tokenize appends the tokens of s to toks. A run of ASCII letters, digits or spaces is
// taken in one step (a page is mostly ASCII words and the spaces between them); other
// characters one at a time.
func tokenize(toks []token, s string) []token {
	if cap(toks) == 0 {
		toks = make([]token, 0, len(s)/2)
	}
	for i := 0; i < len(s); {
		var kind uint8
		end := i + 1
		if c := s[i]; c < utf8.RuneSelf {
			kind = asciiKind[c]
			if kind != tPunct {
				for end < len(s) && s[end] < utf8.RuneSelf && asciiKind[s[end]] == kind {
					end++
				}
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			end = i + size
			switch {
			case r == 0xa0 || unicode.IsSpace(r):
				kind = tSpace
			case unicode.IsLetter(r):
				kind = tWord
			default:
				kind = tPunct
			}
		}
		if kind != tPunct && len(toks) > 0 && toks[len(toks)-1].kind == kind && toks[len(toks)-1].to == i {
			toks[len(toks)-1].to = end
		} else {
			toks = append(toks, token{kind: kind, from: i, to: end})
		}
		i = end
	}
	return toks
}

// asciiKind is the token kind of each ASCII character.
var asciiKind = func() (k [utf8.RuneSelf]uint8) {
	for c := range k {
		switch {
		case c >= '0' && c <= '9':
			k[c] = tNum
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			k[c] = tSpace
		case c|0x20 >= 'a' && c|0x20 <= 'z':
			k[c] = tWord
		default:
			k[c] = tPunct
		}
	}
	return k
}()

func (sc *scanner) text(i int) string { return sc.s[sc.toks[i].from:sc.toks[i].to] }

func (sc *scanner) is(i int, kind uint8) bool {
	return i >= 0 && i < len(sc.toks) && sc.toks[i].kind == kind
}

// lower returns token i lowercased, in a buffer the next call reuses, when it is a word
// that may be in the word lists (nil otherwise): looking it up as m[string(b)] allocates
// nothing, where word's strings.ToLower allocates for every capitalized word of the text.
func (sc *scanner) lower(i int) []byte {
	if !sc.is(i, tWord) {
		return nil
	}
	w := sc.text(i)
	if len(w) > maxListedWord {
		return nil
	}
	b := sc.low[:0]
	for j := 0; j < len(w); {
		if c := w[j]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[j:])
		b = utf8.AppendRune(b, unicode.ToLower(r))
		j += size
	}
	return b
}

// word returns token i lowercased when it is a word ("" otherwise).
func (sc *scanner) word(i int) string {
	if !sc.is(i, tWord) {
		return ""
	}
	return strings.ToLower(sc.text(i))
}

func (sc *scanner) punct(i int, chars string) bool {
	if !sc.is(i, tPunct) {
		return false
	}
	if t := sc.toks[i]; t.to-t.from == 1 { // an ASCII character (or an invalid byte)
		return strings.IndexByte(chars, sc.s[t.from]) >= 0
	}
	return strings.Contains(chars, sc.text(i))
}

// joins reports whether token i can be part of an identifier: letters, digits, '_' or '-'
// (as is(i, tWord) || is(i, tNum) || punct(i, "_-"), for a token that exists).
func (sc *scanner) joins(i int) bool {
	switch t := sc.toks[i]; t.kind {
	case tWord, tNum:
		return true
	case tPunct:
		return t.to-t.from == 1 && (sc.s[t.from] == '_' || sc.s[t.from] == '-')
	}
	return false
}

// skipSpace returns the first token index at or after i (step +1) or before (step −1)
// that is not white space.
func (sc *scanner) skipSpace(i, step int) int {
	for sc.is(i, tSpace) {
		i += step
	}
	return i
}

func (sc *scanner) mark(from, to int) { // token indexes, inclusive
	if from < 0 {
		from = 0
	}
	if to >= len(sc.toks) {
		to = len(sc.toks) - 1
	}
	if from > to {
		return
	}
	sp := span{sc.toks[from].from, sc.toks[to].to}
	if n := len(sc.out); n > 0 && sc.out[n-1].to >= sp.from {
		sc.out[n-1].to = max(sc.out[n-1].to, sp.to)
		if sp.from < sc.out[n-1].from {
			sc.out[n-1].from = sp.from
		}
		return
	}
	sc.out = append(sc.out, sp)
}

func (sc *scanner) run() {
	on := sc.v.on
	for i := 0; i < len(sc.toks); i++ {
		switch sc.toks[i].kind {
		case tWord, tNum:
			// A word or number before white space (most of a text's) starts no identifier.
			if on.ids && i+1 < len(sc.toks) && sc.toks[i+1].kind != tSpace {
				if end, ok := sc.identifier(i); ok {
					sc.mark(i, end)
					i = end
					continue
				}
			}
			if sc.toks[i].kind == tWord {
				sc.relativeWord(i)
				continue
			}
			i = sc.number(i)
		}
	}
	sort.Slice(sc.out, func(a, b int) bool { return sc.out[a].from < sc.out[b].from })
	merged := sc.out[:0]
	for _, sp := range sc.out {
		if n := len(merged); n > 0 && merged[n-1].to >= sp.from {
			merged[n-1].to = max(merged[n-1].to, sp.to)
			continue
		}
		merged = append(merged, sp)
	}
	sc.out = merged
}

// identifier finds a session id, hash or cache buster starting at token i: an unbroken run
// of ASCII letters, digits, '_' and '-' of 16 or more characters (12 for hexadecimal) that
// mixes letters and digits. Long words and long numbers are not identifiers.
func (sc *scanner) identifier(i int) (end int, ok bool) {
	if n := i + 1; n >= len(sc.toks) || sc.toks[n].kind == tSpace {
		return 0, false // a word or number before white space (most of a text's) starts none
	}
	if i > 0 && sc.toks[i-1].to == sc.toks[i].from && sc.joins(i-1) {
		return 0, false // not at the start of the run
	}
	if n := i + 1; sc.toks[n].from != sc.toks[i].to || !sc.joins(n) {
		return 0, false // a token alone is letters or digits, never both (most words of a text)
	}
	letters, digits, hex := false, false, true
	j := i
	for ; j < len(sc.toks); j++ {
		t := sc.toks[j]
		if j > i && sc.toks[j-1].to != t.from {
			break
		}
		switch {
		case t.kind == tNum:
			digits = true
		case t.kind == tWord:
			w := sc.text(j)
			for k := 0; k < len(w); k++ {
				c := w[k] | 0x20
				if w[k] >= utf8.RuneSelf {
					return 0, false
				}
				hex = hex && c >= 'a' && c <= 'f'
			}
			letters = true
		case sc.punct(j, "_-"):
			hex = false
		default:
			goto done
		}
	}
done:
	end = j - 1
	for end > i && sc.punct(end, "_-") {
		end--
	}
	length := sc.toks[end].to - sc.toks[i].from
	if letters && digits && (length >= 16 || hex && length >= 12) {
		return end, true
	}
	return 0, false
}

// relativeWord masks words that name a day relative to now, and "just now".
// It runs at every word of a text, so it looks words up without allocating.
func (sc *scanner) relativeWord(i int) {
	if t := sc.text(i); t[0] < utf8.RuneSelf && (len(t) == 1 || t[1] < utf8.RuneSelf && !relativePrefix[t[0]|0x20][t[1]|0x20]) {
		return // an ASCII word that starts like none of the words looked for (most words)
	}
	w := sc.lower(i)
	if w == nil {
		return
	}
	if sc.v.on.dates && relativeDays[string(w)] {
		sc.mark(i, i)
	}
	if sc.v.on.times {
		if second, ok := justNow[string(w)]; ok {
			if j := sc.skipSpace(i+1, 1); sc.word(j) == second {
				sc.mark(i, j)
			}
		}
	}
}

// number applies the number rules at token i (a run of digits) and returns the last token
// they consumed.
func (sc *scanner) number(i int) int {
	on := sc.v.on
	// The numeric group: digits joined by single separators, e.g. 2024-01-02, 10:30:05,
	// 1,234.5 or 1.4.2.
	end := i
	var sepBuf [8]byte // on the stack for the usual short groups (a page has many)
	var partBuf [9]int
	seps, parts := sepBuf[:0], append(partBuf[:0], i)
	for sc.is(end+1, tPunct) && sc.is(end+2, tNum) && len(sc.text(end+1)) == 1 && strings.Contains(".,:/-", sc.text(end+1)) {
		seps = append(seps, sc.text(end + 1)[0])
		end += 2
		parts = append(parts, end)
	}
	plen := func(k int) int { return sc.toks[parts[k]].to - sc.toks[parts[k]].from }
	allSep := func(c byte) bool {
		for _, s := range seps {
			if s != c {
				return false
			}
		}
		return len(seps) > 0
	}
	switch {
	case on.times && len(parts) >= 2 && len(parts) <= 3 && allSep(':') && plen(0) <= 2 && plen(1) == 2:
		sc.mark(i, sc.timeSuffix(end))
		return end
	case on.times && len(parts) == 1 && plen(0) <= 2 && sc.word(i+1) == "h" && sc.is(i+2, tNum) && sc.toks[i+1].to == sc.toks[i+2].from:
		sc.mark(i, i+2) // 14h30
		return i + 2
	case on.dates && len(parts) == 3 && (allSep('-') || allSep('/') || allSep('.')) && datePartsLook(plen(0), plen(1), plen(2)):
		last := end
		// An ISO time glued on: 2024-01-02T10:00:00Z, or after a space.
		if t := sc.word(end + 1); (t == "t" || sc.is(end+1, tSpace)) && sc.is(end+2, tNum) && sc.punct(end+3, ":") {
			last = sc.timeSuffix(sc.skipTimeGroup(end + 2))
		}
		sc.mark(sc.weekdayBefore(i), last)
		return last
	case on.versions && len(parts) >= 3 && allSep('.'):
		sc.mark(sc.versionPrefix(i), sc.versionTail(end))
		return end
	}
	if on.versions {
		if from := sc.versionPrefix(i); from < i {
			sc.mark(from, sc.versionTail(end))
			return end
		}
	}
	if on.dates && len(parts) <= 2 {
		if from, to, ok := sc.monthDate(i, end, plen(0)); ok {
			sc.mark(from, to)
			return max(end, to)
		}
		if from, ok := sc.copyright(i, end); ok {
			sc.mark(from, end)
			return end
		}
	}
	if on.times && len(parts) == 1 {
		if from, to, ok := sc.relativeTime(i); ok {
			sc.mark(from, to)
			return max(end, to)
		}
	}
	if on.counters && (len(seps) == 0 || allSepIn(seps, ".,")) {
		if from, to, ok := sc.counter(i, end); ok {
			sc.mark(from, to)
			return max(end, to)
		}
	}
	if on.numbers {
		sc.mark(i, end)
	}
	return end
}

func allSepIn(seps []byte, set string) bool {
	for _, s := range seps {
		if !strings.ContainsRune(set, rune(s)) {
			return false
		}
	}
	return true
}

// datePartsLook: d-m-y, m/d/y or y-m-d shapes (1–2 digit day and month, 2 or 4 digit
// year), not 1.4.2-style versions or 10.234.567 numbers.
func datePartsLook(a, b, c int) bool {
	if b < 1 || b > 2 {
		return false
	}
	if a == 4 {
		return c <= 2
	}
	return a <= 2 && (c == 2 || c == 4)
}

// skipTimeGroup returns the last token of the hh:mm[:ss[.fff]] group at i.
func (sc *scanner) skipTimeGroup(i int) int {
	end := i
	for sc.punct(end+1, ":.") && sc.is(end+2, tNum) {
		end += 2
	}
	return end
}

// timeSuffix extends a time at token end over what may follow it: am/pm, h, a zone name,
// an ISO offset or Z.
func (sc *scanner) timeSuffix(end int) int {
	if sc.punct(end+1, ".") && sc.is(end+2, tNum) { // fractional seconds
		end += 2
	}
	j := sc.skipSpace(end+1, 1)
	w := sc.word(j)
	switch {
	case timeWords[w]:
		end = j
		if w == "a" || w == "p" { // a.m., p.m.
			if sc.punct(j+1, ".") && sc.word(j+2) == "m" {
				end = j + 2
				if sc.punct(j+3, ".") {
					end = j + 3
				}
			}
		}
	case w == "z" && j == end+1:
		end = j
	case sc.punct(end+1, "+-") && sc.is(end+2, tNum):
		end += 2
		if sc.punct(end+1, ":") && sc.is(end+2, tNum) {
			end += 2
		}
	}
	return end
}

// weekdayBefore returns the index of a day name (and its comma) just before token i, or i.
func (sc *scanner) weekdayBefore(i int) int {
	j := sc.skipSpace(i-1, -1)
	if sc.punct(j, ",") {
		j = sc.skipSpace(j-1, -1)
	}
	if sc.punct(j, ".") {
		j--
	}
	if w := sc.word(j); weekdays[w] {
		return j
	}
	if sc.word(j) == "feira" && sc.punct(j-1, "-") && weekdays[sc.word(j-2)] { // segunda-feira
		return j - 2
	}
	return i
}

// monthDate finds a date written with a month name around the number at i..end: 3 May
// 2024, 3rd of May, 3 de maio de 2024, May 3, 2024, May 2024.
func (sc *scanner) monthDate(i, end, digits int) (from, to int, ok bool) {
	// Number first: 3 [rd|º] [de|of] May [,] [de] [2024].
	if digits <= 2 {
		j := end + 1
		if w := sc.word(j); ordinals[w] && sc.toks[j].from == sc.toks[end].to {
			j++
		} else if sc.punct(j, "º°") {
			j++
		}
		j = sc.skipSpace(j, 1)
		if w := sc.word(j); w == "de" || w == "of" {
			j = sc.skipSpace(j+1, 1)
		}
		if months[sc.word(j)] {
			to = j
			if sc.punct(to+1, ".") {
				to++
			}
			to = sc.yearAfter(to)
			return sc.weekdayBefore(i), to, true
		}
	}
	// Month first: May [.] 3 [rd] [,] [2024] or May [de] 2024.
	j := sc.skipSpace(i-1, -1)
	if w := sc.word(j); w == "de" && digits == 4 {
		j = sc.skipSpace(j-1, -1)
	}
	if sc.punct(j, ".") {
		j--
	}
	if months[sc.word(j)] {
		to = end
		if digits <= 2 {
			if w := sc.word(end + 1); ordinals[w] && sc.toks[end+1].from == sc.toks[end].to {
				to = end + 1
			}
			to = sc.yearAfter(to)
		}
		return sc.weekdayBefore(j), to, true
	}
	return 0, 0, false
}

// yearAfter extends a date ending at token to over ", 2024", " 2024" or " de 2024".
func (sc *scanner) yearAfter(to int) int {
	j := to + 1
	if sc.punct(j, ",") {
		j++
	}
	j = sc.skipSpace(j, 1)
	if sc.word(j) == "de" {
		j = sc.skipSpace(j+1, 1)
	}
	if sc.is(j, tNum) && sc.toks[j].to-sc.toks[j].from == 4 {
		return j
	}
	return to
}

// copyright finds "© 2019", "(c) 2019-2024" or "copyright 2024" ending with the number at
// i..end, returning where the notice starts.
func (sc *scanner) copyright(i, end int) (from int, ok bool) {
	if sc.toks[i].to-sc.toks[i].from != 4 {
		return 0, false
	}
	j := sc.skipSpace(i-1, -1)
	if sc.punct(j, "-–") && sc.is(j-1, tNum) { // the second year of a range
		j = sc.skipSpace(j-2, -1)
	}
	switch {
	case sc.punct(j, "©"):
		return j, true
	case sc.word(j) == "copyright":
		return j, true
	case sc.punct(j, ")") && sc.word(j-1) == "c" && sc.punct(j-2, "("):
		return j - 2, true
	}
	return 0, false
}

// relativeTime finds "5 minutes ago", "há 3 horas", "hace 2 días", "il y a 3 heures".
func (sc *scanner) relativeTime(i int) (from, to int, ok bool) {
	u := sc.skipSpace(i+1, 1)
	if !timeUnits[sc.word(u)] {
		return 0, 0, false
	}
	if ago := sc.skipSpace(u+1, 1); sc.word(ago) == "ago" {
		return i, ago, true
	}
	b := sc.skipSpace(i-1, -1)
	switch sc.word(b) {
	case "há", "ha", "hace":
		return b, u, true
	case "a":
		if y := sc.skipSpace(b-1, -1); sc.word(y) == "y" {
			if il := sc.skipSpace(y-1, -1); sc.word(il) == "il" {
				return il, u, true
			}
		}
	}
	return 0, 0, false
}

// counter finds a number with a counter word: "1,234 views", "12 comments", "Visitas:
// 10.234", "3.2k likes".
func (sc *scanner) counter(i, end int) (from, to int, ok bool) {
	j := end + 1
	if w := sc.word(j); (w == "k" || w == "m") && sc.toks[j].from == sc.toks[end].to {
		j++
	}
	if w := sc.skipSpace(j, 1); counterWords[sc.word(w)] {
		return i, w, true
	}
	b := sc.skipSpace(i-1, -1)
	if sc.punct(b, ":") {
		b = sc.skipSpace(b-1, -1)
	}
	if counterWords[sc.word(b)] {
		to = end
		if w := sc.word(end + 1); (w == "k" || w == "m") && sc.toks[end+1].from == sc.toks[end].to {
			to = end + 1
		}
		return b, to, true
	}
	return 0, 0, false
}

// versionPrefix returns the index of a version marker just before token i ("v" glued to
// the number, or a word such as version, build, release, rev), or i.
func (sc *scanner) versionPrefix(i int) int {
	if w := sc.word(i - 1); w == "v" && sc.toks[i-1].to == sc.toks[i].from {
		return i - 1
	}
	j := sc.skipSpace(i-1, -1)
	if sc.punct(j, ":") {
		j = sc.skipSpace(j-1, -1)
	}
	if sc.punct(j, ".") && sc.word(j-1) == "ver" {
		return j - 1
	}
	if versionWords[sc.word(j)] {
		return j
	}
	return i
}

// versionTail extends a version over a glued pre-release or build suffix: 1.2.3-beta.2,
// 2.0rc1, 1.4.2+git.
func (sc *scanner) versionTail(end int) int {
	for j := end + 1; j < len(sc.toks) && sc.toks[j].from == sc.toks[j-1].to; j++ {
		if sc.is(j, tWord) || sc.is(j, tNum) {
			end = j
			continue
		}
		if !sc.punct(j, ".-+_") || !(sc.is(j+1, tWord) || sc.is(j+1, tNum)) || sc.toks[j+1].from != sc.toks[j].to {
			break
		}
	}
	return end
}

// relativePrefix marks the first two letters, lowercase, of the words relativeWord looks
// for (relativeDays, justNow's first words; all longer than one letter, all starting with
// two ASCII letters). Lowercasing never turns an ASCII letter into anything else, so a word
// whose first two letters are ASCII and not marked is none of them.
var relativePrefix = func() (t [utf8.RuneSelf][utf8.RuneSelf]bool) {
	add := func(w string) {
		if len(w) < 2 || w[0] >= utf8.RuneSelf || w[1] >= utf8.RuneSelf {
			panic("fingerprint: relativePrefix cannot filter " + w)
		}
		t[w[0]][w[1]] = true
	}
	for w := range relativeDays {
		add(w)
	}
	for w := range justNow {
		add(w)
	}
	return t
}()

// maxListedWord bounds the length in bytes of the words in the lists below (a test checks
// it): a longer word is in none of them.
const maxListedWord = 16

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	months = set(
		"jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun", "june", "jul", "july",
		"aug", "august", "sep", "sept", "september", "oct", "october", "nov", "november", "dec", "december",
		"janeiro", "fev", "fevereiro", "março", "marco", "abr", "abril", "mai", "maio", "junho", "julho", "ago", "agosto",
		"set", "setembro", "out", "outubro", "novembro", "dez", "dezembro",
		"ene", "enero", "febrero", "marzo", "mayo", "junio", "julio", "septiembre", "setiembre", "octubre", "noviembre", "dic", "diciembre",
		"janv", "janvier", "févr", "fevr", "février", "fevrier", "mars", "avr", "avril", "juin", "juil", "juillet", "août", "aout",
		"septembre", "octobre", "novembre", "déc", "décembre", "decembre")
	weekdays = set(
		"mon", "monday", "tue", "tues", "tuesday", "wed", "wednesday", "thu", "thur", "thurs", "thursday", "fri", "friday",
		"sat", "saturday", "sun", "sunday",
		"segunda", "terça", "terca", "quarta", "quinta", "sexta", "sábado", "sabado", "domingo", "seg", "ter", "qua", "qui", "sex", "sáb", "sab", "dom",
		"lunes", "martes", "miércoles", "miercoles", "jueves", "viernes",
		"lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
	ordinals     = set("st", "nd", "rd", "th", "er", "o", "a")
	relativeDays = set("yesterday", "today", "tomorrow", "ontem", "hoje", "amanhã", "amanha", "ayer", "hoy", "mañana", "hier", "aujourd'hui", "demain")
	justNow      = map[string]string{"just": "now", "agora": "mesmo", "ahora": "mismo"} // first word → second
	timeWords    = set("am", "pm", "a", "p", "h", "hs", "hrs", "utc", "gmt", "z", "est", "edt", "cst", "cdt", "pst", "pdt", "cet", "cest", "bst", "brt", "brst", "ist", "jst")
	timeUnits    = set(
		"second", "seconds", "sec", "secs", "minute", "minutes", "min", "mins", "hour", "hours", "hr", "hrs", "day", "days",
		"week", "weeks", "month", "months", "year", "years",
		"segundo", "segundos", "minuto", "minutos", "hora", "horas", "dia", "dias", "día", "días", "semana", "semanas", "mes", "meses", "ano", "anos", "año", "años",
		"seconde", "secondes", "heure", "heures", "jour", "jours", "semaine", "semaines", "mois", "an", "ans")
	counterWords = set(
		"view", "views", "visit", "visits", "visitor", "visitors", "hits", "comment", "comments", "reply", "replies", "like", "likes",
		"share", "shares", "follower", "followers", "subscriber", "subscribers", "download", "downloads", "read", "reads", "vote", "votes", "online",
		"visualização", "visualizações", "visualizacao", "visualizacoes", "visita", "visitas", "acesso", "acessos", "comentário", "comentários",
		"comentario", "comentarios", "curtida", "curtidas", "seguidores", "respuestas", "vistas", "vues", "commentaire", "commentaires", "abonnés", "abonnes")
	versionWords = set("version", "versão", "versao", "versión", "version:", "release", "build", "rev", "revision", "ver")
)
