package report

import (
	"fmt"
	"github.com/gpulens/gpulens/internal/safetext"
	"slices"
	"strconv"
	"strings"
)

// Consolidation is the headline of `gpulens plan` for the report: how
// many nodes and GPUs the fleet needs if its workloads were packed by
// their per-step use, proven by replaying the window on the layout. The
// command that builds the report sets it; nil leaves the section out.
type Consolidation struct {
	GPUsToday  int `json:"gpus_today"`
	GPUsNeeded int `json:"gpus_needed"`
	// NodesToday and NodesNeeded count nodes (0: unknown); HeadroomGPUs
	// are GPUs the layout leaves free on the nodes it keeps.
	NodesToday   int `json:"nodes_today"`
	NodesNeeded  int `json:"nodes_needed"`
	HeadroomGPUs int `json:"headroom_gpus"`
	// MonthlySaving is the freed nodes' price, for the priced pools
	// (negative when the layout needs more nodes); SavingKnown is false
	// when none was priced. It is bankable: the nodes go.
	MonthlySaving float64 `json:"monthly_saving"`
	SavingKnown   bool    `json:"saving_known"`
	// CapacityFreedGPUs are the GPUs the layout leaves free on the nodes
	// it keeps (at most HeadroomGPUs: a node smaller than its pool's shape
	// has no room), and CapacityFreedMonthly their price a month, known
	// with SavingKnown; AsIs says the plan is of today's fleet, not the
	// fleet after the advice, and Released names what the advice released.
	CapacityFreedGPUs    int      `json:"capacity_freed_gpus"`
	CapacityFreedMonthly float64  `json:"capacity_freed_monthly"`
	AsIs                 bool     `json:"as_is"`
	Released             []string `json:"released,omitempty"`
	// ReplaySteps and OvercommittedSteps are the proof: the window's steps
	// replayed on the layout, and those at which memory did not fit (0,
	// or there is no plan).
	// PriceSources are where the node prices come from (the plan's pools').
	PriceSources       []string            `json:"price_sources,omitempty"`
	ReplaySteps        int                 `json:"replay_steps"`
	OvercommittedSteps int                 `json:"overcommitted_steps"`
	Pools              []ConsolidationPool `json:"pools"`
	// Unavailable says why there is no plan, when there is none.
	Unavailable string `json:"unavailable,omitempty"`
	// Differences are the workloads whose shape in the plan is not the
	// one their recommendation gives, with why: a recommendation sizes a
	// workload alone, the plan packs it, step by step, with the others.
	Differences []ShapeDifference `json:"differences,omitempty"`
}

// bankedOf is the plan's banked saving of cluster's pools, for the
// clusters' table: the summary's figure, split by cluster.
func (r *Report) bankedOf(cluster string) string {
	c := r.Consolidation
	if c == nil || c.Unavailable != "" || (r.CostKnown && !c.SavingKnown) {
		return "unknown"
	}
	sum := 0.0
	for _, p := range c.Pools {
		if p.Cluster == cluster && p.MonthlySaving != nil {
			sum += *p.MonthlySaving
		}
	}
	return r.money(sum)
}

// ShapeDifference is one workload that recommend and plan shape apart.
type ShapeDifference struct {
	Cluster   string `json:"cluster,omitempty"`
	Workload  string `json:"workload"`
	Recommend string `json:"recommend"`
	Plan      string `json:"plan"`
	Why       string `json:"why"`
}

// ConsolidationPool is one GPU model's part of it, of one cluster where
// the store holds several (each cluster is planned apart: workloads do
// not move between clusters' nodes).
type ConsolidationPool struct {
	Cluster      string `json:"cluster,omitempty"`
	Model        string `json:"model"`
	GPUsToday    int    `json:"gpus_today"`
	GPUsNeeded   int    `json:"gpus_needed"`
	NodesToday   int    `json:"nodes_today"`
	NodesNeeded  int    `json:"nodes_needed"`
	HeadroomGPUs int    `json:"headroom_gpus"`
	// MonthlySaving and CapacityFreedMonthly are the pool's part of the
	// plan's; nil without a price.
	MonthlySaving        *float64 `json:"monthly_saving"`
	CapacityFreedGPUs    int      `json:"capacity_freed_gpus"`
	CapacityFreedMonthly *float64 `json:"capacity_freed_monthly"`
}

func (r *Report) consolidationSection() section {
	c := r.Consolidation
	s := section{ID: "consolidation", Title: "Consolidation", Header: []string{"Model", "Nodes today", "Nodes needed", "GPUs today", "GPUs needed", "Headroom GPUs"}}
	if c.Unavailable != "" {
		s.Empty = "No consolidation plan: " + c.Unavailable
		return s
	}
	saving := "unknown"
	if c.SavingKnown {
		saving = r.money(c.MonthlySaving)
	}
	nodes := "the nodes are unknown, so no saving is counted"
	switch {
	case c.NodesToday == 0:
	case c.NodesNeeded > c.NodesToday:
		cost := "an unknown sum"
		if c.SavingKnown {
			cost = r.money(-c.MonthlySaving)
		}
		nodes = fmt.Sprintf("on %d nodes, %d more than today's %d: the layout costs %s a month more (the added nodes' price), since a workload did not fit today's layout ('gpulens plan' says which and why)",
			c.NodesNeeded, c.NodesNeeded-c.NodesToday, c.NodesToday, cost)
	default:
		nodes = fmt.Sprintf("on %d of today's %d nodes, a saving of %s a month (the freed nodes' price)", c.NodesNeeded, c.NodesToday, saving)
	}
	fleet := "Today's fleet as it is"
	if !c.AsIs {
		fleet = fmt.Sprintf("The fleet after the advice (%d lanes that the recommendations release are gone)", len(c.Released))
	}
	freed := fmt.Sprintf("%d GPUs", c.CapacityFreedGPUs)
	if c.SavingKnown {
		freed += ", worth " + r.money(c.CapacityFreedMonthly) + " a month,"
	}
	s.Intro = fmt.Sprintf("%s, packed by their per-step use: the workloads need %d of the %d GPUs, %s; "+
		"%s stay free on the nodes kept, capacity for other work that leaves the bill only when a node goes. "+
		"Replaying the window's %d steps on that layout overcommits memory at %d. 'gpulens plan' gives the layout.",
		fleet, c.GPUsNeeded, c.GPUsToday, nodes, freed, c.ReplaySteps, c.OvercommittedSteps)
	for _, d := range c.Differences {
		s.Intro += fmt.Sprintf(" %s: recommended %s, planned %s (%s).", safetext.Comment(d.Workload), d.Recommend, d.Plan, d.Why)
	}
	if len(c.PriceSources) > 0 {
		s.Intro += " Node prices: " + strings.Join(c.PriceSources, "; ") + "."
	}
	count := func(n int) string {
		if n == 0 {
			return "-"
		}
		return strconv.Itoa(n)
	}
	clustered := slices.ContainsFunc(c.Pools, func(p ConsolidationPool) bool { return p.Cluster != "" })
	if clustered {
		s.Header = append([]string{"Cluster"}, s.Header...)
	}
	for _, p := range c.Pools {
		row := []string{p.Model, count(p.NodesToday), count(p.NodesNeeded), strconv.Itoa(p.GPUsToday), strconv.Itoa(p.GPUsNeeded), strconv.Itoa(p.HeadroomGPUs)}
		if clustered {
			row = append([]string{clusterCell(p.Cluster)}, row...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}
