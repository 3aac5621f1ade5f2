package focus

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"

	"gonum.org/v1/gonum/optimize"

	"github.com/sonda-search/sonda/text"
)

// PageModel is a trained page classifier: L2-regularized logistic regression on
// L2-normalized TF-IDF vectors with sublinear term frequency (1 + ln tf), the usual strong
// baseline for topical text classification and what ACHE's relevance classifier does with
// an SVM. Its JSON form is what `sonda train page` writes and `--page-model` reads.
type PageModel struct {
	Kind      string             `json:"kind"` // "sonda-page-model"
	Version   int                `json:"version"`
	Name      string             `json:"name"`      // the topic name pages are labelled with
	Stemmer   string             `json:"stemmer"`   // text stemmer used for every language
	Threshold float64            `json:"threshold"` // probability at which a page is relevant
	Lambda    float64            `json:"lambda"`    // L2 strength it was trained with
	Bias      float64            `json:"bias"`
	Docs      int                `json:"docs"` // training documents
	IDF       map[string]float64 `json:"idf"`
	Weights   map[string]float64 `json:"weights"`
	CV        *CVResult          `json:"cv,omitempty"`

	topic *Topic
}

const pageModelKind = "sonda-page-model"

// Example is a labelled training document.
type Example struct {
	Page     *PageText
	Relevant bool
}

// TrainOptions tune TrainPageModel.
type TrainOptions struct {
	Name      string  // topic name (default "relevant")
	Lambda    float64 // L2 strength on the mean loss (default 1e-3)
	MinDF     int     // terms found in fewer documents are left out (default 2)
	MaxTerms  int     // vocabulary cap, most frequent terms first (default 50,000)
	Threshold float64 // probability threshold (default 0.5)
	Stemmer   string  // default text.StemSnowball
	// Prior is the share of relevant pages expected where the crawl goes (0: unknown).
	// Tune then chooses the threshold for F1 at that share instead of at the examples'
	// share: a crawl meets far fewer relevant pages than a user's examples hold, so
	// false positives that are rare among the examples are common on the web.
	Prior float64
}

func (o *TrainOptions) defaults() {
	if o.Name == "" {
		o.Name = "relevant"
	}
	if o.Lambda <= 0 {
		o.Lambda = 1e-3
	}
	if o.MinDF <= 0 {
		o.MinDF = 2
	}
	if o.MaxTerms <= 0 {
		o.MaxTerms = 50000
	}
	if o.Threshold <= 0 || o.Threshold >= 1 {
		o.Threshold = 0.5
	}
	if o.Stemmer == "" {
		o.Stemmer = text.StemSnowball
	}
}

// TrainPageModel fits a model to labelled examples. Both classes must be present. Classes
// are weighted to contribute equally to the loss, so an unbalanced training set (usually
// far more negatives) does not teach the model to say "no" to everything.
func TrainPageModel(examples []Example, o TrainOptions) (*PageModel, error) {
	o.defaults()
	var pos, neg int
	for _, e := range examples {
		if e.Relevant {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return nil, fmt.Errorf("focus: training needs relevant and irrelevant examples (got %d and %d)", pos, neg)
	}
	var df text.DocFreq
	docs := make([][]string, len(examples))
	for i, e := range examples {
		docs[i] = e.Page.terms(o.Stemmer, e.Page.Lang)
		df.Add(docs[i])
	}
	vocab := vocabulary(&df, o.MinDF, o.MaxTerms)
	m := &PageModel{Kind: pageModelKind, Version: 1, Name: o.Name, Stemmer: o.Stemmer, Threshold: o.Threshold,
		Lambda: o.Lambda, Docs: len(examples), IDF: make(map[string]float64, len(vocab))}
	for _, t := range vocab {
		m.IDF[t] = df.IDF(t)
	}
	index := make(map[string]int, len(vocab))
	for i, t := range vocab {
		index[t] = i
	}
	rows := make([]sparseRow, len(examples))
	ys := make([]float64, len(examples))
	ws := make([]float64, len(examples))
	for i, e := range examples {
		rows[i] = m.features(docs[i], index)
		if e.Relevant {
			ys[i], ws[i] = 1, float64(len(examples))/(2*float64(pos))
		} else {
			ws[i] = float64(len(examples)) / (2 * float64(neg))
		}
	}
	w, bias, err := fitLogistic(rows, ys, ws, len(vocab), o.Lambda)
	if err != nil {
		return nil, err
	}
	m.Bias = bias
	m.Weights = make(map[string]float64, len(vocab))
	for i, t := range vocab {
		if w[i] != 0 {
			m.Weights[t] = w[i]
		}
	}
	return m, nil
}

// vocabulary lists the terms in at least minDF documents, the most frequent maxTerms of
// them, sorted so training is deterministic.
func vocabulary(df *text.DocFreq, minDF, maxTerms int) []string {
	var terms []string
	for t, n := range df.DF {
		if n >= minDF {
			terms = append(terms, t)
		}
	}
	sort.Slice(terms, func(i, j int) bool {
		if df.DF[terms[i]] != df.DF[terms[j]] {
			return df.DF[terms[i]] > df.DF[terms[j]]
		}
		return terms[i] < terms[j]
	})
	if len(terms) > maxTerms {
		terms = terms[:maxTerms]
	}
	sort.Strings(terms)
	return terms
}

type sparseRow struct {
	idx []int
	val []float64
}

// features turns terms into the model's input: sublinear TF times IDF, unit length.
func (m *PageModel) features(terms []string, index map[string]int) sparseRow {
	tf := text.TF(terms)
	var r sparseRow
	var norm float64
	keys := make([]string, 0, len(tf))
	for t := range tf {
		if _, ok := index[t]; ok {
			keys = append(keys, t)
		}
	}
	sort.Strings(keys)
	for _, t := range keys {
		v := (1 + math.Log(tf[t])) * m.IDF[t]
		r.idx = append(r.idx, index[t])
		r.val = append(r.val, v)
		norm += v * v
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for i := range r.val {
			r.val[i] /= norm
		}
	}
	return r
}

// fitLogistic minimizes the weighted mean log loss plus lambda/2·|w|² (the bias is not
// penalized) with L-BFGS.
func fitLogistic(rows []sparseRow, ys, ws []float64, dims int, lambda float64) ([]float64, float64, error) {
	n := float64(len(rows))
	loss := func(x []float64) float64 {
		w, b := x[:dims], x[dims]
		var l float64
		for i, r := range rows {
			z := b
			for k, j := range r.idx {
				z += w[j] * r.val[k]
			}
			// log(1+e^-z) for y=1, log(1+e^z) for y=0, computed without overflow
			if ys[i] == 1 {
				l += ws[i] * softplus(-z)
			} else {
				l += ws[i] * softplus(z)
			}
		}
		var reg float64
		for _, v := range w {
			reg += v * v
		}
		return l/n + lambda/2*reg
	}
	grad := func(g, x []float64) {
		w, b := x[:dims], x[dims]
		for i := range g {
			g[i] = 0
		}
		for i, r := range rows {
			z := b
			for k, j := range r.idx {
				z += w[j] * r.val[k]
			}
			e := ws[i] * (sigmoid(z) - ys[i]) / n
			for k, j := range r.idx {
				g[j] += e * r.val[k]
			}
			g[dims] += e
		}
		for j := 0; j < dims; j++ {
			g[j] += lambda * w[j]
		}
	}
	x0 := make([]float64, dims+1)
	res, err := optimize.Minimize(optimize.Problem{Func: loss, Grad: grad}, x0,
		&optimize.Settings{GradientThreshold: 1e-6, MajorIterations: 500}, &optimize.LBFGS{})
	if err != nil && res == nil {
		return nil, 0, fmt.Errorf("focus: training did not converge: %w", err)
	}
	return res.X[:dims], res.X[dims], nil
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// Probability is the model's probability that the page is relevant.
func (m *PageModel) Probability(p *PageText) float64 {
	z := m.Bias
	tf := p.tf(m.Stemmer, p.Lang)
	var norm, dot float64
	for t, n := range tf {
		idf, ok := m.IDF[t]
		if !ok {
			continue
		}
		v := (1 + math.Log(n)) * idf
		norm += v * v
		dot += v * m.Weights[t]
	}
	if norm > 0 {
		z += dot / math.Sqrt(norm)
	}
	return sigmoid(z)
}

// Topic is a topic derived from the model, for link strategies that compare text with a
// topic vector: its keywords are the 100 terms with the largest positive weights.
func (m *PageModel) Topic() *Topic {
	if m.topic != nil {
		return m.topic
	}
	v := text.Vector{}
	for t, w := range m.Weights {
		if w > 0 {
			v[t] = w
		}
	}
	v = topVector(v, 100)
	t := &Topic{Name: m.Name, Threshold: m.Threshold, Stemmer: m.Stemmer, vectors: map[string]text.Vector{}}
	for _, l := range append([]string{"en"}, text.Languages...) {
		t.vectors[l] = v
	}
	t.langs = primaryFirst(t.vectors)
	m.topic = t
	return t
}

// Save writes the model as JSON.
func (m *PageModel) Save(path string) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadPageModel reads a model written by Save.
func LoadPageModel(path string) (*PageModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("page model: %w", err)
	}
	var m PageModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("page model %s: %w", path, err)
	}
	if m.Kind != pageModelKind || m.Version != 1 {
		return nil, fmt.Errorf("page model %s: not a sonda page model (kind %q, version %d); train one with `sonda train page`", path, m.Kind, m.Version)
	}
	if m.Threshold <= 0 || m.Threshold >= 1 || m.Name == "" {
		return nil, fmt.Errorf("page model %s: threshold must be in (0, 1) and name set", path)
	}
	return &m, nil
}

// CVResult is a cross-validation of training: the model is trained on all folds but one
// and tested on the one left out, for each fold in turn.
type CVResult struct {
	Folds     int     `json:"folds"`
	Precision float64 `json:"precision"` // over all held-out predictions
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Accuracy  float64 `json:"accuracy"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	TN        int     `json:"tn"`
}

// CrossValidate runs stratified k-fold cross-validation (each fold has the same share of
// relevant examples), shuffled with seed.
func CrossValidate(examples []Example, o TrainOptions, k int, seed uint64) (CVResult, error) {
	o.defaults()
	probs, err := outOfFold(examples, o, k, seed)
	if err != nil {
		return CVResult{}, err
	}
	return cvAt(examples, probs, o.Threshold, k), nil
}

// outOfFold returns each example's probability from the model trained on the folds that
// do not hold it.
func outOfFold(examples []Example, o TrainOptions, k int, seed uint64) ([]float64, error) {
	var pos, neg []int
	for i, e := range examples {
		if e.Relevant {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	if k < 2 || len(pos) < k || len(neg) < k {
		return nil, errors.New("focus: cross-validation needs at least k relevant and k irrelevant examples, and k ≥ 2")
	}
	rng := rand.New(rand.NewPCG(seed, 0xcf))
	rng.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	rng.Shuffle(len(neg), func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
	fold := make([]int, len(examples))
	for i, idx := range pos {
		fold[idx] = i % k
	}
	for i, idx := range neg {
		fold[idx] = i % k
	}
	probs := make([]float64, len(examples))
	for f := 0; f < k; f++ {
		var train []Example
		var test []int
		for i, e := range examples {
			if fold[i] == f {
				test = append(test, i)
			} else {
				train = append(train, e)
			}
		}
		m, err := TrainPageModel(train, o)
		if err != nil {
			return nil, err
		}
		for _, i := range test {
			probs[i] = m.Probability(examples[i].Page)
		}
	}
	return probs, nil
}

// cvAt counts the out-of-fold verdicts at threshold.
func cvAt(examples []Example, probs []float64, threshold float64, k int) CVResult {
	res := CVResult{Folds: k}
	for i, e := range examples {
		got := probs[i] >= threshold
		switch {
		case got && e.Relevant:
			res.TP++
		case got:
			res.FP++
		case e.Relevant:
			res.FN++
		default:
			res.TN++
		}
	}
	res.Precision = ratio(res.TP, res.TP+res.FP)
	res.Recall = ratio(res.TP, res.TP+res.FN)
	if res.Precision+res.Recall > 0 {
		res.F1 = 2 * res.Precision * res.Recall / (res.Precision + res.Recall)
	}
	res.Accuracy = ratio(res.TP+res.TN, len(examples))
	return res
}

// TuneLambdas are the L2 strengths Tune tries.
var TuneLambdas = []float64{1e-4, 1e-3, 1e-2, 3e-2}

// Tune chooses the L2 strength and the probability threshold for few examples by k-fold
// cross-validation: for each of TuneLambdas, the out-of-fold probabilities of every
// example, and the threshold that maximizes F1 over them (at o.Prior's share of relevant
// pages when it is set; see f1Threshold); the strength with the best F1 wins, the larger
// on a tie. A fixed 0.5 suits a model trained on many balanced examples; with a dozen
// relevant examples among hundreds, the scores of relevant pages the model has not seen
// fall well below it, and the crawler would miss them. The result is o with Lambda and
// Threshold set, and the cross-validation at that threshold.
func Tune(examples []Example, o TrainOptions, k int, seed uint64) (TrainOptions, CVResult, error) {
	o.defaults()
	best, bestF1 := o, -1.0
	var bestCV CVResult
	for _, l := range TuneLambdas {
		o.Lambda = l
		probs, err := outOfFold(examples, o, k, seed)
		if err != nil {
			return o, CVResult{}, err
		}
		t, f1 := f1Threshold(examples, probs, o.Prior)
		if f1 >= bestF1 {
			best, bestF1, bestCV = o, f1, cvAt(examples, probs, t, k)
			best.Threshold = t
		}
	}
	return best, bestCV, nil
}

// f1Threshold is the threshold at which F1 over the out-of-fold probabilities is highest:
// halfway between the lowest probability it accepts and the highest below that, so that
// pages scored a little under the examples it accepted are not lost, clamped to
// [0.05, 0.95]. With a prior, irrelevant examples count as many times over as makes
// relevant ones that share of the whole. It returns the threshold and that F1.
func f1Threshold(examples []Example, probs []float64, prior float64) (threshold, f1 float64) {
	var pos, neg float64
	for _, e := range examples {
		if e.Relevant {
			pos++
		} else {
			neg++
		}
	}
	wneg := 1.0
	if prior > 0 && prior < 1 && neg > 0 {
		wneg = pos * (1 - prior) / (prior * neg)
	}
	cands := []float64{0.05}
	for _, p := range probs {
		cands = append(cands, min(max(p, 0.05), 0.95))
	}
	sort.Float64s(cands)
	bestF1, best := -1.0, 0
	for i, t := range cands {
		var tp, fp, fn float64
		for j, e := range examples {
			switch got := probs[j] >= t; {
			case got && e.Relevant:
				tp++
			case got:
				fp += wneg
			case e.Relevant:
				fn++
			}
		}
		if f1 := 2 * tp / max(2*tp+fp+fn, 1e-9); f1 > bestF1+1e-12 {
			bestF1, best = f1, i
		}
	}
	if best == 0 {
		return cands[0], bestF1
	}
	return (cands[best-1] + cands[best]) / 2, bestF1
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
