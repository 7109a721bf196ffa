package rollup

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/price"
)

// Money is an analysis's money, built once (pipeline.Run, Build): the
// ledger's charges, and the allocations and capacity rolled up by team,
// by cluster and by GPU model. The report, serve's series and the
// dashboards' price series render it; none prices anything again.
type Money struct {
	// Ledger charges every GPU-hour of the window to its tenants.
	Ledger *ledger.Ledger
	// Teams are the most allocated first.
	Teams []Team
	// Fleet sums every cluster; Clusters are each cluster's, present only
	// where the store holds several (its series carry a cluster label),
	// sorted by name, and sum to it.
	Fleet    Cluster
	Clusters []NamedCluster
	// Models are the fleet by GPU model (and cluster).
	Models []ModelFleet
	// Unpriced are the models the price table has no price for, sorted:
	// their hours count, their dollars do not.
	Unpriced []string
}

// NamedCluster is one cluster's summary: Name is its label value, ""
// for the series without the label in a store where others have it.
type NamedCluster struct {
	Name string
	Cluster
}

// Build charges in.Current to its tenants and rolls it up. prices may be
// nil: every money figure is then unknown, never $0.
func Build(in Input, prices *price.Prices) *Money {
	pr := NewPricer(prices)
	if in.Ledger == nil {
		in.Ledger = ledger.Build(in.Current, prices)
	}
	m := &Money{Ledger: in.Ledger, Teams: Teams(in, pr)}
	used := in.UsedWithoutPod
	if used == nil {
		used = func(fleet.GPUKey) bool { return false }
	}
	prev := in.Previous
	if prev == nil {
		prev = &fleet.Result{}
	}
	m.Fleet = summary(in.Current, prev, m.Teams, pr, used, func(string) bool { return true })
	m.Models = models(in.Current, pr, used)
	for _, c := range clustersOf(in.Current) {
		m.Clusters = append(m.Clusters, NamedCluster{Name: c,
			Cluster: summary(in.Current, prev, m.Teams, pr, used, func(x string) bool { return x == c })})
	}
	m.Unpriced = pr.Missing()
	return m
}

// clustersOf are the cluster label values res's GPUs and allocations
// carry, sorted; nil where they carry none (a store of one cluster), ""
// among them for the series without the label in a store that has it.
func clustersOf(res *fleet.Result) []string {
	var out []string
	named := false
	for _, g := range res.GPUs {
		out, named = append(out, g.Cluster), named || g.Cluster != ""
	}
	for _, x := range res.Allocations {
		out, named = append(out, x.Cluster), named || x.Cluster != ""
	}
	if !named {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
