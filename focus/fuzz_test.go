package focus

import (
	"strings"
	"testing"
)

// FuzzParseTopic: any topic file either parses into a usable topic or fails with an error;
// it never panics, and a parsed topic scores any text within [0, 1].
func FuzzParseTopic(f *testing.F) {
	f.Add(thesisTopic)
	f.Add("name: x\nkeywords: {pt: {urânio: 2, 'energia nuclear': 1}}\nrules: [{terms: [a, b], min: 2, action: relevant}]")
	f.Add("name: x\nthreshold: 0.5\nkeywords: {en: {a: .nan}}")
	f.Add("name: y\nrules: [{pattern: '(?i)x+', field: url, action: exclude}]")
	f.Fuzz(func(t *testing.T, y string) {
		topic, err := ParseTopic([]byte(y), t.TempDir())
		if err != nil {
			return
		}
		j := (&Judge{Topics: []*Topic{topic}}).Judge(NewPageText("http://a.test/x", "t", y, ""))
		if j.Score < 0 || j.Score > 1 || j.Cosine < 0 || j.Cosine > 1+1e-9 {
			t.Fatalf("scores out of range: %+v", j)
		}
	})
}

// FuzzReadJudgments: any form either reads or fails with an error naming the line.
func FuzzReadJudgments(f *testing.F) {
	f.Add("yes http://a/\nno http://b/\n# c\n")
	f.Add("? http://a/\n")
	f.Add("sim http://a/\nnão http://b/")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadJudgments(strings.NewReader(s))
		if err != nil {
			if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for u := range m {
			if u == "" || strings.ContainsAny(u, "\n") {
				t.Fatalf("bad URL %q", u)
			}
		}
	})
}
