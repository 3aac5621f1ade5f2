package text

import (
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
	var votes [len(detectLangs)]float64
	words := 0
	var buf [MaxTokenBytes * 2]byte
	eachWord(s, func(start, end, _ int) bool {
		words++
		w := appendFolded(buf[:0], s[start:end])
		if mask := detectIndex[string(w)]; mask != 0 { // no allocation: the compiler looks up []byte keys in place
			share := 1 / float64(bits.OnesCount16(mask))
			for i := range detectLangs {
				if mask&(1<<i) != 0 {
					votes[i] += share
				}
			}
		}
		return words < detectWords // the rest of a long text is not read at all
	})
	letterVotes(s, &votes)
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

// letterVotes adds the votes of letters that single out one language, reading at most the
// first 64 KiB of s.
func letterVotes(s string, votes *[len(detectLangs)]float64) {
	if len(s) > 64<<10 {
		s = s[:64<<10]
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
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

func sortStrings(s []string) { sort.Strings(s) }
