package plan

import (
	"math"
	"slices"
)

// growth sets l.GrowthBytes from the trend of its last run: the steps
// since it last started or last dropped to under half its memory (a leak
// that died of OOM and restarted). A least-squares slope projected over
// horizon steps counts when it adds at least 1 GiB or a tenth of the
// peak; the projection stops at a whole GPU's memory.
func growth(l *Lane, capacity float64, horizon int) {
	end := len(l.Mem) - 1
	for end >= 0 && l.Mem[end] == 0 {
		end--
	}
	if end < 0 {
		return
	}
	start := end
	for start > 0 && l.Mem[start-1] > 0 && float64(l.Mem[start]) >= 0.5*float64(l.Mem[start-1]) {
		start--
	}
	n := end - start + 1
	if n < 12 {
		return
	}
	var sx, sy, sxx, sxy, syy float64
	for t := start; t <= end; t++ {
		x, y := float64(t-start), float64(l.Mem[t])
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
	}
	fn := float64(n)
	vx, vy, cxy := sxx-sx*sx/fn, syy-sy*sy/fn, sxy-sx*sy/fn
	if vx <= 0 || vy <= 0 || cxy <= 0 || cxy*cxy/(vx*vy) < 0.8 {
		return
	}
	slope := cxy / vx
	peak := peakOf(l.Mem)
	projected := math.Min(float64(l.Mem[end])+slope*float64(horizon), capacity)
	if add := projected - peak; add >= math.Max(1<<30, 0.1*peak) {
		l.GrowthBytes = add
	}
}

func peakOf(v []float32) float64 {
	if len(v) == 0 {
		return 0
	}
	return float64(slices.Max(v))
}
