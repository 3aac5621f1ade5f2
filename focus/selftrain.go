package focus

import (
	"fmt"
	"sort"
	"sync"
)

// SelfTrainParams configure self-training. The zero value takes the defaults.
type SelfTrainParams struct {
	// Every is how many newly confident pages trigger retraining (default 200).
	Every int
	// High and Low are the probabilities at or above which a page counts as a confident
	// relevant example and at or below which as a confident irrelevant one. By default
	// they come from the model's own scores of its examples: the lower quartile of the
	// relevant ones (at least the threshold) and the median of the irrelevant ones (at
	// most the threshold). A model trained on few examples with strong regularization
	// scores in a narrow band around its threshold, so fixed bounds such as 0.9 and
	// 0.1 would never be reached.
	High, Low float64
	// MaxPos and MaxNeg cap the pages kept as examples, the most recent first (defaults
	// 300 and 1,200).
	MaxPos, MaxNeg int
}

func (p *SelfTrainParams) defaults() {
	if p.Every <= 0 {
		p.Every = 200
	}
	if p.MaxPos <= 0 {
		p.MaxPos = 300
	}
	if p.MaxNeg <= 0 {
		p.MaxNeg = 1200
	}
}

// selfTrainer retrains the page model during a crawl on the user's examples plus the pages
// the model judged with confidence (self-training, Yarowsky 1995; Nigam et al. 2000 for
// text): a dozen example pages show only part of a topic's vocabulary, and the pages the
// crawl finds confidently relevant teach the words they share with the rest of the topic.
// Only confident verdicts are kept, so that its own mistakes do not teach it much.
type selfTrainer struct {
	examples []Example
	o        TrainOptions
	p        SelfTrainParams

	// train is held while a model trains: one at a time, since examples' analyzed terms
	// are cached in their PageText, which is not safe for concurrent use.
	train     sync.Mutex
	mu        sync.Mutex
	pos, neg  []Example
	fresh     int
	retrained int
	lastErr   error
}

// SelfTrain makes r retrain its page model during the crawl from examples (those the model
// was trained on) and o (its training options, Tune's when it was tuned), adding the pages
// it judges with confidence. Retraining runs on the crawl worker that judged the page that
// completed a batch; the new model takes over for the pages judged after it.
func (r *Relevance) SelfTrain(examples []Example, o TrainOptions, p SelfTrainParams) error {
	if r.judge.Model == nil {
		return fmt.Errorf("focus: self-training needs a page model (--page-model FILE)")
	}
	p.defaults()
	m := r.judge.Model
	var rel, irr []float64
	for _, e := range examples {
		if e.Relevant {
			rel = append(rel, m.Probability(e.Page))
		} else {
			irr = append(irr, m.Probability(e.Page))
		}
	}
	if len(rel) == 0 || len(irr) == 0 {
		return fmt.Errorf("focus: self-training needs relevant and irrelevant examples (got %d and %d)", len(rel), len(irr))
	}
	sort.Float64s(rel)
	sort.Float64s(irr)
	if p.High <= 0 || p.High >= 1 {
		p.High = max(rel[len(rel)/4], m.Threshold)
	}
	if p.Low <= 0 || p.Low >= 1 {
		p.Low = min(irr[len(irr)/2], m.Threshold)
	}
	r.self = &selfTrainer{examples: examples, o: o, p: p}
	return nil
}

// SelfTrainBounds are the probabilities self-training counts as confident.
func (r *Relevance) SelfTrainBounds() (low, high float64) {
	if r.self == nil {
		return 0, 0
	}
	return r.self.p.Low, r.self.p.High
}

// SelfTrained reports how often the model was retrained and the last training error.
func (r *Relevance) SelfTrained() (int, error) {
	if r.self == nil {
		return 0, nil
	}
	r.self.mu.Lock()
	defer r.self.mu.Unlock()
	return r.self.retrained, r.self.lastErr
}

// observe keeps a confidently judged page and retrains when a batch is complete.
func (s *selfTrainer) observe(r *Relevance, p *PageText, score float64) {
	if score > s.p.Low && score < s.p.High {
		return
	}
	s.mu.Lock()
	if score >= s.p.High {
		s.pos = appendCapped(s.pos, Example{Page: p, Relevant: true}, s.p.MaxPos)
	} else {
		s.neg = appendCapped(s.neg, Example{Page: p, Relevant: false}, s.p.MaxNeg)
	}
	if s.fresh++; s.fresh < s.p.Every || !s.train.TryLock() {
		s.mu.Unlock()
		return // not yet, or a model is training on another worker: the next page retries
	}
	defer s.train.Unlock()
	s.fresh = 0
	train := make([]Example, 0, len(s.examples)+len(s.pos)+len(s.neg))
	train = append(append(append(train, s.examples...), s.pos...), s.neg...)
	s.mu.Unlock()
	m, err := TrainPageModel(train, s.o)
	s.mu.Lock()
	s.lastErr = err
	if err == nil {
		s.retrained++
	}
	s.mu.Unlock()
	if err == nil {
		r.mu.Lock()
		r.judge.Model = m
		r.mu.Unlock()
	}
}

func appendCapped(s []Example, e Example, max int) []Example {
	if len(s) >= max {
		s = append(s[:0], s[1:]...)
	}
	return append(s, e)
}
