package extract

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	brt := time.FixedZone("", -3*3600)
	cet := time.FixedZone("", 3600)
	edt := time.FixedZone("", -4*3600)
	tests := []struct {
		in   string
		lang string
		want time.Time
	}{
		// ISO 8601 / RFC 3339 and their web variants.
		{"2018-05-12T05:00:00-03:00", "", time.Date(2018, 5, 12, 5, 0, 0, 0, brt)},
		{"2018-05-12T08:03:49Z", "", time.Date(2018, 5, 12, 8, 3, 49, 0, time.UTC)},
		{"2015-03-17T16:27:40.294Z", "", time.Date(2015, 3, 17, 16, 27, 40, 294e6, time.UTC)},
		{"2021-11-01T10:52:50+0100", "", time.Date(2021, 11, 1, 10, 52, 50, 0, cet)},
		{"2017-11-03 03:01:00.000000", "", time.Date(2017, 11, 3, 3, 1, 0, 0, time.UTC)},
		{"2018-04-05T06:00", "", time.Date(2018, 4, 5, 6, 0, 0, 0, time.UTC)},
		{"2024-06-25", "", time.Date(2024, 6, 25, 0, 0, 0, 0, time.UTC)},
		{"2018/05/12", "", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"20180512", "", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"2018-05-12T05:00:00.123456789123-03:00", "", time.Date(2018, 5, 12, 5, 0, 0, 123456789, brt)},
		{"2018-05-12 05:00:00 BRT", "", time.Date(2018, 5, 12, 5, 0, 0, 0, brt)},
		{"2018-05-12T05:00:00+03", "", time.Date(2018, 5, 12, 5, 0, 0, 0, time.FixedZone("", 3*3600))},
		{"2018-05-12T24:00:00Z", "", time.Date(2018, 5, 13, 0, 0, 0, 0, time.UTC)},
		// RFC 1123 / 822 / 850, as HTTP and RSS write them.
		{"Sat, 12 May 2018 08:00:00 GMT", "", time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)},
		{"Sat, 12 May 2018 08:00:00 -0300", "", time.Date(2018, 5, 12, 8, 0, 0, 0, brt)},
		{"Saturday, 12-May-18 08:00:00 GMT", "", time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)},
		// Unix time.
		{"1526112000", "", time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)},
		{"1526112000000", "", time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)},
		// English.
		{"May 12, 2018", "en", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"May 12, 2018 5:00 PM EDT", "en", time.Date(2018, 5, 12, 17, 0, 0, 0, edt)},
		{"12th May 2018", "en", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"Published on March 3rd, 2019 at 12:30 a.m.", "en", time.Date(2019, 3, 3, 0, 30, 0, 0, time.UTC)},
		{"Thursday 27 July 2017", "en", time.Date(2017, 7, 27, 0, 0, 0, 0, time.UTC)},
		{"03/04/2018", "en", time.Date(2018, 3, 4, 0, 0, 0, 0, time.UTC)},
		{"Jan. 5, 2020, 9 pm", "en", time.Date(2020, 1, 5, 21, 0, 0, 0, time.UTC)},
		// Portuguese.
		{"12 de maio de 2018 às 05h00", "pt", time.Date(2018, 5, 12, 5, 0, 0, 0, time.UTC)},
		{"sábado, 12 de maio de 2018, 17h30", "pt", time.Date(2018, 5, 12, 17, 30, 0, 0, time.UTC)},
		{"03/04/2018 14:15", "pt", time.Date(2018, 4, 3, 14, 15, 0, 0, time.UTC)},
		{"Atualizado em 1º de março de 2020", "pt", time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)},
		// Spanish.
		{"12 de mayo de 2018", "es", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"miércoles, 3 de enero de 2024 10:20", "es", time.Date(2024, 1, 3, 10, 20, 0, 0, time.UTC)},
		// French.
		{"samedi 12 mai 2018", "fr", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"1er février 2019 à 18h05", "fr", time.Date(2019, 2, 1, 18, 5, 0, 0, time.UTC)},
		{"04.05.2015 à 13h36", "fr", time.Date(2015, 5, 4, 13, 36, 0, 0, time.UTC)},
		// German.
		{"12. Mai 2018, 17:00 Uhr", "de", time.Date(2018, 5, 12, 17, 0, 0, 0, time.UTC)},
		{"Am 3. März 2020", "de", time.Date(2020, 3, 3, 0, 0, 0, 0, time.UTC)},
		{"12.05.2018", "de", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		// Italian and Dutch.
		{"12 maggio 2018", "it", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		{"12 mei 2018", "nl", time.Date(2018, 5, 12, 0, 0, 0, 0, time.UTC)},
		// An explicit zone after a written date.
		{"12 May 2018 10:00 +0200", "en", time.Date(2018, 5, 12, 10, 0, 0, 0, time.FixedZone("", 7200))},
		{"12 May 2018 10:00 GMT+2", "en", time.Date(2018, 5, 12, 10, 0, 0, 0, time.FixedZone("", 7200))},
	}
	for _, tt := range tests {
		got, ok := ParseDate(tt.in, tt.lang, nil)
		if !ok {
			t.Errorf("ParseDate(%q, %q): not parsed, want %v", tt.in, tt.lang, tt.want)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseDate(%q, %q) = %v, want %v", tt.in, tt.lang, got, tt.want)
		}
		_, gotOff := got.Zone()
		_, wantOff := tt.want.Zone()
		if gotOff != wantOff {
			t.Errorf("ParseDate(%q): zone offset %d, want %d (the page's zone must be kept)", tt.in, gotOff, wantOff)
		}
	}
}

func TestParseDateLocation(t *testing.T) {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	got, ok := ParseDate("12 de maio de 2018 às 05h00", "pt", sp)
	if !ok || !got.Equal(time.Date(2018, 5, 12, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("a zoneless date must be read in the given location: got %v %v", got, ok)
	}
	got, ok = ParseDate("2018-05-12T05:00:00Z", "", sp)
	if !ok || got.Location() != time.UTC {
		t.Errorf("an explicit zone wins over the location: got %v", got)
	}
}

func TestParseDateRejects(t *testing.T) {
	for _, in := range []string{
		"", "   ", "2018", "May 2018", "yesterday", "2018-13-01", "2018-02-30", "2018-05-12T25:00",
		"1899-01-01", "2200-01-01", "12345", "not a date at all", "2018-05-12T05:00:00 nonsense",
		"32 May 2018", "May 12", "12/05", "2018-05-12T05:00:00+99:00", "99999999999",
	} {
		if got, ok := ParseDate(in, "en", nil); ok {
			t.Errorf("ParseDate(%q) = %v, want no date", in, got)
		}
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2018-05-12T05:00:00-03:00", "Sat, 12 May 2018 08:00:00 GMT", "12 de maio de 2018 às 05h00",
		"May 12, 2018 5:00 PM EDT", "12. Mai 2018", "1526112000", "03/04/18", "5pm", "a.m.", "+03:00"} {
		f.Add(s, "en")
	}
	f.Fuzz(func(t *testing.T, s, lang string) {
		got, ok := ParseDate(s, lang, nil)
		if ok && (got.Year() < 1970 || got.Year() > 2101) {
			t.Fatalf("ParseDate(%q) = %v: outside the plausible range", s, got)
		}
		if !ok && !got.IsZero() {
			t.Fatalf("ParseDate(%q) returned a time with ok=false", s)
		}
	})
}

func BenchmarkParseDate(b *testing.B) {
	inputs := []string{"2018-05-12T05:00:00-03:00", "Sat, 12 May 2018 08:00:00 GMT", "12 de maio de 2018 às 05h00"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ParseDate(inputs[i%len(inputs)], "pt", nil)
	}
}
