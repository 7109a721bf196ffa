package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/gpulens/gpulens/analyzer/findings"
)

// recommendCSVHeader names the columns of 'gpulens recommend -o csv': one
// row per finding, the columns of the JSON form that fit a cell, for a
// spreadsheet or a ticket import. Money cells are empty where the price
// is unknown, never 0.
var recommendCSVHeader = []string{"cluster", "kind", "severity", "namespace", "workload", "workload_kind", "pod", "container",
	"node", "gpu_uuid", "model", "summary", "action", "from", "to", "monthly_cost_usd", "monthly_savings_usd", "confidence"}

func writeRecommendCSV(w io.Writer, fs []findings.Finding) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(recommendCSVHeader); err != nil {
		return err
	}
	for _, f := range fs {
		var action, from, to string
		if r := f.Recommendation; r != nil {
			action, from, to = string(r.Action), r.From, r.To
		}
		cost, savings := "", ""
		if f.CostKnown {
			cost, savings = money(f.MonthlyCostUSD), money(f.MonthlySavingsUSD)
		}
		row := []string{f.Cluster, string(f.Kind), string(f.Severity), f.Namespace, f.Workload, f.WorkloadKind, f.Pod, f.Container,
			f.Node, f.GPUUUID, f.Model, f.Summary, action, from, to}
		// Every text cell comes from the store or is built from it: a
		// value such as =HYPERLINK(...) would run as a formula. The
		// numbers are ours, and a saving may be negative.
		for i := range row {
			row[i] = csvText(row[i])
		}
		row = append(row, cost, savings, strconv.FormatFloat(f.Confidence, 'f', 2, 64))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func money(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
