package focus

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/text"
)

// thesisTopic is seed 001's Table 1 vocabulary, stemmed with Porter as in the thesis.
const thesisTopic = `
name: nuclear
stemmer: porter
keywords:
  en: {nuclear: 10, energy: 5, power: 5, reactor: 2, uranium: 2, atomic: 1, electric: 1, technology: 1, physics: 1, fuel: 1}
`

func mustTopic(t testing.TB, y string) *Topic {
	t.Helper()
	topic, err := ParseTopic([]byte(y), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return topic
}

// TestThesisVocabularyWeights: the keywords of Table 1 become a vector of Porter stems
// with the table's weights.
func TestThesisVocabularyWeights(t *testing.T) {
	topic := mustTopic(t, thesisTopic)
	v, lang := topic.Vector("en")
	want := text.Vector{"nuclear": 10, "energi": 5, "power": 5, "reactor": 2, "uranium": 2,
		"atom": 1, "electr": 1, "technologi": 1, "physic": 1, "fuel": 1}
	if lang != "en" || len(v) != len(want) {
		t.Fatalf("vector %v (%s), want %v", v, lang, want)
	}
	for term, w := range want {
		if v[term] != w {
			t.Errorf("weight of %q = %v, want %v", term, v[term], w)
		}
	}
	if topic.Threshold != DefaultThreshold {
		t.Errorf("threshold %v, want the default %v", topic.Threshold, DefaultThreshold)
	}
	// A page in a language the topic has no keywords for is read in the topic's language.
	if _, l := topic.Vector("pt"); l != "en" {
		t.Errorf("Vector(pt) falls back to %q, want en", l)
	}
}

// TestThesisCosine works Eq. 5 by hand: the page "Nuclear power plants use uranium fuel.
// Nuclear energy." has Porter terms nuclear×2, power, plant, us, uranium, fuel, energi, so
// v·p = 10·2 + 5 + 2 + 1 + 5 = 33, |v| = √163, |p| = √10 and sim = 33/√1630.
func TestThesisCosine(t *testing.T) {
	topic := mustTopic(t, thesisTopic)
	p := NewPageText("http://x.test/", "", "Nuclear power plants use uranium fuel. Nuclear energy.", "en")
	want := 33 / math.Sqrt(1630)
	if got := topic.Cosine(p); math.Abs(got-want) > 1e-12 {
		t.Errorf("cosine = %.6f, want %.6f", got, want)
	}
	if got := topic.TextCosine("nuclear", "en"); math.Abs(got-10/math.Sqrt(163)) > 1e-12 {
		t.Errorf("cosine of the word nuclear = %v", got)
	}
	if topic.TextCosine("", "en") != 0 || topic.TextCosine("cake recipes", "en") != 0 {
		t.Error("text without topic words must score 0")
	}
}

func TestShippedTopics(t *testing.T) {
	for _, name := range []string{"nuclear", "geo"} {
		topic, err := LoadTopic(filepath.Join("..", "topics", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(topic.Languages()) != 2 || topic.Languages()[0] != "en" {
			t.Errorf("%s: languages %v, want en first, then pt", name, topic.Languages())
		}
	}
	nuclear, err := LoadTopic("nuclear") // the built-in copy
	if err != nil || len(nuclear.Keywords["en"]) != 10 {
		t.Fatalf("built-in nuclear topic: %v", err)
	}
	if _, err := LoadTopic("astrology"); err == nil || !strings.Contains(err.Error(), "geo, nuclear") {
		t.Errorf("an unknown bare name must list the built-in topics: %v", err)
	}
	pt := NewPageText("", "Usinas nucleares", "A energia nuclear das usinas de Angra usa urânio como combustível.", "")
	if pt.Lang != "pt" || nuclear.Cosine(pt) < 0.5 {
		t.Errorf("Portuguese page: lang %q, cosine %.2f", pt.Lang, nuclear.Cosine(pt))
	}
}

func TestParseTopicErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{`keywords: {en: {a: 1}}`, "name"},
		{`name: x`, "at least one keyword"},
		{`name: x
keywords: {en: {nuclear: -1}}`, "positive"},
		{`name: x
keywords: {en: {the: 1}}`, "stop word"},
		{`name: x
threshold: 2
keywords: {en: {nuclear: 1}}`, "threshold"},
		{`name: x
stemmer: lancaster
keywords: {en: {nuclear: 1}}`, "stemmer"},
		{`name: x
keywords: {en: {nuclear: 1}}
rules: [{pattern: "(", action: require}]`, "pattern"},
		{`name: x
keywords: {en: {nuclear: 1}}
rules: [{terms: [a], action: maybe}]`, "action"},
		{`name: x
keywords: {en: {nuclear: 1}}
examples: [nothing-here/*.html]`, "matches no file"},
		{`name: x
unknown: 1`, "unknown"},
	}
	for _, tt := range tests {
		_, err := ParseTopic([]byte(tt.yaml), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseTopic(%q) error %v, want one mentioning %q", tt.yaml, err, tt.want)
		}
	}
}

func TestTopicExamples(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.html"), []byte(`<html><title>Reactor coolant</title><p>The reactor coolant loop removes fission heat from the core.</p></html>`), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("Coolant pumps keep the reactor core below its design temperature."), 0o644)
	topic, err := ParseTopic([]byte("name: coolant\nexamples: ['*.html', '*.txt']\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(topic.Examples) != 2 {
		t.Fatalf("examples %v", topic.Examples)
	}
	on := NewPageText("", "", "How coolant flows through a reactor core", "en")
	off := NewPageText("", "", "How butter melts in a warm pan", "en")
	if c := topic.Cosine(on); c < 0.3 || topic.Cosine(off) != 0 {
		t.Errorf("example topic: on-topic %.2f, off-topic %.2f", c, topic.Cosine(off))
	}
}

func TestRules(t *testing.T) {
	topic := mustTopic(t, `
name: nuclear
threshold: 0.2
keywords: {en: {nuclear: 1, reactor: 1}}
rules:
  - {pattern: "(?i)weapon", action: exclude}
  - {terms: [fukushima, chernobyl, three mile island], action: relevant}
  - {field: url, pattern: "^https://", action: require}
`)
	j := &Judge{Topics: []*Topic{topic}}
	tests := []struct {
		url, body string
		relevant  bool
	}{
		{"https://a.test/", "The nuclear reactor restarted.", true},
		{"https://a.test/", "The nuclear reactor is not a weapon.", false},
		{"https://a.test/", "Cleanup at Chernobyl continues, say officials in a long statement about many things.", true},
		{"http://a.test/", "The nuclear reactor restarted.", false},
		// A phrase among the terms matches as a phrase, not word by word.
		{"https://a.test/", "Officials studied the accident at Three Mile Island for years, in a long statement about many things.", true},
		{"https://a.test/", "An island holiday: three beaches, a mile of sand and many other things to say.", false},
		{"https://a.test/", "Cake recipes.", false},
	}
	for _, tt := range tests {
		got := j.Judge(NewPageText(tt.url, "", tt.body, "en"))
		if got.Relevant != tt.relevant {
			t.Errorf("%s %q: relevant %v (score %.2f, rule %q), want %v", tt.url, tt.body, got.Relevant, got.Score, got.Rule, tt.relevant)
		}
		if got.Relevant && got.Score < topic.Threshold || !got.Relevant && got.Rule != "" && got.Score != 0 {
			t.Errorf("%q: score %.2f inconsistent with the verdict", tt.body, got.Score)
		}
	}
}

func TestJudgeSeveralTopics(t *testing.T) {
	nuclear := mustTopic(t, "name: nuclear\nkeywords: {en: {nuclear: 1, reactor: 1}}")
	geo := mustTopic(t, "name: geo\nkeywords: {en: {map: 1, shapefile: 1}}")
	j := &Judge{Topics: []*Topic{nuclear, geo}}
	got := j.Judge(NewPageText("", "", "A map of every nuclear reactor, as a shapefile.", "en"))
	if !got.Relevant || len(got.Topics) != 2 {
		t.Errorf("a page on both topics: %+v", got)
	}
	got = j.Judge(NewPageText("", "", "Download the shapefile of the map.", "en"))
	if !got.Relevant || len(got.Topics) != 1 || got.Topics[0] != "geo" {
		t.Errorf("a geo page: %+v", got)
	}
}
