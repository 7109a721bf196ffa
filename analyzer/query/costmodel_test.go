package query

import (
	"context"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/prometheus/prometheus/promql"
)

// TestCostModelHolds: the shard planner sizes shards from perSeriesStep,
// points per probed GPU or allocation and step. Every pass query's peak
// samples, as the engine counts them (what --query.max-samples limits), is
// measured on the demo fleet and must stay within it, or a shard sized to
// a server's limit fails against it. `go test ./analyzer/query -run
// CostModel -v` prints the ratios (docs/BENCHMARKS.md quotes them).
func TestCostModelHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet three times")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(3 * time.Hour), Step: time.Minute}
	for _, m := range []struct {
		name   string
		sch    signals.Schema
		layout simfleet.DCGMLayout
	}{
		{"native", native.Schema{}, 0},
		{"dcgm/one-pod", dcgm.Schema{}, simfleet.DCGMNoVirtualGPUs},
		{"dcgm/per-process", dcgm.Schema{}, simfleet.DCGMVirtualGPUs2025},
	} {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			simulateDemo(t, db, w, m.sch, m.layout, true)
			ww, err := w.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			a := newAnalysis(m.sch, ww)
			units, err := a.probe(ctx, db, Scope{}, m.sch)
			if err != nil {
				t.Fatal(err)
			}
			var probed float64
			for _, u := range units {
				probed += u.weight
			}
			unitSteps := probed * float64(ww.ExpectedSteps())
			ng := bareEngine(source.EmbeddedOptions{})
			peakOf := func(q namedQuery) int {
				var qry promql.Query
				if q.series != nil {
					qry, err = ng.NewRangeQuery(ctx, db, nil, q.expr, ww.Start, ww.End, ww.Step)
				} else {
					qry, err = ng.NewInstantQuery(ctx, db, nil, q.expr, ww.End)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer qry.Close()
				if res := qry.Exec(ctx); res.Err != nil {
					t.Fatalf("%s: %v", q.name, res.Err)
				}
				return qry.Stats().Samples.PeakSamples
			}
			for _, q := range a.passQueries(m.sch) {
				if namespaceQuery(q.name, a.ownerQueries(m.sch, false)) {
					continue // kube-state-metrics' series: not in the model
				}
				peak := peakOf(q)
				ratio := float64(peak) / unitSteps
				t.Logf("%s: peak %d samples, %.2f per probed series-step (budgeted %.2f)", q.name, peak, ratio, perSeriesStep(m.sch))
				if ratio > perSeriesStep(m.sch) {
					t.Errorf("%s: %.2f points per probed series-step, over the planner's %.2f", q.name, ratio, perSeriesStep(m.sch))
				}
			}
			// The workload scans the namespace shards run (unsharded on
			// dcgm-exporter's data): printed, for BENCHMARKS.md.
			for _, q := range a.workloadQueries(m.sch) {
				t.Logf("%s (namespace scan): peak %d samples", q.name, peakOf(q))
			}
		})
	}
}
