package report

import (
	"encoding/csv"
	"io"
	"time"

	"github.com/gpulens/gpulens/analyzer/ledger"
)

// LedgerCSVHeader is the ledger-csv format's columns: the hourly ledger
// (analyzer/ledger), one row per GPU, clock hour (UTC) and tenant, each
// with its charge on the allocation and on the usage basis, in the shape
// of Kubecost's allocation API at a step of 1h: a window per row
// (window_start, window_end) and the GPU's remainder as rows of two
// pseudo-tenants in the namespace column, "__idle__" (held and unused: on
// the usage basis only) and "__unallocated__" (held by nobody). So for
// every GPU and hour, its rows add up on either basis to its price × the
// part of the hour its exporter reported it (reported_hours, repeated on
// each of the GPU's rows of the hour: sum the charges, not it), and all
// rows add up to the fleet's cost, the report's reconciliation. A row of
// nothing on both bases is left out. Numbers are unrounded; a cost is
// empty where the GPU's model has no price (unknown, never 0). Where the
// analysis folded no hours (a source without range queries) a GPU's one
// window is the report's.
var LedgerCSVHeader = []string{
	"window_start", "window_end", "cluster", "node", "gpu_uuid", "model", "gpu_mode", "reported_hours",
	"team", "namespace", "pod", "container", "gpu_instance", "mode", "share",
	"allocation_gpu_hours", "allocation_cost", "usage_gpu_hours", "usage_cost", "currency",
}

// The pseudo-tenants of a GPU's remainder, as Kubecost names its own.
const (
	LedgerIdle        = "__idle__"
	LedgerUnallocated = "__unallocated__"
)

func writeLedgerCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(LedgerCSVHeader)
	if r.Ledger != nil {
		for _, g := range r.Ledger.GPUs {
			for _, h := range g.Hourly {
				// Cluster to mode and the tenant's names are the store's label
				// values: each goes through csvText, the numbers do not.
				gpu := []string{h.Start.UTC().Format(time.RFC3339), h.End.UTC().Format(time.RFC3339), csvText(g.Cluster), csvText(g.Node), csvText(g.UUID), csvText(g.Model), csvText(g.Mode), num(h.Hours)}
				row := func(tenant []string, alloc, usage ledger.Amount) {
					if alloc.GPUHours == 0 && usage.GPUHours == 0 {
						return
					}
					out := append(append(append([]string{}, gpu...), tenant...), num(alloc.GPUHours), "", num(usage.GPUHours), "", csvText(r.Currency))
					if g.PriceKnown && r.CostKnown {
						out[len(out)-4], out[len(out)-2] = num(alloc.Cost), num(usage.Cost)
					}
					_ = cw.Write(out)
				}
				for i, c := range h.Charges {
					x := g.Tenants[i]
					row([]string{csvText(x.Team), csvText(x.Namespace), csvText(x.Pod), csvText(x.Container), csvText(x.GPUInstance), csvText(x.Mode), num(x.Share)}, c.Allocation, c.Usage)
				}
				row([]string{"", LedgerIdle, "", "", "", "", ""}, h.Allocation.Idle, h.Usage.Idle)
				row([]string{"", LedgerUnallocated, "", "", "", "", ""}, h.Allocation.Unallocated, h.Usage.Unallocated)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
