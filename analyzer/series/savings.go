package series

import (
	"maps"
	"slices"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/vocab"
)

// Pool is what the series need of one pool of the report's plan: its
// cluster, the GPUs it frees for other work, and its two savings a month,
// nil where the pool has no price.
type Pool struct {
	Cluster               string
	CapacityFreedGPUs     int
	Banked, CapacityFreed *float64
}

// savings adds the report's two savings by cluster, each the sum of its
// pools in the plan, so that the clusters add up to the report's figures.
// A cluster with a pool of no price has no money series: a partial sum
// would read as all of it.
func savings(s *metrics.Set, pools []Pool, costKnown bool) {
	type sums struct {
		banked, freed float64
		gpus          int
		unpriced      bool
	}
	clusters := map[string]*sums{}
	for _, p := range pools {
		x := clusters[p.Cluster]
		if x == nil {
			x = &sums{}
			clusters[p.Cluster] = x
		}
		x.gpus += p.CapacityFreedGPUs
		if p.Banked == nil || p.CapacityFreed == nil {
			x.unpriced = true
			continue
		}
		x.banked += *p.Banked
		x.freed += *p.CapacityFreed
	}
	for _, name := range slices.Sorted(maps.Keys(clusters)) {
		x := clusters[name]
		constant(s, metricname.Of(vocab.SeriesFleetCapacityFreedGPUs, ClusterLabel, name), float64(x.gpus))
		if !costKnown || x.unpriced {
			continue
		}
		constant(s, metricname.Of(vocab.SeriesFleetMonthlySavings, ClusterLabel, name, "kind", vocab.SavingBanked), x.banked)
		constant(s, metricname.Of(vocab.SeriesFleetMonthlySavings, ClusterLabel, name, "kind", vocab.SavingCapacityFreed), x.freed)
	}
}
