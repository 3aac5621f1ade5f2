// Package ireval owns sonda's retrieval evaluation: reading the Cranfield collection,
// ranking metrics (average precision, nDCG), a textbook BM25 baseline, and the runs that
// compare sonda's search with that baseline (`sonda eval retrieval`).
//
// The baseline is written here rather than taken from Bleve on purpose: Bleve 2.6's "bm25"
// scoring differs from BM25 (it takes the square root of term frequencies, squares IDF
// through query normalization, multiplies by a coordination factor and estimates the
// average field length from the size of the term dictionary), so "sonda beats plain BM25"
// is only meaningful against the real formula. The baseline is Robertson's BM25 with
// Lucene's IDF, k1 = 1.2 and b = 0.75, over one field holding title and body, with the
// standard analysis (Unicode words, lowercase, English stop words, no stemming).
package ireval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Doc is one Cranfield abstract.
type Doc struct {
	ID      string // the .I number
	Title   string // .T
	Authors string // .A
	Source  string // .B
	Text    string // .W (it begins with the title again)
}

// Query is one Cranfield query.
type Query struct {
	Num  int    // 1..225: the position of the query in cran.qry, which the judgements use
	ID   string // the .I number as written (001...365, with gaps)
	Text string
}

// Collection is the Cranfield test collection.
type Collection struct {
	Docs    []Doc
	Queries []Query
	// Grades maps a query number to its judged documents and their gains: 4 for grade 1
	// ("complete answer") down to 1 for grade 4 ("minimum interest"). Grade −1 pairs,
	// one per query, are not relevance judgements and are left out.
	Grades map[int]map[string]int
}

// Relevant reports whether doc is relevant to query num (any gain).
func (c *Collection) Relevant(num int, doc string) bool { return c.Grades[num][doc] > 0 }

// LoadCranfield reads cran.all.1400, cran.qry and cranqrel from dir.
func LoadCranfield(dir string) (*Collection, error) {
	c := &Collection{Grades: map[int]map[string]int{}}
	docs, err := readSMART(filepath.Join(dir, "cran.all.1400"))
	if err != nil {
		return nil, err
	}
	for _, r := range docs {
		c.Docs = append(c.Docs, Doc{ID: r.id, Title: r.fields['T'], Authors: r.fields['A'], Source: r.fields['B'], Text: r.fields['W']})
	}
	queries, err := readSMART(filepath.Join(dir, "cran.qry"))
	if err != nil {
		return nil, err
	}
	// The pitfall: .I numbers run 001..365 with gaps, the judgements number the queries
	// 1..225 in order.
	for i, r := range queries {
		c.Queries = append(c.Queries, Query{Num: i + 1, ID: r.id, Text: r.fields['W']})
	}
	path := filepath.Join(dir, "cranqrel")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ireval: %w (the Cranfield collection belongs in ../shared/testdata/cranfield)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("ireval: %s:%d: want query, document and grade, got %q", path, line, sc.Text())
		}
		q, err1 := strconv.Atoi(fields[0])
		grade, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("ireval: %s:%d: %q is not three numbers", path, line, sc.Text())
		}
		if grade < 1 || grade > 4 {
			continue
		}
		if c.Grades[q] == nil {
			c.Grades[q] = map[string]int{}
		}
		c.Grades[q][fields[1]] = 5 - grade
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ireval: %s: %w", path, err)
	}
	if len(c.Docs) == 0 || len(c.Queries) == 0 || len(c.Grades) == 0 {
		return nil, fmt.Errorf("ireval: %s holds %d documents, %d queries and judgements for %d queries: not the Cranfield collection", dir, len(c.Docs), len(c.Queries), len(c.Grades))
	}
	return c, nil
}

type smartRecord struct {
	id     string
	fields map[byte]string
}

// readSMART reads a file in the SMART format: records start with ".I id", fields with a
// line ".X" and run to the next such line.
func readSMART(path string) ([]smartRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ireval: %w (the Cranfield collection belongs in ../shared/testdata/cranfield)", err)
	}
	var out []smartRecord
	var field byte
	var text strings.Builder
	flush := func() {
		if len(out) > 0 && field != 0 {
			out[len(out)-1].fields[field] = strings.Join(strings.Fields(text.String()), " ")
		}
		text.Reset()
	}
	for i, ln := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimRight(string(ln), "\r")
		if len(s) >= 2 && s[0] == '.' && (len(s) == 2 || s[2] == ' ') && strings.ContainsRune("ITABW", rune(s[1])) {
			flush()
			if s[1] == 'I' {
				id := strings.TrimSpace(s[2:])
				if id == "" {
					return nil, fmt.Errorf("ireval: %s:%d: .I without a number", path, i+1)
				}
				out = append(out, smartRecord{id: id, fields: map[byte]string{}})
				field = 0
			} else {
				if len(out) == 0 {
					return nil, fmt.Errorf("ireval: %s:%d: field %s before the first .I", path, i+1, s)
				}
				field = s[1]
			}
			continue
		}
		text.WriteString(s)
		text.WriteByte('\n')
	}
	flush()
	return out, nil
}
