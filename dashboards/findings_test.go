package dashboards

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/source"
)

// serveSeries are the series `gpulens serve` exposes, by the names and
// labels agreed in its issue: findings, one without a known cost (so no
// savings series), and a team whose hours are allocated = used + idle.
var serveSeries = []struct {
	labels []string
	value  float64
}{
	{[]string{"__name__", "gpulens_finding", "kind", "idle-allocation", "severity", "warning", "namespace", "research-notebooks", "workload", "alice-jupyter", "node", "gpu-h100-01", "gpu_uuid", "GPU-1"}, 1},
	{[]string{"__name__", "gpulens_finding", "kind", "timeslice-oom-risk", "severity", "critical", "namespace", "batch-etl", "workload", "etl-worker", "node", "gpu-a100-01", "gpu_uuid", "GPU-2"}, 1},
	{[]string{"__name__", "gpulens_finding_monthly_savings_usd", "kind", "idle-allocation", "severity", "warning", "namespace", "research-notebooks", "workload", "alice-jupyter", "node", "gpu-h100-01", "gpu_uuid", "GPU-1"}, 5022.4},
	{[]string{"__name__", "gpulens_finding_monthly_savings_usd", "kind", "timeslice-oom-risk", "severity", "critical", "namespace", "batch-etl", "workload", "etl-worker", "node", "gpu-a100-01", "gpu_uuid", "GPU-2"}, 0},
	{[]string{"__name__", "gpulens_finding_info", "kind", "idle-allocation", "severity", "warning", "namespace", "research-notebooks", "workload", "alice-jupyter", "node", "gpu-h100-01", "gpu_uuid", "GPU-1", "summary", "research-notebooks/alice-jupyter-0 held its GPU for 24 h at 0% load: release it"}, 1},
	{[]string{"__name__", "gpulens_finding_info", "kind", "timeslice-oom-risk", "severity", "critical", "namespace", "batch-etl", "workload", "etl-worker", "node", "gpu-a100-01", "gpu_uuid", "GPU-2", "summary", "device memory at its p99 is 94% of the GPU"}, 1},
	{[]string{"__name__", "gpulens_finding_info", "kind", "mixed-gpu-models", "severity", "info", "node", "gpu-a100-01", "summary", "node gpu-a100-01 mixes GPU models"}, 1},
	{[]string{"__name__", "gpulens_finding", "kind", "mixed-gpu-models", "severity", "info", "namespace", "", "workload", "", "node", "gpu-a100-01", "gpu_uuid", ""}, 1},
	{[]string{"__name__", "gpulens_team_gpu_seconds", "team", "team-nlp", "state", "allocated"}, 3600000},
	{[]string{"__name__", "gpulens_team_gpu_seconds", "team", "team-nlp", "state", "used"}, 3240000},
	{[]string{"__name__", "gpulens_team_gpu_seconds", "team", "team-nlp", "state", "idle"}, 360000},
	{[]string{"__name__", "gpulens_team_monthly_cost_usd", "team", "team-nlp"}, 40150},
	{[]string{"__name__", "gpulens_fleet_monthly_cost_usd", "state", "used"}, 36135},
	{[]string{"__name__", "gpulens_fleet_monthly_cost_usd", "state", "idle"}, 4015},
	{[]string{"__name__", "gpulens_fleet_monthly_cost_usd", "state", "unallocated"}, 8030},
	// The report's two savings (issue 54): a freed node of 4 H100s, 4 ×
	// 6.88 × 730; an H200 and an L4 free on the nodes that stay.
	{[]string{"__name__", "gpulens_fleet_monthly_savings_usd", "kind", "banked"}, 20089.6},
	{[]string{"__name__", "gpulens_fleet_monthly_savings_usd", "kind", "capacity_freed"}, 6358.3},
	{[]string{"__name__", "gpulens_fleet_capacity_freed_gpus"}, 2},
	// gpulens reclaim's (analyzer/reclaim/metrics.go), for the Reclaim row.
	{[]string{"__name__", "gpulens_reclaim_pending"}, 1},
	{[]string{"__name__", "gpulens_reclaim_workloads_reclaimed"}, 2},
	{[]string{"__name__", "gpulens_reclaim_gpu_hours_total"}, 48},
	{[]string{"__name__", "gpulens_reclaim_usd_total"}, 330.24},
	{[]string{"__name__", "gpulens_reclaim_actions_total", "action", "reclaim", "result", "success"}, 2},
}

// TestFindingsDashboardOnServeSeries: every query of the findings
// dashboard returns data from serve's series, and its legends' labels
// exist.
func TestFindingsDashboardOnServeSeries(t *testing.T) {
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	end := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	app := db.Appender(context.Background())
	for ts := end.Add(-time.Hour); !ts.After(end); ts = ts.Add(time.Minute) {
		for _, s := range serveSeries {
			if _, err := app.Append(0, labels.FromStrings(s.labels...), ts.UnixMilli(), s.value); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	for schema, ds := range generatedOnce(t) {
		for _, d := range ds {
			if !strings.HasPrefix(*d.Uid, "gpulens-findings-") {
				continue
			}
			n := 0
			for _, q := range queries(t, d) {
				n++
				vec, err := db.Query(context.Background(), substitute(q.expr), end)
				if err != nil || len(vec) == 0 {
					t.Errorf("%s: %s / %s: %v, %v", schema, q.panel, q.ref, vec, err)
					continue
				}
				legendLabelsPresent(t, q.panel, q.legend, vec)
				if q.panel == "Team GPU-hours by state" {
					var sum float64
					for _, s := range vec {
						sum += float64(s.Value)
					}
					if sum != 1000 {
						t.Errorf("%s: stacked team hours add up to %v, want the 1000 allocated", schema, sum)
					}
				}
			}
			if n < 8 {
				t.Errorf("%s: %d queries", *d.Uid, n)
			}
		}
	}
}
