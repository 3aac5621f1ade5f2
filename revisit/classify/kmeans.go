package classify

import (
	"math"
	"sort"
)

// KMeans1D clusters values into k groups by Lloyd's algorithm, starting from the values at
// evenly spaced quantiles (deterministic, and sensible for the skewed distributions of
// change rates). It returns the centroids in ascending order and each value's cluster.
// Seed 004 ran k-means over the change-rate estimator r̂ with k = 2..6 and chose 4.
// Fewer distinct values than k give fewer clusters.
func KMeans1D(values []float64, k int) (centroids []float64, assign []int) {
	if len(values) == 0 || k <= 0 {
		return nil, nil
	}
	sorted := append([]float64{}, values...)
	sort.Float64s(sorted)
	distinct := 1
	for i := 1; i < len(sorted); i++ {
		if sorted[i] != sorted[i-1] {
			distinct++
		}
	}
	k = min(k, distinct)
	centroids = make([]float64, 0, k)
	for i := 0; i < k; i++ {
		q := sorted[min(len(sorted)-1, (2*i+1)*len(sorted)/(2*k))]
		if len(centroids) == 0 || q > centroids[len(centroids)-1] {
			centroids = append(centroids, q)
		}
	}
	// Quantiles may coincide on heavily repeated values: fill in from the distinct values.
	for i := len(sorted) - 1; len(centroids) < k && i >= 0; i-- {
		v := sorted[i]
		dup := false
		for _, c := range centroids {
			dup = dup || c == v
		}
		if !dup {
			centroids = append(centroids, v)
			sort.Float64s(centroids)
		}
	}
	assign = make([]int, len(values))
	for iter := 0; iter < 300; iter++ {
		changed := false
		for i, v := range values {
			best := 0
			for c := range centroids {
				if math.Abs(v-centroids[c]) < math.Abs(v-centroids[best]) {
					best = c
				}
			}
			if assign[i] != best || iter == 0 {
				changed = changed || assign[i] != best
				assign[i] = best
			}
		}
		sums := make([]float64, len(centroids))
		counts := make([]int, len(centroids))
		for i, v := range values {
			sums[assign[i]] += v
			counts[assign[i]]++
		}
		for c := range centroids {
			if counts[c] > 0 {
				centroids[c] = sums[c] / float64(counts[c])
			}
		}
		if !changed && iter > 0 {
			break
		}
	}
	return centroids, assign
}
