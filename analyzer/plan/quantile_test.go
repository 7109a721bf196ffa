package plan

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedQuantile is quantile by sorting, as PromQL's quantile_over_time.
func sortedQuantile(v []float64, q float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	rank := q * float64(len(v)-1)
	lo := int(rank)
	if lo+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[lo] + (v[lo+1]-v[lo])*(rank-float64(lo))
}

// TestQuantileSelects: selecting the ranks gives what sorting gives, on
// data with many ties (a lane's idle steps), sorted, reversed and random,
// of every small length and a week's.
func TestQuantileSelects(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(n int) []float64{
		"random": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = r.Float64()
			}
			return v
		},
		"mostly zero": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				if r.IntN(10) == 0 {
					v[i] = float64(r.IntN(4))
				}
			}
			return v
		},
		"ascending": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i / 3)
			}
			return v
		},
		"descending": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(n - i)
			}
			return v
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 10, 33, 100, 10080} {
			for _, q := range []float64{0, 0.5, 0.95, 0.99, 1} {
				v := shape(n)
				want := sortedQuantile(v, q)
				if got := quantile(v, q); got != want {
					t.Errorf("%s, %d values, q %g: %v, want %v", name, n, q, got, want)
				}
			}
		}
	}
}
