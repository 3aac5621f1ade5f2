package rank

import (
	"math"
	"testing"
)

// fig49 is the thesis's link map (seed 000 Fig. 4-9), duplicate edge included.
var fig49 = []Edge{
	{"www.ibge.gov.br", "www.inpe.br"},
	{"www.inpe.br", "www.ibge.gov.br"},
	{"www.gismaps.com.br/", "www.inpe.br"},
	{"www.gismaps.com.br/", "www.gisconsult.com.br"},
	{"www.gismaps.com.br/", "www.inpe.br"},
	{"www.gisconsult.com.br", "www.gismaps.com.br/"},
	{"www.gisconsult.com.br", "www.inpe.br"},
	{"www.gisconsult.com.br", "www.ibge.gov.br"},
	{"http://www.inpe.br/institucional/historia.php", "http://www.inpe.br/"}, // self-link: ignored
}

// In the example, ibge, inpe and gismaps are producers (their edges weigh 2), gisconsult
// is not (its edges weigh 1).
func producers(site string) bool { return site != "gisconsult.com.br" }

// TestFig410 reproduces the thesis's scores exactly (seed 000 Fig. 4-10).
func TestFig410(t *testing.T) {
	got := Scores(fig49, producers)
	want := map[string]int{"ibge.gov.br": 3, "inpe.br": 7, "gismaps.com.br": 1, "gisconsult.com.br": 2}
	if len(got) != len(want) {
		t.Errorf("scores %v", got)
	}
	for site, w := range want {
		if got[site] != w {
			t.Errorf("%s: score %d, thesis says %d", site, got[site], w)
		}
	}
	ps := []Producer{{Site: "ibge.gov.br", Files: 10}, {Site: "inpe.br", Files: 1}, {Site: "gismaps.com.br", Files: 5}, {Site: "gisconsult.com.br", Files: 5, Downloads: 3}}
	for i := range ps {
		ps[i].Score = got[ps[i].Site]
	}
	Order(ps)
	order := []string{"inpe.br", "ibge.gov.br", "gisconsult.com.br", "gismaps.com.br"}
	for i, s := range order {
		if ps[i].Site != s {
			t.Fatalf("order %v, want %v", ps, order)
		}
	}
	// Ties: score, then files, then downloads.
	tie := []Producer{{Site: "a", Score: 2, Files: 1, Downloads: 9}, {Site: "b", Score: 2, Files: 3}, {Site: "c", Score: 2, Files: 1, Downloads: 10}}
	Order(tie)
	if tie[0].Site != "b" || tie[1].Site != "c" || tie[2].Site != "a" {
		t.Errorf("tie-break %v", tie)
	}
}

func TestLinkRank(t *testing.T) {
	r := LinkRank(fig49, producers, 0.85)
	sum := 0.0
	for _, v := range r {
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 || len(r) != 4 {
		t.Fatalf("ranks %v sum %g", r, sum)
	}
	// inpe has the most weighted in-links and ranks first, as with the score.
	for s, v := range r {
		if s != "inpe.br" && v >= r["inpe.br"] {
			t.Errorf("%s %g ≥ inpe %g", s, v, r["inpe.br"])
		}
	}
	if len(LinkRank(nil, producers, 0.85)) != 0 {
		t.Error("empty graph")
	}
}

func TestSite(t *testing.T) {
	for in, want := range map[string]string{"www.gismaps.com.br/": "gismaps.com.br", "http://WWW.INPE.BR/x?y": "inpe.br", "ibge.gov.br:8080": "ibge.gov.br"} {
		if got := Site(in); got != want {
			t.Errorf("Site(%q) = %q, want %q", in, got, want)
		}
	}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// TestSaoPauloQuery reproduces the recall and precision of the thesis's "são paulo" query
// (seed 000 §4.6, Figs. 4-14 to 4-17): 6 relevant files, at ranks 1 2 3 5 7 9 in direct
// search and 1 2 3 5 9 28 in expanded search. The thesis prints P = 6/6 at rank 9 of the
// direct search; the right value, 6/9 = 0.67, is what its text reports.
func TestSaoPauloQuery(t *testing.T) {
	tests := []struct {
		name  string
		ranks []int
		want  [][3]float64 // rank, recall, precision
	}{
		{"direct", []int{1, 2, 3, 5, 7, 9}, [][3]float64{{1, .17, 1}, {2, .33, 1}, {3, .5, 1}, {5, .67, .8}, {7, .83, .71}, {9, 1, .67}}},
		{"expanded", []int{1, 2, 3, 5, 9, 28}, [][3]float64{{1, .17, 1}, {2, .33, 1}, {3, .5, 1}, {5, .67, .8}, {9, .83, .56}, {28, 1, .21}}},
	}
	for _, tt := range tests {
		got := AtRelevant(tt.ranks, 6)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %v", tt.name, got)
		}
		for i, w := range tt.want {
			g := got[i]
			if float64(g.Rank) != w[0] || round2(g.Recall) != w[1] || round2(g.Precision) != w[2] {
				t.Errorf("%s rank %d: recall %.2f precision %.2f, thesis %.2f %.2f", tt.name, g.Rank, g.Recall, g.Precision, w[1], w[2])
			}
		}
	}
	// Indexing (Fig. 4-12): the 47 producers in the first 47 places: 100% at every rank.
	var all []int
	for i := 1; i <= 47; i++ {
		all = append(all, i)
	}
	for _, pr := range AtRelevant(all, 47) {
		if pr.Precision != 1 {
			t.Fatalf("rank %d precision %g", pr.Rank, pr.Precision)
		}
	}
}
