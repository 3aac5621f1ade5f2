package extract

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ParseDate reads a publication or modification date as pages write it: ISO 8601 and
// RFC 3339 with or without time, seconds, fractions and zone ("2018-05-12T05:00:00-03:00",
// "2017-11-03 03:01:00.000000", "2021-11-01T10:52:50+0100", "20180512"), RFC 1123 and
// RFC 850 ("Sat, 12 May 2018 08:00:00 GMT"), Unix timestamps in seconds or milliseconds,
// and written dates in English, Portuguese, Spanish, French, German, Italian and Dutch
// ("May 12, 2018 5:00 PM EDT", "12 de maio de 2018 às 05h00", "12. Mai 2018, 17:00 Uhr",
// "samedi 12 mai 2018", "12/05/2018 17:00").
//
// A value without a zone is read in loc (UTC when loc is nil). Numeric dates whose day and
// month could be swapped (03/04/2018) are read month first when lang is English and day
// first otherwise, as those languages write them. ok is false when s holds no complete date
// (a year alone, a month and year) or the year is outside 1970–2100: such values are
// rarely what the page meant as a publication date.
//
// It is hand-written rather than a general natural-language date parser because metadata
// dates are a small, regular set, and the cascade parses several per page: this costs
// about two microseconds where a locale-table parser (go-dateparser, which go-trafilatura
// uses) costs a hundred times more.
func ParseDate(s string, lang string, loc *time.Location) (t time.Time, ok bool) {
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 200 {
		return time.Time{}, false
	}
	if t, ok := parseUnix(s); ok {
		return t, true
	}
	if t, ok := parseISO(s, loc); ok {
		return t, plausible(t)
	}
	if t, ok := parseWritten(s, lang, loc); ok {
		return t, plausible(t)
	}
	return time.Time{}, false
}

func plausible(t time.Time) bool { return t.Year() >= 1970 && t.Year() <= 2100 }

// parseUnix reads a string of 10 (seconds) or 13 (milliseconds) digits.
func parseUnix(s string) (time.Time, bool) {
	if len(s) != 10 && len(s) != 13 {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	var t time.Time
	if len(s) == 13 {
		t = time.UnixMilli(n).UTC()
	} else {
		t = time.Unix(n, 0).UTC()
	}
	return t, plausible(t)
}

// scanner walks an ISO-like date string.
type scanner struct {
	s string
	i int
}

func (c *scanner) digits(min, max int) (int, bool) {
	j := c.i
	for j < len(c.s) && j-c.i < max && c.s[j] >= '0' && c.s[j] <= '9' {
		j++
	}
	if j-c.i < min {
		return 0, false
	}
	n, _ := strconv.Atoi(c.s[c.i:j])
	c.i = j
	return n, true
}

func (c *scanner) eat(b byte) bool {
	if c.i < len(c.s) && c.s[c.i] == b {
		c.i++
		return true
	}
	return false
}

func (c *scanner) done() bool { return c.i >= len(c.s) }

// parseISO reads YYYY-MM-DD (or YYYY/MM/DD, YYYY.MM.DD, YYYYMMDD) with an optional time
// after 'T' or spaces and an optional zone: Z, ±HH:MM, ±HHMM, ±HH or a zone abbreviation.
func parseISO(s string, loc *time.Location) (time.Time, bool) {
	c := &scanner{s: s}
	year, ok := c.digits(4, 4)
	if !ok {
		return time.Time{}, false
	}
	var month, day int
	if c.done() {
		return time.Time{}, false
	}
	sep := c.s[c.i]
	switch sep {
	case '-', '/', '.':
		c.i++
		if month, ok = c.digits(1, 2); !ok || !c.eat(sep) {
			return time.Time{}, false
		}
		if day, ok = c.digits(1, 2); !ok {
			return time.Time{}, false
		}
	default:
		if month, ok = c.digits(2, 2); !ok {
			return time.Time{}, false
		}
		if day, ok = c.digits(2, 2); !ok {
			return time.Time{}, false
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}
	hour, min, sec, nsec := 0, 0, 0, 0
	zone := loc
	if !c.done() {
		if !c.eat('T') && !c.eat('t') {
			if !c.eat(' ') && !c.eat(',') {
				return time.Time{}, false
			}
			for c.eat(' ') {
			}
		}
		if c.done() {
			return time.Time{}, false
		}
		if hour, ok = c.digits(2, 2); !ok || hour > 24 {
			return time.Time{}, false
		}
		colon := c.eat(':')
		if min, ok = c.digits(2, 2); !ok || min > 59 {
			return time.Time{}, false
		}
		if (colon && c.eat(':')) || (!colon && c.i < len(c.s) && isDigit(c.s[c.i])) {
			if sec, ok = c.digits(2, 2); !ok || sec > 60 {
				return time.Time{}, false
			}
			if sec == 60 {
				sec = 59 // leap second: keep the instant within the minute
			}
			if c.eat('.') || c.eat(',') {
				start := c.i
				frac, ok := c.digits(1, 9)
				if !ok {
					return time.Time{}, false
				}
				for n := c.i - start; n < 9; n++ {
					frac *= 10
				}
				nsec = frac
				for c.i < len(c.s) && isDigit(c.s[c.i]) { // beyond nanoseconds
					c.i++
				}
			}
		}
		if hour == 24 {
			if min != 0 || sec != 0 || nsec != 0 {
				return time.Time{}, false
			}
		}
		for c.eat(' ') {
		}
		if !c.done() {
			z, ok := parseZone(c.s[c.i:])
			if !ok {
				return time.Time{}, false
			}
			zone = z
		}
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, nsec, zone), true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func daysIn(month, year int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseZone reads a whole zone designator: Z, UTC, GMT, ±HH:MM, ±HHMM, ±HH, GMT+HH:MM,
// or one of the common abbreviations in zoneAbbrev.
func parseZone(s string) (*time.Location, bool) {
	s = strings.TrimSpace(strings.Trim(s, "()[]"))
	if s == "" {
		return nil, false
	}
	upper := strings.ToUpper(s)
	if off, ok := zoneAbbrev[upper]; ok {
		return fixedZone(off), true
	}
	for _, p := range []string{"UTC", "GMT"} {
		if strings.HasPrefix(upper, p) && len(upper) > len(p) {
			upper = upper[len(p):]
			break
		}
	}
	if upper[0] != '+' && upper[0] != '-' && !strings.HasPrefix(upper, "\u2212") {
		return nil, false
	}
	sign := 1
	rest := upper[1:]
	if upper[0] == '-' {
		sign = -1
	} else if strings.HasPrefix(upper, "\u2212") { // U+2212 MINUS SIGN, as some CMSs write it
		sign, rest = -1, upper[len("\u2212"):]
	}
	c := &scanner{s: rest}
	h, ok := c.digits(1, 2)
	if !ok || h > 14 {
		return nil, false
	}
	m := 0
	if c.eat(':') || !c.done() {
		if m, ok = c.digits(2, 2); !ok || m > 59 {
			return nil, false
		}
	}
	if !c.done() {
		return nil, false
	}
	return fixedZone(sign * (h*3600 + m*60)), true
}

// fixedZone names offsets the way RFC 3339 writes them, so a date reads the same whether
// it came from "-03:00" or "BRT".
func fixedZone(offset int) *time.Location {
	if offset == 0 {
		return time.UTC
	}
	return time.FixedZone("", offset)
}

// zoneAbbrev are the zone abbreviations news sites write after times, with their UTC
// offsets in seconds. Ambiguous ones (IST, CST in China) take their most common meaning on
// news pages.
var zoneAbbrev = map[string]int{
	"Z": 0, "UT": 0, "UTC": 0, "GMT": 0, "WET": 0, "WEST": 3600, "BST": 3600,
	"CET": 3600, "CEST": 7200, "MEZ": 3600, "MESZ": 7200, "EET": 7200, "EEST": 10800, "MSK": 10800,
	"EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"AKST": -9 * 3600, "AKDT": -8 * 3600, "HST": -10 * 3600,
	"BRT": -3 * 3600, "BRST": -2 * 3600, "ART": -3 * 3600, "CLT": -4 * 3600, "CLST": -3 * 3600,
	"IST": 5*3600 + 1800, "JST": 9 * 3600, "KST": 9 * 3600, "HKT": 8 * 3600, "SGT": 8 * 3600,
	"AEST": 10 * 3600, "AEDT": 11 * 3600, "ACST": 9*3600 + 1800, "AWST": 8 * 3600,
	"NZST": 12 * 3600, "NZDT": 13 * 3600,
}

// dateToken is one word or number of a written date.
type dateToken struct {
	text  string // lowercased, accents kept
	num   int    // value when digits
	width int    // number of digits; 0 for words
}

// tokenizeDate splits a written date into words, numbers and zone offsets. Separators
// (spaces, commas, slashes, dots, dashes between numbers) are dropped, but "+03:00"-like
// offsets and hh:mm times survive as single tokens.
func tokenizeDate(s string) []dateToken {
	var out []dateToken
	i := 0
	for i < len(s) && len(out) < 24 {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= '0' && r <= '9':
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == ':') {
				j++
			}
			tok := s[i:j]
			// "17h30" / "17h" (pt, fr): a time.
			if j < len(s) && (s[j] == 'h' || s[j] == 'H') && !strings.Contains(tok, ":") && len(tok) <= 2 {
				k := j + 1
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				mins := s[j+1 : k]
				if k == len(s) || !isLetter(s[k]) {
					if mins == "" {
						mins = "00"
					}
					tok, j = tok+":"+mins, k
				}
			}
			if strings.Contains(tok, ":") {
				out = append(out, dateToken{text: strings.Trim(tok, ":")})
			} else {
				n, _ := strconv.Atoi(tok)
				if len(tok) > 9 {
					n = -1
				}
				out = append(out, dateToken{text: tok, num: n, width: len(tok)})
			}
			i = j
		case (r == '+' || r == '-' || r == '\u2212') && len(out) > 0 && (isTimeToken(out[len(out)-1].text) || isZoneWord(out[len(out)-1].text)):
			j := i + size
			for j < len(s) && (isDigit(s[j]) || s[j] == ':') {
				j++
			}
			if j > i+size {
				out = append(out, dateToken{text: s[i:j]})
			}
			i = j
		case unicode.IsLetter(r):
			j := i
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r2) {
					break
				}
				j += n
			}
			out = append(out, dateToken{text: strings.ToLower(s[i:j])})
			i = j
		default:
			i += size
		}
	}
	return out
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func isZoneWord(s string) bool { return s == "gmt" || s == "utc" || s == "ut" }

// isHourNumber reports whether t could be the hour of "5 pm".
func isHourNumber(t dateToken) bool { return t.width > 0 && t.width <= 2 && t.num >= 1 && t.num <= 12 }

func isTimeToken(s string) bool {
	return strings.Contains(s, ":") || s == "am" || s == "pm" || s == "a" || s == "p"
}

// parseWritten reads a date written with words or numbers in any order common on the
// web: day month year, month day year, year month day, with optional weekday, time, AM/PM
// and zone, in the languages of monthNames.
func parseWritten(s string, lang string, loc *time.Location) (time.Time, bool) {
	toks := tokenizeDate(s)
	var nums []dateToken // date numbers, in order
	month := 0
	monthAt := -1 // index in nums before which the month name stood
	hour, min, sec := -1, 0, 0
	pm, am := false, false
	zone := loc
	for i, t := range toks {
		switch {
		case t.width > 0:
			if t.num < 0 {
				return time.Time{}, false
			}
			nums = append(nums, t)
		case t.text[0] == '+' || t.text[0] == '-' || strings.HasPrefix(t.text, "\u2212"):
			z, ok := parseZone(t.text)
			if !ok {
				return time.Time{}, false
			}
			zone = z
		case strings.Contains(t.text, ":"):
			parts := strings.Split(t.text, ":")
			if len(parts) < 2 || len(parts) > 3 || hour >= 0 {
				return time.Time{}, false
			}
			var err error
			if hour, err = strconv.Atoi(parts[0]); err != nil || hour > 23 {
				return time.Time{}, false
			}
			if min, err = strconv.Atoi(parts[1]); err != nil || min > 59 {
				return time.Time{}, false
			}
			if len(parts) == 3 {
				if sec, err = strconv.Atoi(parts[2]); err != nil || sec > 59 {
					return time.Time{}, false
				}
			}
		default:
			w := t.text
			if m, ok := monthNames[strings.TrimSuffix(w, ".")]; ok && month == 0 {
				month, monthAt = m, len(nums)
				continue
			}
			if w == "a" || w == "p" { // "a.m.", "p.m."
				if i+1 < len(toks) && toks[i+1].text == "m" {
					w += "m"
				}
			}
			switch {
			case (w == "am" || w == "pm") && i > 0 && (hour >= 0 || isHourNumber(toks[i-1])):
				if hour < 0 { // "5 pm": the number before was the hour, not part of the date
					hour, min = nums[len(nums)-1].num, 0
					nums = nums[:len(nums)-1]
				}
				pm, am = w == "pm", w == "am"
			case w == "m" && i > 0 && (toks[i-1].text == "a" || toks[i-1].text == "p"):
			case w == "gmt" || w == "utc":
				// "GMT+1" arrives as "gmt" then "+1": the offset token sets the zone.
				if zone == loc {
					zone = time.UTC
				}
			case i > 0 && len(w) >= 2:
				if off, ok := zoneAbbrev[strings.ToUpper(w)]; ok && hour >= 0 {
					zone = fixedZone(off)
				} else if !fillerWords[w] && !weekdayNames[w] && !ordinalSuffix[w] {
					return time.Time{}, false
				}
			default:
				if !fillerWords[w] && !weekdayNames[w] && !ordinalSuffix[w] {
					return time.Time{}, false
				}
			}
		}
	}
	year, day := 0, 0
	switch {
	case month > 0 && len(nums) == 2:
		a, b := nums[0], nums[1]
		switch {
		case a.width == 4: // 2018 May 12
			year, day = a.num, b.num
		case b.width == 4 || monthAt == 0 || monthAt == 1: // 12 May 2018, May 12 2018, May 12, 18
			day, year = a.num, b.num
		default:
			return time.Time{}, false
		}
	case month == 0 && len(nums) == 3:
		a, b, c := nums[0], nums[1], nums[2]
		if a.width == 4 { // 2018/05/12 with other words around
			year, month, day = a.num, b.num, c.num
			break
		}
		if c.width != 4 && c.width != 2 {
			return time.Time{}, false
		}
		year = c.num
		day, month = a.num, b.num
		if monthFirst(lang) && a.num <= 12 || b.num > 12 {
			day, month = b.num, a.num
		}
	default:
		return time.Time{}, false
	}
	if year < 100 {
		year += 2000
		if year > 2069 {
			year -= 100
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}
	if hour < 0 {
		hour = 0
	}
	if pm && hour < 12 {
		hour += 12
	} else if am && hour == 12 {
		hour = 0
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, 0, zone), true
}

// monthFirst reports whether numeric dates in lang put the month first (03/04 = March 4).
func monthFirst(lang string) bool {
	return lang == "en" || strings.HasPrefix(lang, "en-us") || strings.HasPrefix(lang, "en_us")
}

// monthNames maps month names and their usual abbreviations to month numbers, in English,
// Portuguese, Spanish, French, German, Italian and Dutch (lowercase, with and without
// accents). Collisions between languages agree on the month.
var monthNames = func() map[string]int {
	m := map[string]int{}
	add := func(month int, names ...string) {
		for _, n := range names {
			m[n] = month
		}
	}
	add(1, "january", "jan", "janeiro", "enero", "ene", "janvier", "janv", "januar", "jän", "jänner", "gennaio", "gen", "januari")
	add(2, "february", "feb", "fevereiro", "fev", "febrero", "février", "fevrier", "févr", "fevr", "februar", "febbraio", "februari")
	add(3, "march", "mar", "março", "marco", "marzo", "mars", "märz", "maerz", "mrz", "maart", "mrt")
	add(4, "april", "apr", "abril", "abr", "avril", "avr", "aprile")
	add(5, "may", "maio", "mayo", "mai", "maggio", "mag", "mei")
	add(6, "june", "jun", "junho", "junio", "juin", "juni", "giugno", "giu")
	add(7, "july", "jul", "julho", "julio", "juillet", "juil", "juli", "luglio", "lug")
	add(8, "august", "aug", "agosto", "ago", "août", "aout", "augustus")
	add(9, "september", "sep", "sept", "setembro", "set", "septiembre", "septembre", "settembre")
	add(10, "october", "oct", "outubro", "out", "octubre", "octobre", "oktober", "okt", "ottobre", "ott")
	add(11, "november", "nov", "novembro", "noviembre", "novembre")
	add(12, "december", "dec", "dezembro", "dez", "diciembre", "dic", "décembre", "decembre", "déc", "dezember", "dicembre", "december")
	return m
}()

var weekdayNames = wordSet(
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
	"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
	"segunda", "terça", "terca", "quarta", "quinta", "sexta", "sábado", "sabado", "domingo", "feira",
	"seg", "ter", "qua", "qui", "sex", "sáb", "sab", "dom",
	"lunes", "martes", "miércoles", "miercoles", "jueves", "viernes",
	"lun", "mié", "mie", "jue", "vie",
	"lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
	"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag",
	"lunedì", "lunedi", "martedì", "martedi", "mercoledì", "mercoledi", "giovedì", "giovedi",
	"venerdì", "venerdi", "sabato", "domenica",
	"maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag",
)

// fillerWords are the words written between the parts of a date or before it.
var fillerWords = wordSet(
	"of", "the", "at", "on", "de", "del", "do", "da", "às", "as", "a", "à", "le", "la", "el",
	"um", "am", "den", "der", "uhr", "h", "hs", "hrs", "o", "clock", "alle", "ore", "il",
	"om", "op", "van", "het", "t", "y", "e", "et", "und",
	"published", "posted", "updated", "publicado", "publicada", "actualizado", "atualizado",
	"atualizada", "publié", "publie", "mis", "jour", "veröffentlicht", "aktualisiert",
	"pubblicato", "aggiornato", "gepubliceerd", "em", "en", "il", "by", "por", "par", "von",
)

// ordinalSuffix are the letters written after day numbers (1st, 2nd, 1er, 1º).
var ordinalSuffix = wordSet("st", "nd", "rd", "th", "er", "º", "ª", "o", "e")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
