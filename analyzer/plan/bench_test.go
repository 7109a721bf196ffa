package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchPool is a fleet of n workloads on A100-80GB: the random mix of
// TestAgainstBruteForce (steady, daily peaks, jobs, notebooks, a few
// trainers), over a week of steps.
func benchPool(b *testing.B, n, steps int) *Pool {
	r := rand.New(rand.NewPCG(uint64(n), uint64(steps)))
	t := &testing.T{}
	pool := randomPool(t, r, "A100-80GB", n, steps)
	pool.GPUsToday = n
	return pool
}

// BenchmarkPlan measures Make (sizing, three first-fit-decreasing
// passes, local search, replay) without fetching.
func BenchmarkPlan(b *testing.B) {
	for _, c := range []struct{ workloads, steps int }{
		{1000, 7 * 24 * 60}, // a week at one-minute steps
		{1000, 7 * 24 * 12}, // a week at five-minute steps
		{3500, 7 * 24 * 60}, // about 1,000 GPUs' worth, at one minute
		{10000, 7 * 24 * 12},
	} {
		b.Run(fmt.Sprintf("workloads=%d/steps=%d", c.workloads, c.steps), func(b *testing.B) {
			pool := benchPool(b, c.workloads, c.steps)
			b.ResetTimer()
			var gpus int
			for i := 0; i < b.N; i++ {
				p, err := Make(&Data{Pools: []*Pool{pool}, Steps: c.steps}, DefaultPolicy(), nil)
				if err != nil {
					b.Fatal(err)
				}
				gpus = p.GPUsNeeded
			}
			b.ReportMetric(float64(gpus), "gpus")
		})
	}
}

// BenchmarkPlanNodes is BenchmarkPlan's first size with the pool on nodes
// of 8 GPUs: node packing, and the second layout without time-slicing that
// Make tries where time-sliced GPUs cost nodes. Run both in one go for the
// ratio.
func BenchmarkPlanNodes(b *testing.B) {
	const workloads, steps = 1000, 7 * 24 * 12
	for _, nodes := range []bool{false, true} {
		b.Run(fmt.Sprintf("nodes=%v", nodes), func(b *testing.B) {
			pool := benchPool(b, workloads, steps)
			if nodes {
				pool.Nodes, pool.GPUsPerNode = workloads/8, 8
			}
			b.ResetTimer()
			var n int
			for i := 0; i < b.N; i++ {
				p, err := Make(&Data{Pools: []*Pool{pool}, Steps: steps}, DefaultPolicy(), nil)
				if err != nil {
					b.Fatal(err)
				}
				n = p.NodesNeeded
			}
			b.ReportMetric(float64(n), "nodes")
		})
	}
}
