package report

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/internal/safetext"
)

// CSVHeader is the CSV format's columns: one row per team, then the
// capacity no team held — a row with scope "unallocated" (its GPU-hours
// in idle_gpu_hours, its price in cost and waste) and, where GPUs were
// busy with no pod in the data, one with scope "unattributed" (in
// used_gpu_hours and cost) — and last one row with scope "cluster", the
// sum of every row above it: its cost is the fleet's, what the GPUs cost
// whoever held them. Numbers are unrounded and unitless (hours, ratios
// 0..1, the report's currency), for spreadsheets; an empty cell is
// unknown. The efficiency of the "cluster" row is the teams' (used over
// measured allocated hours), and its previous_* columns are the previous
// window's teams summed: the previous window's free capacity is not kept.
//
// Where the store holds several clusters the columns are CSVHeader and
// then one more, "cluster" (CSVClusterColumn), the row's cluster label
// value: a reader that goes by position reads the same columns as before,
// and one that goes by name finds the cluster. A team row is then a team
// of one cluster, each cluster has its own "unallocated" (and
// "unattributed") row, the "cluster" rows are one per cluster, each the
// sum of its rows, just as the one "cluster" row of a single cluster's
// report is; and a last row, scope "fleet" with an empty cluster, sums
// them all. So in either shape, team + unallocated + unattributed rows add
// up to the "cluster" rows, and the "cluster" rows to the whole fleet: a
// reader that sums a scope never counts anything twice, and a reader that
// knows nothing of clusters gets the fleet by adding up the "cluster"
// rows. The "fleet" row is there for readers that want the total without
// summing.
var CSVHeader = []string{
	"scope", "team", "namespaces", "allocations",
	"allocated_gpu_hours", "used_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours", "efficiency", "cost", "waste",
	"previous_allocated_gpu_hours", "previous_used_gpu_hours", "previous_idle_gpu_hours", "previous_unmeasured_gpu_hours",
	"previous_efficiency", "previous_cost", "previous_waste",
	"window_start", "window_end", "currency",
}

// CSVClusterColumn is the column a clustered report's CSV adds after
// CSVHeader's.
const CSVClusterColumn = "cluster"

// CSVLedgerColumns are the last columns, after CSVHeader's and the
// cluster's, so a reader by position reads what it did before them: each
// row's charges in the ledger (analyzer/ledger) on the allocation and the
// usage basis. A team row has its tenants' charges; an "unallocated" row
// the remainder of its GPUs' cost (unallocated, and on the usage basis
// idle too); an "unattributed" row none (its hours are in the ledger's
// unallocated); a "cluster" or "fleet" row the cost of the GPUs. So team
// and "unallocated" rows add up to the "cluster" row on both bases. Empty
// is unknown.
var CSVLedgerColumns = []string{"allocation_cost", "usage_cost"}

func writeCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if !r.clustered() {
		_ = cw.Write(append(slices.Clone(CSVHeader), CSVLedgerColumns...))
		allocs := 0
		for _, t := range r.Teams {
			allocs += t.Allocations
			_ = cw.Write(append(r.csvRow("team", t.Team, strings.Join(t.Namespaces, " "), t.Allocations, t.Hours, t.Previous), r.csvTeamCharges(t)...))
		}
		for _, row := range r.csvCapacityRows(r.Cluster) {
			_ = cw.Write(append(row, r.csvRemainder(row[0], "", true, r.Cluster)...))
		}
		_ = cw.Write(append(r.csvRow("cluster", "", "", allocs, whole(r.Cluster), r.Cluster.Previous), r.csvRemainder("cluster", "", true, r.Cluster)...))
		cw.Flush()
		return cw.Error()
	}
	_ = cw.Write(append(append(slices.Clone(CSVHeader), CSVClusterColumn), CSVLedgerColumns...))
	allocs := map[string]int{}
	for _, t := range r.Teams {
		allocs[t.Cluster] += t.Allocations
		_ = cw.Write(append(r.csvRow("team", t.Team, strings.Join(t.Namespaces, " "), t.Allocations, t.Hours, t.Previous), append([]string{csvText(t.Cluster)}, r.csvTeamCharges(t)...)...))
	}
	total := 0
	for _, c := range r.Clusters {
		total += allocs[c.Name]
		for _, row := range r.csvCapacityRows(c.Cluster) {
			_ = cw.Write(append(row, append([]string{csvText(c.Name)}, r.csvRemainder(row[0], c.Name, false, c.Cluster)...)...))
		}
		_ = cw.Write(append(r.csvRow("cluster", "", "", allocs[c.Name], whole(c.Cluster), c.Previous), append([]string{csvText(c.Name)}, r.csvRemainder("cluster", c.Name, false, c.Cluster)...)...))
	}
	_ = cw.Write(append(r.csvRow("fleet", "", "", total, whole(r.Cluster), r.Cluster.Previous), append([]string{""}, r.csvRemainder("fleet", "", true, r.Cluster)...)...))
	cw.Flush()
	return cw.Error()
}

// csvText is a cell of text from the data (a team, namespaces, a
// cluster), kept from being read as a formula (safetext.CSVCell). Numbers
// are written by num and never pass here.
var csvText = safetext.CSVCell

func (r *Report) csvRow(scope, team, namespaces string, allocs int, u rollup.Hours, prev *rollup.Hours) []string {
	row := []string{scope, csvText(team), csvText(namespaces), strconv.Itoa(allocs)}
	row = append(row, r.csvUsage(&u)...)
	row = append(row, r.csvUsage(prev)...)
	return append(row, r.Window.Start.Format(time.RFC3339), r.Window.End.Format(time.RFC3339), r.currency())
}

// csvUsage is allocated, used, idle, unmeasured, efficiency, cost, waste.
// cost and waste are empty when unknown: without a price table, or when
// any of the row's hours had no price (a partial sum would read as the
// whole; the JSON format has the priced part and what is unpriced).
func (r *Report) csvUsage(u *rollup.Hours) []string {
	if u == nil {
		return make([]string, 7)
	}
	money := func(v float64) string {
		if !r.CostKnown || u.Unpriced != nil {
			return ""
		}
		return num(v)
	}
	eff := ""
	if u.Efficiency != nil {
		eff = num(*u.Efficiency)
	}
	return []string{num(u.AllocatedGPUHours), num(u.UsedGPUHours), num(u.IdleGPUHours), num(u.UnmeasuredGPUHours), eff, money(u.Cost), money(u.Waste)}
}

func (r *Report) currency() string {
	if !r.CostKnown {
		return ""
	}
	return r.Currency
}

// num prints the shortest text that parses back to v, as encoding/json
// does, so CSV and JSON agree exactly.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvCapacityRows are the capacity no team held: unallocated GPUs (idle,
// and waste at their price) and, where there was any, GPUs in use by a
// tenant the data does not name (used, not waste).
func (r *Report) csvCapacityRows(c rollup.Cluster) [][]string {
	priced := c.CapacityUnpriced == nil
	free := rollup.Hours{IdleGPUHours: c.UnallocatedGPUHours, Cost: c.UnallocatedCost, Waste: c.UnallocatedCost, CostKnown: priced}
	if !priced {
		free.Unpriced = c.CapacityUnpriced
	}
	rows := [][]string{r.csvRow("unallocated", "", "", 0, free, nil)}
	if c.UnattributedGPUHours > 0 {
		used := rollup.Hours{UsedGPUHours: c.UnattributedGPUHours, Cost: c.UnattributedCost, CostKnown: priced, Unpriced: free.Unpriced}
		rows = append(rows, r.csvRow("unattributed", "", "", 0, used, nil))
	}
	return rows
}

// whole is the cluster's row: its teams' hours with the capacity no team
// held added (csvCapacityRows), costing what the fleet cost. A cost with
// an unpriced part is unknown, as each row's is.
func whole(c rollup.Cluster) rollup.Hours {
	w := c.Hours
	w.IdleGPUHours += c.UnallocatedGPUHours
	w.UsedGPUHours += c.UnattributedGPUHours
	w.Cost, w.Waste = c.CapacityCost, c.EstimatedWaste
	if c.CapacityUnpriced != nil && w.Unpriced == nil {
		w.Unpriced = c.CapacityUnpriced
	}
	return w
}

// csvTeamCharges are a team's CSVLedgerColumns, empty where its cost is.
func (r *Report) csvTeamCharges(t rollup.Team) []string {
	if !r.CostKnown || t.Unpriced != nil {
		return []string{"", ""}
	}
	return []string{num(t.AllocationCost), num(t.UsageCost)}
}

// csvRemainder are the CSVLedgerColumns of a row of scope that is no
// team's, of one cluster (or all): the GPUs' remainder on each basis for
// an "unallocated" row, their cost for a "cluster" or "fleet" row.
func (r *Report) csvRemainder(scope, cluster string, all bool, c rollup.Cluster) []string {
	if !r.CostKnown || c.CapacityUnpriced != nil || r.Ledger == nil || scope == "unattributed" {
		return []string{"", ""}
	}
	var out []string
	for _, b := range ledger.Bases {
		t := r.ledgerTotals(b, cluster, all)
		v := t.Cost.Cost
		if scope == "unallocated" {
			v = t.Idle.Cost + t.Unallocated.Cost
		}
		out = append(out, num(v))
	}
	return out
}
