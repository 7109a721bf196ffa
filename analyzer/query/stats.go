package query

import (
	"math"

	"github.com/prometheus/prometheus/util/kahansum"

	"github.com/gpulens/gpulens/analyzer/scan"
)

// The *_over_time functions of PromQL (promql/functions.go and
// promql/quantile.go of the prometheus module in go.mod), computed here
// over one pass's series at the window's steps (stepSeries: a step without
// a value is skipped), so that a signal read once gives every statistic
// the findings use. Each one does what the engine does, in the same order
// and with the same Kahan summation, so the figures are those of the
// subquery they replace: TestPassesMatchScans holds the two together.
// Every function expects a value at one step at least.

// sumOverTime is sum_over_time.
func sumOverTime(v []float64) float64 {
	var sum, c float64
	for _, f := range v {
		if !scan.IsAbsent(f) {
			sum, c = kahansum.Inc(f, sum, c)
		}
	}
	if math.IsInf(sum, 0) {
		return sum
	}
	return sum + c
}

// avgOverTime is avg_over_time: a Kahan sum divided by the count, switching
// to an incremental mean where the sum would overflow.
func avgOverTime(v []float64) float64 {
	var sum, count, mean, kahanC float64
	incrementalMean := false
	for _, f := range v {
		if scan.IsAbsent(f) {
			continue
		}
		if count++; count == 1 {
			sum = f
			continue
		}
		if !incrementalMean {
			newSum, newC := kahansum.Inc(f, sum, kahanC)
			if !math.IsInf(newSum, 0) {
				sum, kahanC = newSum, newC
				continue
			}
			incrementalMean = true
			mean = sum / (count - 1)
			kahanC /= (count - 1)
		}
		q := (count - 1) / count
		mean, kahanC = kahansum.Inc(f/count, q*mean, q*kahanC)
	}
	if incrementalMean {
		return mean + kahanC
	}
	return sum/count + kahanC/count
}

// maxOverTime is max_over_time: NaN only when every value is.
func maxOverTime(v []float64) float64 {
	m := math.NaN()
	for _, f := range v {
		if !scan.IsAbsent(f) && (f > m || math.IsNaN(m)) {
			m = f
		}
	}
	return m
}

// lastOverTime is last_over_time.
func lastOverTime(v []float64) float64 {
	if i := lastStep(v); i >= 0 {
		return v[i]
	}
	return math.NaN()
}

// quantileOverTime is quantile_over_time(q, ...): scan's, the one
// implementation.
func quantileOverTime(q float64, v []float64) float64 { return scan.Quantile(q, v) }

// deriv is deriv(): the slope per second of the least-squares line through
// the values, with time measured in seconds from the first value's step
// (step is the window's step in milliseconds). ok is false where the
// engine returns no sample (fewer than two values).
func deriv(v []float64, step int64) (slope float64, ok bool) {
	var n, sumX, cX, sumY, cY, sumXY, cXY, sumX2, cX2 float64
	var initY float64
	constY, intercept := true, -1
	for i, f := range v {
		if scan.IsAbsent(f) {
			continue
		}
		if intercept < 0 {
			// The engine measures time from the first point, to keep x small.
			intercept, initY = i, f
		} else if constY && f != initY {
			constY = false
		}
		n += 1.0
		x := float64(int64(i-intercept)*step) / 1e3
		sumX, cX = kahansum.Inc(x, sumX, cX)
		sumY, cY = kahansum.Inc(f, sumY, cY)
		sumXY, cXY = kahansum.Inc(x*f, sumXY, cXY)
		sumX2, cX2 = kahansum.Inc(x*x, sumX2, cX2)
	}
	if n < 2 {
		return 0, false
	}
	if constY {
		if math.IsInf(initY, 0) {
			return math.NaN(), true
		}
		return 0, true
	}
	sumX += cX
	sumY += cY
	sumXY += cXY
	sumX2 += cX2
	covXY := sumXY - sumX*sumY/n
	varX := sumX2 - sumX*sumX/n
	return covXY / varX, true
}
