package query_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/exporter/sim"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
)

// TestScenarioPassesMatchScans simulates the demo's fleet and the
// findings' scenario, workload and XID days, as gpulens and as each dcgm-exporter layout would have
// exposed them, and expects the passes and the subquery per figure to give
// the same Result (TestPassesMatchScans's comparison).
func TestScenarioPassesMatchScans(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every scenario day in four layouts")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(24 * time.Hour), Step: 5 * time.Minute}
	layouts := []struct {
		name   string
		sch    signals.Schema
		layout simfleet.DCGMLayout
	}{
		{"native", native.Schema{}, 0},
		{"dcgm", dcgm.Schema{}, simfleet.DCGMNoVirtualGPUs},
		{"dcgm-virtual-gpus", dcgm.Schema{}, simfleet.DCGMVirtualGPUs},
		{"dcgm-virtual-gpus-2025", dcgm.Schema{}, simfleet.DCGMVirtualGPUs2025},
	}
	files, err := filepath.Glob("../findings/testdata/scenarios/*.yaml")
	more, _ := filepath.Glob("../findings/testdata/workloads/*.yaml")
	files = append(files, more...)
	// The XIDs' holders: a GPU taken in turns and a time-sliced one.
	more, _ = filepath.Glob("../findings/testdata/xid/*.yaml")
	files = append(files, more...)
	if err != nil || len(files) < 10 {
		t.Fatalf("scenarios: %v, %d files", err, len(files))
	}
	for _, file := range append([]string{"demo"}, files...) {
		// "demo" is gpulens demo's own fleet, over a day.
		s := sim.Default()
		if file != "demo" {
			if s, err = sim.Load(file); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range layouts {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml")+"/"+l.name, func(t *testing.T) {
				ctx := context.Background()
				var wrap func(string, *simfleet.TSDBSink) simfleet.Sink
				if l.sch.Name() == dcgm.SchemaName {
					wrap = func(_ string, tsdb *simfleet.TSDBSink) simfleet.Sink {
						d := simfleet.NewDCGMSink(tsdb)
						d.Layout = l.layout
						return d
					}
				}
				db := simulate(t, s, w, wrap)
				scans, err := query.AnalyzeScans(ctx, db, l.sch, w)
				if err != nil {
					t.Fatal(err)
				}
				passes, err := query.AnalyzePasses(ctx, db, l.sch, w)
				if err != nil {
					t.Fatal(err)
				}
				if len(scans.Allocations) == 0 {
					t.Fatal("no allocations: the scenario proves nothing")
				}
				for _, d := range query.ResultDiff(scans, passes) {
					t.Error(d)
				}
			})
		}
	}
}

// TestRolloutWithoutStalenessPassesMatchScans: a pod replaced on the same
// whole GPU, scraped every minute into a store without staleness markers,
// so that the old pod lingers beside the new one for the lookback. The
// layout must be the one that lasted (one tenant, or the layout's own),
// never copies, and the passes (the sustain rule in Go) must agree with
// the scans (min_over_time within max_over_time in the engine).
func TestRolloutWithoutStalenessPassesMatchScans(t *testing.T) {
	s, err := sim.Load("../findings/testdata/workloads/rollout-same-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(6 * time.Hour), Step: time.Minute}
	for _, l := range []struct {
		layout simfleet.DCGMLayout
		want   string
	}{
		{simfleet.DCGMNoVirtualGPUs, fleet.AttributionOneTenant},
		{simfleet.DCGMVirtualGPUs, fleet.AttributionOneTenant},
		{simfleet.DCGMVirtualGPUs2025, fleet.AttributionPerProcess},
	} {
		t.Run(l.layout.String(), func(t *testing.T) {
			ctx := context.Background()
			db := simulate(t, s, w, func(_ string, tsdb *simfleet.TSDBSink) simfleet.Sink {
				d := simfleet.NewDCGMSink(tsdb.WithoutStaleness())
				d.Layout = l.layout
				return d
			})
			scans, err := query.AnalyzeScans(ctx, db, dcgm.Schema{}, w)
			if err != nil {
				t.Fatal(err)
			}
			passes, err := query.AnalyzePasses(ctx, db, dcgm.Schema{}, w)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range query.ResultDiff(scans, passes) {
				t.Error(d)
			}
			if len(passes.GPUs) != 1 || passes.GPUs[0].Attribution != l.want || passes.GPUs[0].Sharing != vocab.SharingNone {
				t.Errorf("GPUs %+v: want one whole GPU attributed %s", passes.GPUs, l.want)
			}
			for _, a := range passes.Allocations {
				if a.Sharing != vocab.SharingNone || a.Share != 1 {
					t.Errorf("%s: %s share %v, want the whole GPU it held alone but for the lookback", a.Pod, a.Sharing, a.Share)
				}
			}
		})
	}
}
