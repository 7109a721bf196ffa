package query_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/exporter/sim"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// TestTimelineFoldMatchesEngine: the utilization over time folded out of
// the analysis's own passes (Sharding.TimelinePoints) is the engine's
// (ReadTimeline's two range queries over the same store), bucket for
// bucket, for both schemas, unsharded and in forced node shards, on a
// window aligned to the steps and on one that is not, with bucket counts
// that do and do not divide it.
func TestTimelineFoldMatchesEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	data := fleet.Window{Start: start, End: start.Add(4 * time.Hour), Step: time.Minute}
	schemas := []struct {
		sch  signals.Schema
		wrap func(string, *simfleet.TSDBSink) simfleet.Sink
	}{
		{native.Schema{}, nil},
		{dcgm.Schema{}, func(_ string, tsdb *simfleet.TSDBSink) simfleet.Sink {
			d := simfleet.NewDCGMSink(tsdb)
			d.Layout, d.Install.Era = simfleet.DCGMVirtualGPUs2025, dcgm.Era49
			return d
		}},
	}
	for _, s := range schemas {
		db := simulate(t, sim.Default(), data, s.wrap)
		for _, c := range []struct {
			w      fleet.Window
			points int
		}{
			{fleet.Window{Start: start.Add(time.Hour), End: start.Add(4 * time.Hour), Step: time.Minute}, 12},
			{fleet.Window{Start: start.Add(time.Hour + 30*time.Second), End: start.Add(3*time.Hour + 30*time.Second), Step: time.Minute}, 7},
		} {
			w, points := c.w, c.points
			{
				want, err := query.ReadTimeline(context.Background(), db, s.sch, w, points)
				if err != nil {
					t.Fatal(err)
				}
				for _, sh := range []query.Sharding{{TimelinePoints: points}, {TimelinePoints: points, MaxNodes: 1}} {
					res, err := query.AnalyzeSharded(context.Background(), db, s.sch, w, sh)
					if err != nil {
						t.Fatal(err)
					}
					name := s.sch.Name() + " " + w.Start.Format(time.TimeOnly) + " " + time.Duration(points).String()
					sameTimeline(t, name, res.Timeline, want)
				}
			}
		}
	}
}

func sameTimeline(t *testing.T, name string, got, want *fleet.Timeline) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no timeline folded", name)
	}
	if got.Step != want.Step || len(got.Ends) != len(want.Ends) || !got.Ends[0].Equal(want.Ends[0]) {
		t.Fatalf("%s: buckets of %s ending %v, want %s ending %v", name, got.Step, got.Ends, want.Step, want.Ends)
	}
	if len(got.Namespaces) != len(want.Namespaces) || len(want.Namespaces) < 5 {
		t.Fatalf("%s: %d namespaces, want %d (at least 5)", name, len(got.Namespaces), len(want.Namespaces))
	}
	for i, w := range want.Namespaces {
		g := got.Namespaces[i]
		if g.Namespace != w.Namespace {
			t.Fatalf("%s: namespace %q, want %q", name, g.Namespace, w.Namespace)
		}
		for j := range w.Measured {
			if !close(g.Measured[j], w.Measured[j]) || !close(g.Used[j], w.Used[j]) {
				t.Errorf("%s: %s bucket %d: measured %v used %v, want %v and %v", name, w.Namespace, j, g.Measured[j], g.Used[j], w.Measured[j], w.Used[j])
			}
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
