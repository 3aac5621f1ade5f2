package synthcorpus

import (
	"reflect"
	"strings"
	"testing"
)

func TestDeterministic(t *testing.T) {
	a, b := New(7), New(7)
	for i := range 50 {
		if pa, pb := a.Page(i), b.Page(i); !reflect.DeepEqual(pa, pb) {
			t.Fatalf("page %d differs for the same seed", i)
		}
	}
	if !reflect.DeepEqual(a.Log(1000, 300), b.Log(1000, 300)) {
		t.Fatal("logs differ for the same seed")
	}
}

func TestLogMix(t *testing.T) {
	c := New(1)
	log := c.Log(20000, 10000)
	kinds := map[string]int{}
	seen := map[string]bool{}
	for _, q := range log {
		kinds[q.Kind]++
		seen[q.Text] = true
		n := len(strings.Fields(q.Text))
		switch q.Kind {
		case KindShort:
			if n < 1 || n > 3 {
				t.Fatalf("short query of %d words: %q", n, q.Text)
			}
		case KindQuestion:
			if n < 6 || n > 12 {
				t.Fatalf("question of %d words: %q", n, q.Text)
			}
		case KindHeavy:
			if strings.Count(q.Text, " OR ") < 29 {
				t.Fatalf("heavy query with few ORs: %q", q.Text)
			}
		}
	}
	distinct := float64(len(seen)) / float64(len(log))
	t.Logf("kinds %v, distinct %.2f", kinds, distinct)
	if kinds[KindShort] < kinds[KindQuestion] || kinds[KindHeavy] == 0 {
		t.Errorf("kinds %v: want mostly short, some questions and a few heavy", kinds)
	}
	if distinct < 0.2 || distinct > 0.8 {
		t.Errorf("%.2f of the log is distinct queries: a search log repeats some and not all", distinct)
	}
}
