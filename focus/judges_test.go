package focus

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestThesisKappaTables reproduces seed 001's Tables 5, 6 and 7.
func TestThesisKappaTables(t *testing.T) {
	tests := []struct {
		name                     string
		table                    Agreement
		precision, kappa, pa, pe float64
	}{
		{"nuclear area in general (Table 5)", Agreement{A: 48, B: 1, C: 6, D: 5}, 0.80, 0.53, 0.88, 0.75},
		{"nuclear energy specifically (Table 6)", Agreement{A: 43, B: 1, C: 8, D: 8}, 0.72, 0.55, 0.85, 0.66},
	}
	round := func(x float64) float64 { return math.Round(x*100) / 100 }
	for _, tt := range tests {
		tab := tt.table
		if tab.N() != 60 {
			t.Fatalf("%s: n = %d", tt.name, tab.N())
		}
		if got := round(tab.Precision()); got != tt.precision {
			t.Errorf("%s: precision %.3f, want %.2f", tt.name, tab.Precision(), tt.precision)
		}
		if got := round(tab.Kappa()); got != tt.kappa {
			t.Errorf("%s: kappa %.3f, want %.2f", tt.name, tab.Kappa(), tt.kappa)
		}
		if round(tab.Observed()) != tt.pa || round(tab.Expected()) != tt.pe {
			t.Errorf("%s: P(A) %.3f P(E) %.3f, want %.2f %.2f", tt.name, tab.Observed(), tab.Expected(), tt.pa, tt.pe)
		}
	}
	if k := (Agreement{A: 5}).Kappa(); k != 1 {
		t.Errorf("unanimous judges: kappa %v, want 1", k)
	}
	if (Agreement{}).Precision() != 0 {
		t.Error("empty table")
	}
}

func TestJudgmentRoundTrip(t *testing.T) {
	urls := SamplePages([]string{"http://c/", "http://a/", "http://b/", "http://d/"}, 3, 1)
	if len(urls) != 3 || strings.Join(urls, " ") != strings.Join(SamplePages([]string{"http://a/", "http://b/", "http://c/", "http://d/"}, 3, 1), " ") {
		t.Fatalf("sample %v is not a function of the set and seed", urls)
	}
	var form bytes.Buffer
	if err := WriteJudgmentForm(&form, "Is it about nuclear energy?", urls, []string{"A", "B\nC", ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJudgments(strings.NewReader(form.String())); err == nil || !strings.Contains(err.Error(), "not judged") {
		t.Errorf("an unfilled form must not be scored: %v", err)
	}
	fill := func(verdicts ...string) string {
		lines := strings.Split(form.String(), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "? ") {
				lines[i] = verdicts[0] + l[1:]
				verdicts = verdicts[1:]
			}
		}
		return strings.Join(lines, "\n")
	}
	one, two := fill("yes", "no", "sim"), fill("y", "y", "y")
	j1, err := ReadJudgments(strings.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	j2, _ := ReadJudgments(strings.NewReader(two))
	tab, err := Tabulate(j1, j2)
	if err != nil || tab != (Agreement{A: 2, C: 1}) {
		t.Errorf("table %+v, %v", tab, err)
	}
	delete(j2, urls[0])
	if _, err := Tabulate(j1, j2); err == nil {
		t.Error("pages judged by one judge only must be an error")
	}
	for _, bad := range []string{"maybe http://x/", "yes", "yes http://x/\nno http://x/"} {
		if _, err := ReadJudgments(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadJudgments(%q) must fail", bad)
		}
	}
}
