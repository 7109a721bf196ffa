package series

import (
	"maps"
	"slices"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/vocab"
)

// The fleet's states of money, the values of the state label of
// vocab.SeriesFleetMonthlyCost: the usage basis's three parts of every
// GPU's cost, which add up to the fleet's cost (analyzer/ledger).
const (
	StateUsed        = "used"
	StateIdle        = "idle"
	StateUnallocated = "unallocated"
)

// money adds the ledger's series: each priced model's price per GPU-hour,
// which the dashboards join their GPU-hours with, so that they price each
// GPU as the analysis did; and per cluster, the fleet's cost in its three
// parts. A cluster with a GPU of no price has no cost series: a partial
// sum would read as all of it.
func money(s *metrics.Set, l *ledger.Ledger, windowHours float64) {
	if l == nil {
		return
	}
	prices := map[string]float64{}
	type parts struct {
		used, idle, unallocated float64
		unpriced                bool
	}
	clusters := map[string]*parts{}
	for _, g := range l.GPUs {
		c := clusters[g.Cluster]
		if c == nil {
			c = &parts{}
			clusters[g.Cluster] = c
		}
		if !g.PriceKnown {
			c.unpriced = true
			continue
		}
		prices[g.Model] = g.PricePerHour
		for _, x := range g.Tenants {
			c.used += x.Usage.Cost
		}
		c.idle += g.Usage.Idle.Cost
		c.unallocated += g.Usage.Unallocated.Cost
	}
	for _, m := range slices.Sorted(maps.Keys(prices)) {
		constant(s, metricname.Of(vocab.SeriesPriceGPUHour, "model", m), prices[m])
	}
	if windowHours <= 0 {
		return
	}
	monthly := func(v float64) float64 { return v / windowHours * vocab.HoursPerMonth }
	for _, name := range slices.Sorted(maps.Keys(clusters)) {
		c := clusters[name]
		if c.unpriced {
			continue
		}
		for _, p := range []struct {
			state string
			v     float64
		}{{StateUsed, c.used}, {StateIdle, c.idle}, {StateUnallocated, c.unallocated}} {
			constant(s, metricname.Of(vocab.SeriesFleetMonthlyCost, ClusterLabel, name, "state", p.state), monthly(p.v))
		}
	}
}
