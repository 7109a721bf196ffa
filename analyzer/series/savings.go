package series

import (
	"maps"
	"slices"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/vocab"
)

// The kinds of saving, the values of the kind label of
// vocab.SeriesFleetMonthlySavings: the report's two (report.Savings).
const (
	SavingBanked        = "banked"
	SavingCapacityFreed = "capacity_freed"
)

// savings adds the report's two savings by cluster, each the sum of its
// pools in the plan, so that the clusters add up to the report's figures.
// A cluster with a pool of no price has no money series: a partial sum
// would read as all of it.
func savings(s *metrics.Set, c *report.Consolidation, costKnown bool) {
	if c == nil || c.Unavailable != "" {
		return
	}
	type sums struct {
		banked, freed float64
		gpus          int
		unpriced      bool
	}
	clusters := map[string]*sums{}
	for _, p := range c.Pools {
		x := clusters[p.Cluster]
		if x == nil {
			x = &sums{}
			clusters[p.Cluster] = x
		}
		x.gpus += p.CapacityFreedGPUs
		if p.MonthlySaving == nil || p.CapacityFreedMonthly == nil {
			x.unpriced = true
			continue
		}
		x.banked += *p.MonthlySaving
		x.freed += *p.CapacityFreedMonthly
	}
	for _, name := range slices.Sorted(maps.Keys(clusters)) {
		x := clusters[name]
		constant(s, metricname.Of(vocab.SeriesFleetCapacityFreedGPUs, ClusterLabel, name), float64(x.gpus))
		if !costKnown || x.unpriced {
			continue
		}
		constant(s, metricname.Of(vocab.SeriesFleetMonthlySavings, ClusterLabel, name, "kind", SavingBanked), x.banked)
		constant(s, metricname.Of(vocab.SeriesFleetMonthlySavings, ClusterLabel, name, "kind", SavingCapacityFreed), x.freed)
	}
}
