package focus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/text"
	"github.com/sonda-search/sonda/topics"
)

// DefaultThreshold is the relevance a page needs to count as relevant when its topic file
// sets none. The seed 001 thesis ranks pages by cosine and sets no threshold; 0.2 is where
// a page starts to be mostly about the topic's keywords rather than mentioning one in
// passing (a page that uses "power" and "energy" a few times among hundreds of other words
// scores about 0.05 against the thesis vocabulary; a page about reactors, 0.4 to 0.7).
const DefaultThreshold = 0.2

// Topic is what a focused crawl looks for: weighted keywords in one or more languages
// and/or example pages, a relevance threshold and optional rules. Build one with
// LoadTopic or ParseTopic.
type Topic struct {
	Name        string
	Description string
	Threshold   float64
	Stemmer     string                        // text.StemSnowball or text.StemPorter
	Keywords    map[string]map[string]float64 // language → keyword as written → weight
	Examples    []string                      // example files, resolved
	Rules       []Rule

	langs   []string               // languages with a vector, the primary first
	vectors map[string]text.Vector // language → analyzed topic vector
	norms   sync.Map               // language → |vector|, filled on first use
}

// topicFile is the YAML form of a topic (see topics/*.yaml for commented examples).
type topicFile struct {
	Name          string                        `yaml:"name"`
	Description   string                        `yaml:"description"`
	Threshold     *float64                      `yaml:"threshold"`
	Stemmer       string                        `yaml:"stemmer"`
	Keywords      map[string]map[string]float64 `yaml:"keywords"`
	Examples      []string                      `yaml:"examples"`
	ExampleWeight *float64                      `yaml:"example-weight"`
	ExampleTerms  int                           `yaml:"example-terms"`
	Rules         []ruleFile                    `yaml:"rules"`
}

// LoadTopic reads a topic file. Example paths in it are relative to the file's directory.
// A bare name that is not a file ("nuclear", "geo") names a built-in topic (package topics).
func LoadTopic(path string) (*Topic, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(path, `/\.`) {
		if builtin, ok := topics.Read(path); ok {
			return ParseTopic(builtin, ".")
		}
		return nil, fmt.Errorf("topic: %s is neither a file nor a built-in topic (%s)", path, strings.Join(topics.Names(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("topic: %w", err)
	}
	t, err := ParseTopic(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", path, err)
	}
	return t, nil
}

// ParseTopic parses a topic's YAML; dir resolves relative example paths.
func ParseTopic(b []byte, dir string) (*Topic, error) {
	var f topicFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w (see topics/nuclear.yaml for the format)", err)
	}
	t := &Topic{Name: strings.TrimSpace(f.Name), Description: f.Description, Threshold: DefaultThreshold,
		Stemmer: f.Stemmer, Keywords: map[string]map[string]float64{}, vectors: map[string]text.Vector{}}
	if t.Name == "" {
		return nil, errors.New("name: a topic needs a name (it labels relevant pages)")
	}
	if f.Threshold != nil {
		t.Threshold = *f.Threshold
	}
	if t.Threshold <= 0 || t.Threshold > 1 {
		return nil, fmt.Errorf("threshold: must be in (0, 1], got %v", t.Threshold)
	}
	switch t.Stemmer {
	case "":
		t.Stemmer = text.StemSnowball
	case text.StemSnowball, text.StemPorter, text.StemNone:
	default:
		return nil, fmt.Errorf("stemmer: %q is not snowball, porter or none", t.Stemmer)
	}
	for lang, kws := range f.Keywords {
		code := text.NormalizeLang(lang)
		if code == "" {
			return nil, fmt.Errorf("keywords: %q is not a language code", lang)
		}
		v := text.Vector{}
		written := map[string]float64{}
		for kw, w := range kws {
			if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("keywords.%s.%s: weight must be positive, got %v", lang, kw, w)
			}
			terms := t.analyzer(code).Terms(kw)
			if len(terms) == 0 {
				return nil, fmt.Errorf("keywords.%s.%q: nothing left after analysis (a stop word?)", lang, kw)
			}
			written[kw] = w
			for _, term := range terms {
				v[term] += w
			}
		}
		t.Keywords[code] = written
		t.vectors[code] = v
	}
	weight := 0.5
	if f.ExampleWeight != nil {
		weight = *f.ExampleWeight
	}
	if weight < 0 || weight > 1 {
		return nil, fmt.Errorf("example-weight: must be in [0, 1], got %v", weight)
	}
	if err := t.addExamples(f.Examples, dir, weight, f.ExampleTerms); err != nil {
		return nil, err
	}
	if len(t.vectors) == 0 && len(f.Rules) == 0 {
		return nil, errors.New("keywords or examples: a topic needs at least one keyword or example page")
	}
	for i, rf := range f.Rules {
		r, err := rf.compile(t)
		if err != nil {
			return nil, fmt.Errorf("rules[%d]: %w", i, err)
		}
		t.Rules = append(t.Rules, r)
	}
	t.langs = primaryFirst(t.vectors)
	return t, nil
}

// primaryFirst orders the languages with vectors: English first when present (the
// thesis vocabulary is English and most topic files will lead with it), then by code.
func primaryFirst(vectors map[string]text.Vector) []string {
	langs := make([]string, 0, len(vectors))
	for l := range vectors {
		langs = append(langs, l)
	}
	sort.Slice(langs, func(i, j int) bool {
		if (langs[i] == "en") != (langs[j] == "en") {
			return langs[i] == "en"
		}
		return langs[i] < langs[j]
	})
	return langs
}

// addExamples folds example pages into the topic: per language, the centroid of the
// examples' unit-length term vectors, cut to its heaviest terms, is mixed with the keyword
// vector as (1-weight)·keywords/|keywords| + weight·centroid/|centroid|.
func (t *Topic) addExamples(patterns []string, dir string, weight float64, keep int) error {
	if keep <= 0 {
		keep = 200
	}
	centroids := map[string]text.Vector{}
	for _, p := range patterns {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		files, err := filepath.Glob(p)
		if err != nil || len(files) == 0 {
			return fmt.Errorf("examples: %q matches no file", p)
		}
		for _, file := range files {
			title, body, err := ReadDocument(file)
			if err != nil {
				return fmt.Errorf("examples: %w", err)
			}
			all := title + "\n" + body
			lang, _ := text.DetectLanguage(all)
			if !isStemmed(lang) {
				lang = "en"
			}
			tf := text.TF(t.analyzer(lang).Terms(all)).Normalized()
			if tf == nil {
				return fmt.Errorf("examples: %s has no words", file)
			}
			centroids[lang] = centroids[lang].Add(tf, 1)
			t.Examples = append(t.Examples, file)
		}
	}
	for lang, c := range centroids {
		c = topVector(c, keep).Normalized()
		kw := t.vectors[lang].Normalized()
		if kw == nil {
			t.vectors[lang] = c
			continue
		}
		t.vectors[lang] = kw.Scaled(1-weight).Add(c, weight)
	}
	return nil
}

func topVector(v text.Vector, n int) text.Vector {
	out := text.Vector{}
	for _, term := range v.Top(n) {
		out[term.Term] = term.Weight
	}
	return out
}

func isStemmed(lang string) bool { return slices.Contains(text.Languages, lang) }

// Languages are the languages the topic has a vector for, the primary one first.
func (t *Topic) Languages() []string { return t.langs }

// Vector returns the topic's term vector for a page in lang, and the language whose
// analyzer the page must be read with: lang itself when the topic has keywords or examples
// in it, otherwise the topic's primary language (an English topic still finds "nuclear" on
// a page of another language).
func (t *Topic) Vector(lang string) (text.Vector, string) {
	if v, ok := t.vectors[lang]; ok {
		return v, lang
	}
	if len(t.langs) == 0 {
		return nil, lang
	}
	return t.vectors[t.langs[0]], t.langs[0]
}

// analyzer returns the shared analyzer for lang with the topic's stemmer.
func (t *Topic) analyzer(lang string) *text.Analyzer { return analyzerFor(lang, t.Stemmer) }

var analyzers sync.Map // analyzerKey → *text.Analyzer

type analyzerKey struct{ lang, stemmer string }

// analyzerFor returns one shared analyzer per language and stemmer, so their memos of
// analyzed words are shared by every topic, scorer and worker.
func analyzerFor(lang, stemmer string) *text.Analyzer {
	k := analyzerKey{lang, stemmer}
	if a, ok := analyzers.Load(k); ok {
		return a.(*text.Analyzer)
	}
	a, _ := analyzers.LoadOrStore(k, text.NewAnalyzerOptions(text.Options{Lang: lang, Stemmer: stemmer}))
	return a.(*text.Analyzer)
}

// ReadDocument reads an example or training file: HTML (by extension or content) is parsed
// for its title and visible text; anything else is plain text.
func ReadDocument(path string) (title, body string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	ext := strings.ToLower(filepath.Ext(path))
	head := bytes.ToLower(b[:min(len(b), 512)])
	if ext == ".html" || ext == ".htm" || ext == ".xhtml" || bytes.Contains(head, []byte("<html")) || bytes.Contains(head, []byte("<!doctype html")) {
		p, err := parse.Parse(b, "file:///"+filepath.ToSlash(path), parse.Options{})
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", path, err)
		}
		return p.Title, p.Text(), nil
	}
	return "", string(b), nil
}

// Rule is a keyword or regular-expression rule of a topic.
type Rule struct {
	Field   string // "text" (title and body), "title" or "url"
	Action  string // "require", "exclude" or "relevant"
	pattern *regexp.Regexp
	terms   map[string][][]string // language → each entry of terms, analyzed (a phrase has several)
	min     int
	source  string
}

type ruleFile struct {
	Pattern string   `yaml:"pattern"`
	Terms   []string `yaml:"terms"`
	Min     int      `yaml:"min"`
	Field   string   `yaml:"field"`
	Action  string   `yaml:"action"`
}

// Rule actions.
const (
	ActionRequire  = "require"  // a page the rule does not match is not relevant
	ActionExclude  = "exclude"  // a page the rule matches is not relevant
	ActionRelevant = "relevant" // a page the rule matches is relevant
)

func (rf ruleFile) compile(t *Topic) (Rule, error) {
	r := Rule{Field: rf.Field, Action: rf.Action, min: max(rf.Min, 1)}
	if r.Field == "" {
		r.Field = "text"
	}
	if r.Field != "text" && r.Field != "title" && r.Field != "url" {
		return r, fmt.Errorf("field: %q is not text, title or url", r.Field)
	}
	switch r.Action {
	case ActionRequire, ActionExclude, ActionRelevant:
	default:
		return r, fmt.Errorf("action: %q is not require, exclude or relevant", r.Action)
	}
	switch {
	case rf.Pattern != "" && len(rf.Terms) > 0:
		return r, errors.New("give pattern or terms, not both")
	case rf.Pattern != "":
		re, err := regexp.Compile(rf.Pattern)
		if err != nil {
			return r, fmt.Errorf("pattern: %w", err)
		}
		r.pattern, r.source = re, rf.Pattern
	case len(rf.Terms) > 0:
		r.terms = map[string][][]string{}
		for _, lang := range append(text.Languages, "") {
			for _, w := range rf.Terms {
				if terms := t.analyzer(lang).Terms(w); len(terms) > 0 {
					r.terms[lang] = append(r.terms[lang], terms)
				}
			}
		}
		if len(r.terms["en"]) == 0 && len(r.terms[""]) == 0 {
			return r, fmt.Errorf("terms: nothing left of %q after analysis (stop words?)", rf.Terms)
		}
		r.source = strings.Join(rf.Terms, ", ")
		if r.min > len(rf.Terms) {
			return r, fmt.Errorf("min: %d is more than the %d terms given", r.min, len(rf.Terms))
		}
	default:
		return r, errors.New("a rule needs a pattern or terms")
	}
	return r, nil
}

// String describes the rule for logs and explanations.
func (r Rule) String() string {
	if r.pattern != nil {
		return fmt.Sprintf("%s if %s matches /%s/", r.Action, r.Field, r.source)
	}
	return fmt.Sprintf("%s if %s has %d of [%s]", r.Action, r.Field, r.min, r.source)
}

// matches applies the rule to a page; terms are the page's analyzed terms for the field
// "text" in lang, computed lazily by the caller.
func (r Rule) matches(p *PageText, t *Topic) bool {
	var s string
	switch r.Field {
	case "title":
		s = p.Title
	case "url":
		s = p.URL
	default:
		s = p.Title + "\n" + p.Body
	}
	if r.pattern != nil {
		return r.pattern.MatchString(s)
	}
	lang := p.Lang
	if r.terms[lang] == nil {
		lang = ""
	}
	var terms []string
	if r.Field == "text" {
		terms = p.terms(t.Stemmer, lang)
	} else {
		terms = analyzerFor(lang, t.Stemmer).Terms(s)
	}
	found := 0
	for _, entry := range r.terms[lang] {
		if containsPhrase(terms, entry) {
			if found++; found >= r.min {
				return true
			}
		}
	}
	return false
}

// containsPhrase reports whether phrase occurs in terms as consecutive terms. Both went
// through the same analyzer, so stop words are gone from both sides alike ("three mile
// island" matches "Three Mile Island" and not a page that only says "island").
func containsPhrase(terms, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(terms); i++ {
		if terms[i] == phrase[0] && slices.Equal(terms[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}
