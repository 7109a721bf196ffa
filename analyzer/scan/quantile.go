package scan

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// byValue sorts as promql's vectorByValueHeap does, NaN first, with the
// same sort.Sort, so ties and NaNs land where the engine puts them.
type byValue []float64

func (s byValue) Len() int { return len(s) }
func (s byValue) Less(i, j int) bool {
	if math.IsNaN(s[i]) {
		return true
	}
	return s[i] < s[j]
}
func (s byValue) Swap(i, j int) { s[i], s[j] = s[j], s[i] }

// quantileBuffers hold the values Quantile sorts, one window's worth a
// series: a fresh buffer for each of thousands of series costs about
// what the sort does.
var quantileBuffers = sync.Pool{New: func() any { return new(byValue) }}

// Quantile is quantile_over_time(q, ...) of the values of v that are not
// absent (IsAbsent), as promql's quantile does: NaN for none or a NaN q,
// -Inf and +Inf for q below 0 and above 1, otherwise the values sorted
// and the two around rank q × (n - 1) interpolated. One implementation for
// the scan's quantile_over_time and the analysis's passes.
func Quantile(q float64, v []float64) float64 {
	buf := quantileBuffers.Get().(*byValue)
	defer quantileBuffers.Put(buf)
	values := (*buf)[:0]
	for _, f := range v {
		if !isAbsent(f) {
			values = append(values, f)
		}
	}
	*buf = values
	switch {
	case len(values) == 0 || math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(+1)
	}
	// Without NaNs every sort gives the same order of values, and the
	// generic one is about three times the interface's speed; with NaNs
	// (which byValue does not order strictly) only the engine's own sort
	// puts them where it does.
	if slices.ContainsFunc(values, math.IsNaN) {
		sort.Sort(values)
	} else {
		slices.Sort(values)
	}
	n := float64(len(values))
	rank := q * (n - 1)
	lowerIndex := math.Max(0, math.Floor(rank))
	upperIndex := math.Min(n-1, lowerIndex+1)
	weight := rank - math.Floor(rank)
	if weight == 0 {
		return values[int(lowerIndex)]
	}
	return values[int(lowerIndex)]*(1-weight) + values[int(upperIndex)]*weight
}
