package query_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/internal/fleet"
)

// TestScenarioPassesMatchScans simulates the demo's fleet and the
// findings' scenario and workload days, as gpulens and as each dcgm-exporter layout would have
// exposed them, and expects the passes and the subquery per figure to give
// the same Result (TestPassesMatchScans's comparison).
func TestScenarioPassesMatchScans(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every scenario day in four layouts")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := query.Window{Start: start, End: start.Add(24 * time.Hour), Step: 5 * time.Minute}
	layouts := []struct {
		name   string
		sch    schema.Schema
		layout fleet.DCGMLayout
	}{
		{"native", schema.Native{}, 0},
		{"dcgm", schema.DCGM{}, fleet.DCGMNoVirtualGPUs},
		{"dcgm-virtual-gpus", schema.DCGM{}, fleet.DCGMVirtualGPUs},
		{"dcgm-virtual-gpus-2025", schema.DCGM{}, fleet.DCGMVirtualGPUs2025},
	}
	files, err := filepath.Glob("../findings/testdata/scenarios/*.yaml")
	more, _ := filepath.Glob("../findings/testdata/workloads/*.yaml")
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
				db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var n atomic.Int64
				err = fleet.Run(ctx, fleet.Options{Scenario: s, Start: w.Start, End: w.End, Step: w.Step}, func(string) fleet.Sink {
					var sink fleet.Sink = fleet.NewTSDBSink(ctx, db, &n)
					if l.sch.Name() == schema.NameDCGM {
						d := fleet.NewDCGMSink(sink)
						d.Layout = l.layout
						sink = d
					}
					return sink
				})
				if err != nil {
					t.Fatal(err)
				}
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
