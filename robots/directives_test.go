package robots

import (
	"testing"
	"time"
)

func TestMetaDirectives(t *testing.T) {
	tests := []struct {
		name  string
		metas []Meta
		want  Directives
	}{
		{"none given", nil, Directives{}},
		{"robots noindex, nofollow", []Meta{{"robots", "noindex, nofollow"}}, Directives{NoIndex: true, NoFollow: true}},
		{"case and spacing", []Meta{{" ROBOTS ", " NoIndex ,NOFOLLOW "}}, Directives{NoIndex: true, NoFollow: true}},
		{"none", []Meta{{"robots", "none"}}, Directives{NoIndex: true, NoFollow: true}},
		{"all restricts nothing", []Meta{{"robots", "all"}}, Directives{}},
		{"index, follow restrict nothing", []Meta{{"robots", "index, follow"}}, Directives{}},
		{"unknown tokens ignored", []Meta{{"robots", "noodp, noydir, max-image-preview:large, nofollow"}}, Directives{NoFollow: true}},
		{"other flags", []Meta{{"robots", "noarchive, nosnippet, noimageindex"}}, Directives{NoArchive: true, NoSnippet: true, NoImageIndex: true}},
		{"nocache is noarchive", []Meta{{"robots", "nocache"}}, Directives{NoArchive: true}},
		{"max-snippet 0 is nosnippet", []Meta{{"robots", "max-snippet:0"}}, Directives{NoSnippet: true}},
		{"max-snippet -1 is not", []Meta{{"robots", "max-snippet:-1"}}, Directives{}},
		{"our token", []Meta{{"Sonda", "noindex"}}, Directives{NoIndex: true}},
		{"other crawler ignored", []Meta{{"googlebot", "noindex"}, {"bingbot", "nofollow"}}, Directives{}},
		{"several merge, most restrictive wins", []Meta{{"robots", "index, nofollow"}, {"sonda", "noindex"}, {"robots", "all"}}, Directives{NoIndex: true, NoFollow: true}},
		{"unrelated metas", []Meta{{"description", "noindex"}, {"viewport", "none"}}, Directives{}},
		{"empty content", []Meta{{"robots", ""}}, Directives{}},
		{"unavailable_after RFC 850 with comma", []Meta{{"robots", "unavailable_after: Friday, 25-Jun-27 15:00:00 GMT, nofollow"}},
			Directives{NoFollow: true, UnavailableAfter: time.Date(2027, 6, 25, 15, 0, 0, 0, time.UTC)}},
		{"unavailable_after ISO 8601", []Meta{{"robots", "unavailable_after: 2027-06-25"}},
			Directives{UnavailableAfter: time.Date(2027, 6, 25, 0, 0, 0, 0, time.UTC)}},
		{"unavailable_after garbage ignored", []Meta{{"robots", "unavailable_after: someday, noindex"}}, Directives{NoIndex: true}},
		{"unavailable_after without value", []Meta{{"robots", "unavailable_after"}}, Directives{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetaDirectives(tt.metas, "Sonda/1.0"); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHeaderDirectives(t *testing.T) {
	june := time.Date(2027, 6, 25, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		values []string
		want   Directives
	}{
		{"none", nil, Directives{}},
		{"plain list", []string{"noindex, nofollow"}, Directives{NoIndex: true, NoFollow: true}},
		{"several headers", []string{"noindex", "nofollow"}, Directives{NoIndex: true, NoFollow: true}},
		{"none keyword", []string{"NONE"}, Directives{NoIndex: true, NoFollow: true}},
		{"our bot", []string{"sonda: noindex"}, Directives{NoIndex: true}},
		{"our bot, case-insensitive", []string{"SONDA: nofollow"}, Directives{NoFollow: true}},
		{"other bot ignored", []string{"googlebot: noindex, nofollow"}, Directives{}},
		{"bot scope runs to the end of the value", []string{"nosnippet, googlebot: noindex, nofollow"}, Directives{NoSnippet: true}},
		{"scope switches", []string{"googlebot: noindex, sonda: nofollow"}, Directives{NoFollow: true}},
		{"scope does not cross headers", []string{"googlebot: noindex", "nofollow"}, Directives{NoFollow: true}},
		{"unavailable_after RFC 1123 with comma", []string{"unavailable_after: Fri, 25 Jun 2027 15:00:00 GMT"}, Directives{UnavailableAfter: june}},
		{"unavailable_after RFC 3339", []string{"unavailable_after: 2027-06-25T15:00:00Z, noindex"}, Directives{NoIndex: true, UnavailableAfter: june}},
		{"bot-scoped unavailable_after", []string{"sonda: unavailable_after: Fri, 25 Jun 2027 15:00:00 GMT"}, Directives{UnavailableAfter: june}},
		{"other bot's unavailable_after", []string{"otherbot: unavailable_after: Fri, 25 Jun 2027 15:00:00 GMT, noindex"}, Directives{}},
		{"earliest unavailable_after wins", []string{"unavailable_after: 2028-01-01", "unavailable_after: 2027-06-25T15:00:00Z"}, Directives{UnavailableAfter: june}},
		{"max-snippet is not a bot name", []string{"max-snippet: 0, nofollow"}, Directives{NoSnippet: true, NoFollow: true}},
		{"name that is not a token matches nobody", []string{"some bot: noindex"}, Directives{}},
		{"empty items", []string{",, ,noindex,"}, Directives{NoIndex: true}},
		{"empty bot directive", []string{"sonda:"}, Directives{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HeaderDirectives(tt.values, "Sonda/0.1 (+https://sonda.example)"); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDirectivesMergeAndIndexable(t *testing.T) {
	early := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	late := early.AddDate(1, 0, 0)
	a := Directives{NoIndex: true, UnavailableAfter: late}
	b := Directives{NoFollow: true, NoArchive: true, UnavailableAfter: early}
	got := a.Merge(b)
	want := Directives{NoIndex: true, NoFollow: true, NoArchive: true, UnavailableAfter: early}
	if got != want {
		t.Errorf("Merge = %+v, want %+v", got, want)
	}
	if b.Merge(a) != want {
		t.Error("Merge is not symmetric")
	}
	if (Directives{}).Merge(Directives{UnavailableAfter: late}).UnavailableAfter != late {
		t.Error("merging into a zero date lost the date")
	}
	if (Directives{UnavailableAfter: late}).Merge(Directives{}).UnavailableAfter != late {
		t.Error("merging a zero date cleared the date")
	}

	for _, tt := range []struct {
		d    Directives
		now  time.Time
		want bool
	}{
		{Directives{}, early, true},
		{Directives{NoFollow: true}, early, true},
		{Directives{NoIndex: true}, early, false},
		{Directives{UnavailableAfter: late}, early, true},
		{Directives{UnavailableAfter: late}, late, false},
		{Directives{UnavailableAfter: early}, late, false},
	} {
		if got := tt.d.Indexable(tt.now); got != tt.want {
			t.Errorf("%+v.Indexable(%v) = %v, want %v", tt.d, tt.now, got, tt.want)
		}
	}
}
