package focus

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/text"
)

// PageText is a page as relevance sees it: title, visible text, URL and language. Its
// analyzed terms are computed once per analyzer and kept, since several topics and rules
// read them. It is not safe for concurrent use.
type PageText struct {
	URL, Title, Body string
	Lang             string // a language text stems ("en", "pt", "es", "fr") or ""

	terms_ map[analyzerKey][]string
	tfs    map[analyzerKey]text.Vector
}

// NewPageText prepares a page for judging; lang "" detects the language from the text
// (see DetectLang).
func NewPageText(url, title, body, lang string) *PageText {
	lang = text.NormalizeLang(lang)
	if lang == "" {
		lang = detectLangOf(title, body, "")
	}
	return newPageText(url, title, body, lang)
}

// newPageText prepares a page whose language is already decided (as DetectLang decides it):
// a page whose detection found nothing is not scanned again.
func newPageText(url, title, body, lang string) *PageText {
	if !isStemmed(lang) {
		lang = ""
	}
	return &PageText{URL: url, Title: title, Body: body, Lang: lang}
}

// DetectLang is the language sonda assumes for a page: the detected one when detection is
// confident (at least 0.5), else the declared one (the lang attribute or Content-Language,
// which templates often leave at "en" whatever the text), else the detected one.
func DetectLang(body, declared string) string {
	detected, conf := text.DetectLanguage(body)
	return chooseLang(detected, conf, declared)
}

// detectLangOf is DetectLang(title + "\n" + body, declared), without making that string (a
// copy of a page's text, 9 % of what a crawl allocated).
func detectLangOf(title, body, declared string) string {
	detected, conf := text.DetectLanguageOf(title, body)
	return chooseLang(detected, conf, declared)
}

func chooseLang(detected string, conf float64, declared string) string {
	declared = text.NormalizeLang(declared)
	switch {
	case detected != "" && conf >= 0.5:
		return detected
	case declared != "":
		return declared
	}
	return detected
}

func (p *PageText) terms(stemmer, lang string) []string {
	k := analyzerKey{lang, stemmer}
	if t, ok := p.terms_[k]; ok {
		return t
	}
	if p.terms_ == nil {
		p.terms_ = map[analyzerKey][]string{}
	}
	a := analyzerFor(lang, stemmer)
	t := a.AppendTerms(a.Terms(p.Title), p.Body)
	p.terms_[k] = t
	return t
}

func (p *PageText) tf(stemmer, lang string) text.Vector {
	k := analyzerKey{lang, stemmer}
	if v, ok := p.tfs[k]; ok {
		return v
	}
	if p.tfs == nil {
		p.tfs = map[analyzerKey]text.Vector{}
	}
	v := text.TF(p.terms(stemmer, lang))
	p.tfs[k] = v
	return v
}

// Cosine is the seed 001 post-score of a page for the topic: the cosine between the
// topic's vector and the page's term frequencies (title and text), both analyzed in the
// page's language when the topic has that language, else in the topic's primary language.
func (t *Topic) Cosine(p *PageText) float64 {
	v, lang := t.Vector(p.Lang)
	if v == nil {
		return 0
	}
	return text.Cosine(v, p.tf(t.Stemmer, lang))
}

// TextCosine is the cosine between the topic and a short text (an anchor, a link's
// context) in lang. Link strategies call it several times per link, so it counts terms by
// sorting a pooled slice instead of building a vector.
func (t *Topic) TextCosine(s, lang string) float64 {
	if s == "" {
		return 0
	}
	v, l := t.Vector(lang)
	if v == nil {
		return 0
	}
	buf := termBufs.Get().(*[]string)
	defer termBufs.Put(buf)
	terms := analyzerFor(l, t.Stemmer).AppendTerms((*buf)[:0], s)
	*buf = terms
	if len(terms) == 0 {
		return 0
	}
	sort.Strings(terms)
	var dot, sq float64
	for i := 0; i < len(terms); {
		j := i + 1
		for j < len(terms) && terms[j] == terms[i] {
			j++
		}
		n := float64(j - i)
		sq += n * n
		dot += n * v[terms[i]]
		i = j
	}
	return min(dot/(t.norm(l)*math.Sqrt(sq)), 1)
}

var termBufs = sync.Pool{New: func() any { return new([]string) }}

// norm is the length of the topic's vector for lang, computed once.
func (t *Topic) norm(lang string) float64 {
	if n, ok := t.norms.Load(lang); ok {
		return n.(float64)
	}
	n := t.vectors[lang].Norm()
	t.norms.Store(lang, n)
	return n
}

// Judgment is the verdict on one page.
type Judgment struct {
	Score    float64  // relevance in [0, 1]: the best topic's score
	Relevant bool     // some topic found the page relevant
	Topics   []string // the topics that found it relevant
	Cosine   float64  // the best topic cosine (the seed 001 post-score), whatever decided Score
	Lang     string
	Rule     string // the rule that decided, when one did
}

// judge applies the topic to a page: score = the page model's probability when a model is
// given, else the cosine; relevant = score ≥ threshold; then the rules: an exclude rule that
// matches or a require rule that does not makes the page irrelevant with score 0, a
// relevant rule that matches makes it relevant with at least the threshold as score.
func (t *Topic) judge(p *PageText, model *PageModel) (score float64, relevant bool, cos float64, rule string) {
	cos = t.Cosine(p)
	score, threshold := cos, t.Threshold
	if model != nil {
		score, threshold = model.Probability(p), model.Threshold
	}
	relevant = score >= threshold
	for _, r := range t.Rules {
		m := r.matches(p, t)
		switch {
		case r.Action == ActionExclude && m, r.Action == ActionRequire && !m:
			return 0, false, cos, r.String()
		case r.Action == ActionRelevant && m && !relevant:
			score, relevant, rule = max(score, threshold), true, r.String()
		}
	}
	return score, relevant, cos, rule
}

// Judge is a set of topics (and optionally a trained page model) that judges pages.
type Judge struct {
	Topics []*Topic
	Model  *PageModel // when set, its probability is every topic's score
	// Truth, when set, decides every page it knows instead (score 1 or 0, relevant to
	// Topics[0]): the perfect classifier evaluations compare crawlers with.
	Truth Truth
}

// Truth knows which pages are relevant: the ground truth of an evaluation web.
type Truth interface {
	Relevant(url string) (relevant, known bool)
}

// NewTruthRelevance returns a relevance analyzer whose verdicts are truth's, for topic: with
// best-first it is the perfect-classifier oracle a focused crawler is measured against.
// Pages truth does not know are irrelevant.
func NewTruthRelevance(topic *Topic, truth Truth) *Relevance {
	return &Relevance{judge: &Judge{Topics: []*Topic{topic}, Truth: truth}, recent: newMemo[*crawl.Document, Judgment](1024)}
}

// Judge scores one page against every topic; the best topic's score is the page's.
func (j *Judge) Judge(p *PageText) Judgment {
	out := Judgment{Lang: p.Lang}
	if j.Truth != nil && len(j.Topics) > 0 {
		if rel, _ := j.Truth.Relevant(p.URL); rel {
			out.Score, out.Relevant, out.Topics = 1, true, []string{j.Topics[0].Name}
		}
		return out
	}
	topics := j.Topics
	if len(topics) == 0 && j.Model != nil {
		topics = []*Topic{j.Model.Topic()}
	}
	for _, t := range topics {
		score, relevant, cos, rule := t.judge(p, j.Model)
		out.Score = max(out.Score, score)
		out.Cosine = max(out.Cosine, cos)
		if relevant {
			out.Relevant = true
			out.Topics = append(out.Topics, t.Name)
		}
		if rule != "" || out.Rule == "" && !relevant {
			out.Rule = rule
		}
	}
	out.Score = min(max(out.Score, 0), 1)
	return out
}

// Relevance is the crawl.Analyzer that judges every fetched page: it sets the record's
// Relevance (0..1), Relevant and Topics, and its Lang when the text says more clearly than
// the markup which language the page is in. Link scorers read the judgment of a page
// they score links from through JudgmentOf.
type Relevance struct {
	judge *Judge
	// recent holds the judgments of the last documents analyzed: links are scored right
	// after their page is analyzed, on the same worker, so a window a few times the
	// crawl's concurrency always holds the page being scored.
	recent *memo[*crawl.Document, Judgment]

	judged, relevant atomic.Int64
	observers        []Observer

	// mu guards judge.Model, which self-training replaces during the crawl.
	mu   sync.RWMutex
	self *selfTrainer
}

// Observer learns from judged pages: the MLP's training stage and the online learner
// implement it. Observe runs on the crawl worker that judged the page.
type Observer interface {
	Observe(d *crawl.Document, j Judgment)
}

// NewRelevance returns the relevance analyzer for the given topics and optional page
// model; at least one of them is needed.
func NewRelevance(topics []*Topic, model *PageModel) (*Relevance, error) {
	if len(topics) == 0 && model == nil {
		return nil, fmt.Errorf("focus: relevance needs a topic (--topic FILE) or a page model (--page-model FILE)")
	}
	return &Relevance{judge: &Judge{Topics: topics, Model: model}, recent: newMemo[*crawl.Document, Judgment](1024)}, nil
}

// AddObserver registers an observer of every judged page.
func (r *Relevance) AddObserver(o Observer) { r.observers = append(r.observers, o) }

// Judge exposes the topics and model.
func (r *Relevance) Judge() *Judge { return r.judge }

// Name implements crawl.Analyzer.
func (r *Relevance) Name() string { return "relevance" }

// Analyze implements crawl.Analyzer.
func (r *Relevance) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Text == "" && d.Page == nil {
		return nil
	}
	title, lang := docLang(d)
	p := newPageText(d.Item.URL, title, d.Text, lang)
	r.mu.RLock()
	j := r.judge.Judge(p)
	r.mu.RUnlock()
	if r.self != nil {
		r.self.observe(r, p, j.Score)
	}
	if lang != "" {
		d.Record.Lang = lang
	}
	score, rel := j.Score, j.Relevant
	d.Record.Relevance, d.Record.Relevant = &score, &rel
	d.Record.Topics = j.Topics
	r.recent.put(d, j)
	r.judged.Add(1)
	if rel {
		r.relevant.Add(1)
	}
	for _, o := range r.observers {
		o.Observe(d, j)
	}
	return nil
}

// Harvest is the running count of judged and relevant pages of this process.
func (r *Relevance) Harvest() (relevant, judged int64) { return r.relevant.Load(), r.judged.Load() }

// JudgmentOf returns the judgment of a recently analyzed document, for link scorers that
// score its links; ok is false when it is unknown (then read d.Record).
func (r *Relevance) JudgmentOf(d *crawl.Document) (Judgment, bool) { return r.recent.get(d) }

// topicNames lists topic names for messages.
func topicNames(ts []*Topic) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// Language is a crawl.Analyzer that sets every page's Lang from its text (DetectLang),
// for crawls without a topic; the Relevance analyzer does the same for focused crawls.
type Language struct{}

// Name implements crawl.Analyzer.
func (Language) Name() string { return "language" }

// Analyze implements crawl.Analyzer.
func (Language) Analyze(_ context.Context, d *crawl.Document) error {
	if d.Text == "" {
		return nil
	}
	if _, lang := docLang(d); lang != "" {
		d.Record.Lang = lang
	}
	return nil
}

// docLang returns a fetched document's title and the language DetectLang gives its title
// and text, against the language its record declares.
func docLang(d *crawl.Document) (title, lang string) {
	if d.Page != nil {
		title = d.Page.Title
	}
	return title, detectLangOf(title, d.Text, d.Record.Lang)
}
