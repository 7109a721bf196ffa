package serve

import (
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/series"
)

// seriesPools is what the series publish of the report's plan: each
// pool's cluster, freed GPUs and two savings; none without a plan.
func seriesPools(c *report.Consolidation) []series.Pool {
	if c == nil || c.Unavailable != "" {
		return nil
	}
	out := make([]series.Pool, len(c.Pools))
	for i, p := range c.Pools {
		out[i] = series.Pool{Cluster: p.Cluster, CapacityFreedGPUs: p.CapacityFreedGPUs, Banked: p.MonthlySaving, CapacityFreed: p.CapacityFreedMonthly}
	}
	return out
}
