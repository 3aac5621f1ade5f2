package text

import (
	"math"
	"sort"
)

// Vector is a sparse term vector: term → weight. A nil Vector is the zero vector.
type Vector map[string]float64

// TF counts terms: the bag-of-words term-frequency vector of seed 001 (Eq. 5's p).
func TF(terms []string) Vector {
	v := make(Vector, len(terms)/2+1)
	for _, t := range terms {
		v[t]++
	}
	return v
}

// Norm is the Euclidean length of v.
func (v Vector) Norm() float64 {
	var s float64
	for _, w := range v {
		s += w * w
	}
	return math.Sqrt(s)
}

// Dot is the inner product of a and b.
func Dot(a, b Vector) float64 {
	if len(b) < len(a) {
		a, b = b, a // iterate over the smaller one
	}
	var s float64
	for t, w := range a {
		if w2, ok := b[t]; ok {
			s += w * w2
		}
	}
	return s
}

// Cosine is the cosine of the angle between a and b, sim(v, p) = v·p / (|v| |p|) (seed
// 001, Eq. 5). It is 0 when either vector is zero; for vectors without negative weights it
// lies in [0, 1].
func Cosine(a, b Vector) float64 {
	na, nb := a.Norm(), b.Norm()
	if na == 0 || nb == 0 {
		return 0
	}
	c := Dot(a, b) / (na * nb)
	return min(c, 1) // rounding can push a vector's cosine with itself just past 1
}

// Normalized returns v scaled to unit length (a copy; nil for the zero vector).
func (v Vector) Normalized() Vector {
	n := v.Norm()
	if n == 0 {
		return nil
	}
	return v.Scaled(1 / n)
}

// Scaled returns a copy of v with every weight multiplied by f.
func (v Vector) Scaled(f float64) Vector {
	out := make(Vector, len(v))
	for t, w := range v {
		out[t] = w * f
	}
	return out
}

// Add adds f times u to v in place and returns v (allocating when v is nil).
func (v Vector) Add(u Vector, f float64) Vector {
	if v == nil {
		v = make(Vector, len(u))
	}
	for t, w := range u {
		v[t] += w * f
	}
	return v
}

// Term is a term with its weight.
type Term struct {
	Term   string
	Weight float64
}

// Top returns the n heaviest terms of v, heaviest first (ties in term order); n <= 0 returns
// them all.
func (v Vector) Top(n int) []Term {
	out := make([]Term, 0, len(v))
	for t, w := range v {
		out = append(out, Term{t, w})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].Term < out[j].Term
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// DocFreq counts in how many documents each term occurs, for inverse document frequency.
// The zero value is ready to use; it is not safe for concurrent use.
type DocFreq struct {
	Docs int            `json:"docs"`
	DF   map[string]int `json:"df"`
}

// Add counts one document given its terms (repeats within the document count once).
func (d *DocFreq) Add(terms []string) {
	if d.DF == nil {
		d.DF = map[string]int{}
	}
	d.Docs++
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			d.DF[t]++
		}
	}
}

// IDF is the smoothed inverse document frequency ln((1+N)/(1+df)) + 1: never zero, so a
// term found in every document still counts a little, and defined for unseen terms (which
// get the largest value).
func (d *DocFreq) IDF(term string) float64 {
	return math.Log(float64(1+d.Docs)/float64(1+d.DF[term])) + 1
}

// TFIDF weights a term-frequency vector by IDF: w(t) = tf(t) · idf(t), as a new vector.
func (d *DocFreq) TFIDF(tf Vector) Vector {
	out := make(Vector, len(tf))
	for t, w := range tf {
		out[t] = w * d.IDF(t)
	}
	return out
}

// Prune drops the terms found in fewer than minDocs documents (rare terms are mostly noise
// and make models large); it returns how many were dropped.
func (d *DocFreq) Prune(minDocs int) int {
	n := 0
	for t, df := range d.DF {
		if df < minDocs {
			delete(d.DF, t)
			n++
		}
	}
	return n
}
