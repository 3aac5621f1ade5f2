package focus

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// Agreement is the contingency table of two judges' yes/no verdicts on the same pages
// (seed 001, Table 4): A both said yes, B only judge 1 did, C only judge 2 did, D both said no.
type Agreement struct{ A, B, C, D int }

// N is the number of pages judged.
func (t Agreement) N() int { return t.A + t.B + t.C + t.D }

// Precision is the share of pages both judges found relevant, Pr = a/n (Eq. 7).
func (t Agreement) Precision() float64 { return frac(t.A, t.N()) }

// Observed is the judges' observed agreement P(A) = (a+d)/n (Eq. 8).
func (t Agreement) Observed() float64 { return frac(t.A+t.D, t.N()) }

// Expected is the agreement expected by chance, P(E) = p0/n·q0/n + p1/n·q1/n (Eq. 9), where
// q1, q0 are judge 1's yes and no totals and p1, p0 judge 2's.
func (t Agreement) Expected() float64 {
	n := float64(t.N())
	if n == 0 {
		return 0
	}
	q1, q0 := float64(t.A+t.B), float64(t.C+t.D)
	p1, p0 := float64(t.A+t.C), float64(t.B+t.D)
	return p0/n*q0/n + p1/n*q1/n
}

// Kappa is Cohen's kappa, K = (P(A) − P(E)) / (1 − P(E)) (Eq. 10); 1 when the judges
// agree on everything, including the degenerate case where chance explains it all.
func (t Agreement) Kappa() float64 {
	pe := t.Expected()
	if pe == 1 {
		return 1
	}
	return (t.Observed() - pe) / (1 - pe)
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Tabulate builds the table from two judges' verdicts by URL. Every page must have been
// judged by both.
func Tabulate(judge1, judge2 map[string]bool) (Agreement, error) {
	var t Agreement
	var missing []string
	for u, y1 := range judge1 {
		y2, ok := judge2[u]
		if !ok {
			missing = append(missing, u)
			continue
		}
		switch {
		case y1 && y2:
			t.A++
		case y1:
			t.B++
		case y2:
			t.C++
		default:
			t.D++
		}
	}
	for u := range judge2 {
		if _, ok := judge1[u]; !ok {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return t, fmt.Errorf("focus: %d pages were judged by one judge only (first: %s); both files must judge the same sample", len(missing), missing[0])
	}
	return t, nil
}

// SamplePages draws n pages at random without replacement (all of them when there are
// fewer), in a fixed order for a given seed.
func SamplePages(urls []string, n int, seed uint64) []string {
	out := append([]string(nil), urls...)
	sort.Strings(out)
	rng := rand.New(rand.NewPCG(seed, 0x5a3e))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

// WriteJudgmentForm writes the form a judge fills in: one line per page, "? URL", followed
// by a comment with the page's title. The judge replaces "?" with "yes" or "no".
func WriteJudgmentForm(w io.Writer, question string, urls, titles []string) error {
	fmt.Fprintf(w, "# %s\n# Replace ? with yes or no on each line; lines starting with # are ignored.\n", question)
	for i, u := range urls {
		title := ""
		if i < len(titles) {
			title = strings.Join(strings.Fields(titles[i]), " ")
		}
		if _, err := fmt.Fprintf(w, "? %s\n# %s\n", u, title); err != nil {
			return err
		}
	}
	return nil
}

// ReadJudgments reads a filled-in form: lines "yes URL" or "no URL" (also y/n, 1/0,
// sim/não, true/false); "#" comments and blank lines are skipped. A line still "?" is an
// error naming it, so an unfinished form is not scored.
func ReadJudgments(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		verdict, url, ok := strings.Cut(s, " ")
		url = strings.TrimSpace(url)
		if !ok || url == "" {
			return nil, fmt.Errorf("line %d: want \"yes URL\" or \"no URL\", got %q", line, s)
		}
		var yes bool
		switch strings.ToLower(verdict) {
		case "yes", "y", "1", "true", "sim", "s":
			yes = true
		case "no", "n", "0", "false", "não", "nao":
		case "?":
			return nil, fmt.Errorf("line %d: %s is not judged yet (replace ? with yes or no)", line, url)
		default:
			return nil, fmt.Errorf("line %d: verdict %q is not yes or no", line, verdict)
		}
		if _, dup := out[url]; dup {
			return nil, fmt.Errorf("line %d: %s is judged twice", line, url)
		}
		out[url] = yes
	}
	return out, sc.Err()
}
