package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/vocab"
)

// section is a titled table of text cells, what the table and Markdown
// renderers print and the HTML page lays out, so the three show the same
// rows and columns.
type section struct {
	ID     string
	Title  string
	Intro  string
	Header []string
	Rows   [][]string
	// Empty is said instead of a table without rows.
	Empty string
	// Wide are the columns (by header) the terminal table shows with -o
	// wide only, and Wrap those whose prose it wraps to fit 120 columns
	// (internal/termtable); Markdown and HTML show every column whole.
	Wide, Wrap []string
	// Below is a column the default table prints under itself instead, a
	// paragraph a row, after the row's first cell (the rank): a sentence
	// reads better 120 columns wide than in the last 30 of them.
	Below string
}

// maxFindings bounds the findings a human-readable report lists; the JSON
// has them all.
const maxFindings = 20

func (r *Report) title() string { return "GPU utilization report" }

// subtitle is the report's first line under the title: its window and prices.
func (r *Report) subtitle() string {
	s := fmt.Sprintf("%s, %s schema.", r.Window, r.Schema)
	if r.CostKnown {
		s += fmt.Sprintf(" Prices: %s", r.Currency)
		if r.PricesDate != "" {
			s += " as of " + r.PricesDate
		}
		s += "."
	} else {
		s += " No price table: costs are unknown."
	}
	if len(r.UnpricedModels) > 0 {
		s += " No price for " + strings.Join(r.UnpricedModels, ", ") + ": their hours count, their cost does not."
	}
	return s
}

func (r *Report) sections() []section {
	s := []section{r.summarySection(), r.fleetSection(), r.teamSection(), r.reconciliationSection(), r.recommendationSection(), r.findingSection(), r.coverageSection()}
	if r.Consolidation != nil {
		s = append(s[:4:4], append([]section{r.consolidationSection()}, s[4:]...)...)
	}
	if r.clustered() {
		s = append(s[:1:1], append([]section{r.clustersSection()}, s[1:]...)...)
	}
	if r.ReclaimPreview != nil {
		s = append(s, r.reclaimSection())
	}
	return s
}

// clustered says the store holds several clusters: the tables then have a
// Cluster column, and the report a summary per cluster. A report of one
// cluster has neither, and reads as it did before clusters were known.
func (r *Report) clustered() bool { return len(r.Clusters) > 0 }

// withCluster puts the cluster cell first in a row (or header) where the
// report is clustered; rows of one cluster are left as they are.
func (r *Report) withCluster(cluster string, row []string) []string {
	if !r.clustered() {
		return row
	}
	return append([]string{cluster}, row...)
}

// clusterCell names a cluster in a table: its label value, or what stands
// for the series without one.
func clusterCell(c string) string { return cmp.Or(c, "(no cluster label)") }

func (r *Report) summarySection() section {
	c := r.Cluster
	rows := [][]string{
		{"GPUs", strconv.Itoa(c.GPUs)},
		{"Capacity", gpuHours(c.CapacityGPUHours) + " GPU-h"},
		{"Allocated", gpuHours(c.AllocatedGPUHours) + " GPU-h"},
		{"Unallocated", gpuHours(c.UnallocatedGPUHours) + " GPU-h"},
	}
	if c.UnattributedGPUHours > 0 {
		// In use with no pod seen: neither free capacity nor a team's.
		rows = append(rows, []string{"In use, tenant not in the data", gpuHours(c.UnattributedGPUHours) + " GPU-h (" + r.money(c.UnattributedCost) + ", not counted as waste)"})
	}
	rows = append(rows, [][]string{
		{"Used by allocations", gpuHours(c.UsedGPUHours) + " GPU-h"},
		{"Allocation efficiency", efficiency(c.Efficiency)},
		{"Average GPU utilization", percent(c.AvgUtilization)},
		{"Cost of the fleet, a month", r.moneyOf(r.perMonth(c.CapacityCost), c.CapacityUnpriced)},
		{"Waste, a month", r.waste(c)},
		{"Saved when the freed nodes go, a month", r.bankedCell()},
		{"Capacity freed for other work, a month", r.capacityCell()},
	}...)
	if v := r.Findings.ReliabilityMonthlyCost; v > 0 && r.CostKnown {
		rows = append(rows, []string{"Reliability changes, a month", r.money(v) + " more (a GPU of its own where sharing risks running out of memory)"})
	}
	if c.Change != nil {
		rows = append(rows, []string{"Allocated vs previous window", delta(c.Change.AllocatedGPUHours, c.Previous.AllocatedGPUHours, 1, " GPU-h")},
			[]string{"Efficiency vs previous window", points(c.Change.EfficiencyPoints)})
	}
	title := "Cluster summary"
	if r.clustered() {
		title = "Fleet summary"
	}
	return section{ID: "summary", Title: title, Header: []string{"Figure", "Value"}, Rows: rows, Wrap: []string{"Value"},
		Intro: "Every money figure is a month's (730 hours), the window's scaled. Waste is GPU time paid for and not used: idle allocations and unallocated GPUs. " +
			"The savings are the consolidation plan's, of the fleet after the advice (released allocations gone, the rest packed by their use): " +
			"the freed nodes' price leaves the bill when they go; the GPUs freed on nodes that stay are capacity for other work, paid for all the same."}
}

// waste is the window's waste, idle allocations and unallocated capacity,
// each known, partial or unknown as its prices are.
func (r *Report) waste(c rollup.Cluster) string {
	if u := c.CapacityUnpriced; r.CostKnown && u != nil && !u.Partial {
		return unknownMoney(u.Models) // no part of it known: said once
	}
	return r.moneyOf(r.perMonth(c.EstimatedWaste), c.CapacityUnpriced) + " (idle allocations " + r.moneyOf(r.perMonth(c.Waste), c.Unpriced) +
		", unallocated " + r.moneyOf(r.perMonth(c.UnallocatedCost), c.CapacityUnpriced) + ")"
}

// fleetCost is a model's cost, unknown without its price.
func (r *Report) fleetCost(m rollup.ModelFleet) string {
	if r.CostKnown && !m.CostKnown {
		return unknownMoney([]string{m.Model})
	}
	return r.money(m.Cost)
}

// clustersSection is the summary of each cluster, beside the fleet's:
// its rows add up to the fleet summary's figures.
func (r *Report) clustersSection() section {
	s := section{ID: "clusters", Title: "Clusters",
		Intro: "Each cluster of the store on its own; together they are the fleet summary. Waste is idle allocations plus unallocated GPUs; savings are the cluster's part of the saving banked when the freed nodes go, a month (the consolidation plan's).",
		Header: []string{"Cluster", "GPUs", "Capacity GPU-h", "Allocated GPU-h", "Unallocated GPU-h", "Used GPU-h", "Efficiency",
			"Avg util", "Cost of the GPUs", "Waste", "Savings/month", "Δ Allocated GPU-h", "Δ Efficiency"},
		Wide: []string{"Capacity GPU-h", "Unallocated GPU-h", "Used GPU-h", "Avg util"}}
	for _, c := range r.Clusters {
		dAlloc, dEff := "n/a", "n/a"
		if c.Change != nil {
			dAlloc, dEff = delta(c.Change.AllocatedGPUHours, c.Previous.AllocatedGPUHours, 1, ""), points(c.Change.EfficiencyPoints)
		}
		s.Rows = append(s.Rows, []string{clusterCell(c.Name), strconv.Itoa(c.GPUs), gpuHours(c.CapacityGPUHours), gpuHours(c.AllocatedGPUHours),
			gpuHours(c.UnallocatedGPUHours), gpuHours(c.UsedGPUHours), efficiency(c.Efficiency), percent(c.AvgUtilization),
			r.moneyOf(c.CapacityCost, c.CapacityUnpriced), r.moneyOf(c.EstimatedWaste, c.CapacityUnpriced), r.bankedOf(c.Name), dAlloc, dEff})
	}
	return s
}

func (r *Report) fleetSection() section {
	s := section{ID: "fleet", Title: "Fleet by GPU model", Header: r.withCluster("Cluster", []string{"Model", "GPUs", "Capacity GPU-h", "Allocated GPU-h", "Unallocated GPU-h", "Avg util", "Price/GPU-h", "Cost", "Price source"}),
		Wide: []string{"Price source"}}
	for _, m := range r.Fleet {
		s.Rows = append(s.Rows, r.withCluster(clusterCell(m.Cluster), []string{m.Model, strconv.Itoa(m.GPUs), gpuHours(m.CapacityGPUHours), gpuHours(m.AllocatedGPUHours),
			gpuHours(m.UnallocatedGPUHours), percent(m.AvgUtilization), r.price(m.PricePerHour), r.fleetCost(m), cmp.Or(m.PriceSource, "-")}))
	}
	return s
}

func (r *Report) teamSection() section {
	s := section{ID: "teams", Title: "Teams", Empty: "No allocations in the window.",
		Intro:  "Used GPU-hours are allocated GPU-hours × utilization (capped at 1); efficiency is used over measured; unmeasured hours had no utilization sample.",
		Header: r.withCluster("Cluster", []string{"Team", "Namespaces", "Allocated GPU-h", "Used GPU-h", "Efficiency", "Idle GPU-h", "Unmeasured GPU-h", r.costHeader(), "Waste", "Δ Allocated GPU-h", "Δ Efficiency"}),
		Wide:   []string{"Namespaces", "Idle GPU-h", "Unmeasured GPU-h"}}
	for _, t := range r.Teams {
		dAlloc, dEff := "n/a", "n/a"
		if t.Change != nil {
			dAlloc, dEff = delta(t.Change.AllocatedGPUHours, t.Previous.AllocatedGPUHours, 1, ""), points(t.Change.EfficiencyPoints)
		}
		s.Rows = append(s.Rows, r.withCluster(clusterCell(t.Cluster), []string{t.Team, strings.Join(t.Namespaces, ", "), gpuHours(t.AllocatedGPUHours), gpuHours(t.UsedGPUHours),
			efficiency(t.Efficiency), gpuHours(t.IdleGPUHours), gpuHours(t.UnmeasuredGPUHours), r.moneyOf(r.teamCost(t), t.Unpriced), r.moneyOf(t.Waste, t.Unpriced), dAlloc, dEff}))
	}
	return s
}

func (r *Report) recommendationSection() section {
	s := section{ID: "recommendations", Title: "Top recommendations", Empty: "No recommendation saves money.",
		Header: r.recommendationHeader(), Wide: []string{"Team"}, Wrap: []string{"Change", "Why"}, Below: "Why"}
	for i, x := range r.Recommendations {
		change := x.From + " → " + x.To
		if x.From == "" && x.To == "" {
			change = x.Action
		} else if x.Allocation == vocab.AllocationPathDRA {
			// Made in the claim, not the container's limits.
			change += " (" + cmp.Or(x.Claim, "DRA claim") + ")"
		}
		savings := r.money(x.MonthlySavings)
		if !x.CostKnown && r.CostKnown {
			savings = unknownMoney([]string{cmp.Or(x.Model, "its GPU")})
		}
		row := []string{strconv.Itoa(i + 1), x.Team, x.Workload, change, savings, x.Summary}
		if r.clustered() {
			row = append(row[:1:1], append([]string{clusterCell(x.Cluster)}, row[1:]...)...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// recommendationHeader is the recommendations' columns, the cluster's
// after the rank where the report is clustered.
func (r *Report) recommendationHeader() []string {
	if r.clustered() {
		return []string{"#", "Cluster", "Team", "Workload", "Change", "Savings/month", "Why"}
	}
	return []string{"#", "Team", "Workload", "Change", "Savings/month", "Why"}
}

func (r *Report) findingSection() section {
	f := r.Findings
	s := section{ID: "findings", Title: "Findings", Empty: "No findings.",
		Intro:  fmt.Sprintf("%d critical, %d warning, %d info.", f.Critical, f.Warning, f.Info),
		Header: r.findingHeader(), Wide: []string{"Kind", "Team", "Allocation"}, Wrap: []string{"Summary"}}
	for i, x := range f.Items {
		if i == maxFindings {
			s.Intro += fmt.Sprintf(" The %d most severe are listed; the JSON format has all %d.", maxFindings, len(f.Items))
			break
		}
		row := []string{x.Severity, string(x.Kind), x.Team, x.Subject, allocationOf(x), x.Summary}
		if r.clustered() {
			row = append(row[:2:2], append([]string{clusterCell(x.Cluster)}, row[2:]...)...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// findingHeader is the findings' columns, the cluster's before the team's
// where the report is clustered.
func (r *Report) findingHeader() []string {
	if r.clustered() {
		return []string{"Severity", "Kind", "Cluster", "Team", "Subject", "Allocation", "Summary"}
	}
	return []string{"Severity", "Kind", "Team", "Subject", "Allocation", "Summary"}
}

func (r *Report) coverageSection() section {
	c := r.Coverage
	rows := [][]string{
		{"GPUs reporting the whole window", fmt.Sprintf("%d of %d (average coverage %s)", c.GPUsFullyCovered, c.GPUs, percent(c.AvgGPUCoverage))},
		{"Allocations with utilization", fmt.Sprintf("%d of %d", c.AllocationsWithUtilization, c.Allocations)},
		{"Workloads", workloadSources(c)},
		{"Allocation paths", allocationPaths(c)},
		{"Resolution", fmt.Sprintf("%ds steps, %d in the window", c.StepSeconds, c.ExpectedSteps)},
	}
	rows = append(rows, absentRows(c.AbsentGPUs)...)
	for _, n := range c.Notes {
		rows = append(rows, []string{"Note", n})
	}
	for _, n := range r.Findings.Skipped {
		rows = append(rows, []string{"Not checked", n})
	}
	return section{ID: "coverage", Title: "Data coverage", Header: []string{"Figure", "Value"}, Rows: rows, Wrap: []string{"Value"}}
}

// allocationOf is a finding's allocation path for tables: the device
// plugin, or DRA with its claim when there is one, "-" where the finding
// is not a workload's.
func allocationOf(f Finding) string {
	switch {
	case f.AllocationPath == "":
		return "-"
	case len(f.Claims) == 1:
		return string(f.AllocationPath) + " (" + f.Claims[0] + ")"
	case len(f.Claims) > 1:
		return fmt.Sprintf("%s (%d claims)", f.AllocationPath, len(f.Claims))
	}
	return string(f.AllocationPath)
}

// allocationPaths says how many workloads held their GPUs through each
// allocation path.
func allocationPaths(c Coverage) string {
	var parts []string
	if n := c.AllocationPaths[string(vocab.AllocationPathDevicePlugin)]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d through the device plugin", n))
	}
	if n := c.AllocationPaths[string(vocab.AllocationPathDRA)]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d through DRA ResourceClaims (their GPUs are reconfigured through the claims, not device plugin or MIG manager node labels)", n))
	}
	if len(parts) == 0 {
		return "no workload held a GPU"
	}
	return strings.Join(parts, ", ")
}

// workloadSources says how the workloads were resolved, and what pod names
// cannot tell.
func workloadSources(c Coverage) string {
	s := fmt.Sprintf("%d, from %d allocations", c.Workloads, c.Allocations)
	var parts []string
	if n := c.WorkloadSources["api"]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d owners read from the API", n))
	}
	if n := c.WorkloadSources["kube-state-metrics"]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d from kube-state-metrics' kube_pod_owner", n))
	}
	if n := c.WorkloadSources["pod-name"]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d inferred from pod names (a DaemonSet's pods read as a Job's)", n))
	}
	if len(parts) > 0 {
		s += "; " + strings.Join(parts, ", ")
	}
	return s
}
