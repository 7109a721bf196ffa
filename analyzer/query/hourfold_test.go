package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"
)

// TestHourFold: the hours the passes fold for the hourly ledger
// (Sharding.Lanes) add up to the window's figures for every GPU and
// allocation, and each GPU's hour is the engine's count of the steps it
// reported in that hour (count_over_time over the hour, whose range
// (t−1h, t] is the steps HourGrid puts in the hour ending at t), unsharded
// and in forced node shards, on a window aligned to the hour and on one
// that is not.
func TestHourFold(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	sch := native.Schema{}
	db := simulate(t, sim.Default(), fleet.Window{Start: start, End: start.Add(4 * time.Hour), Step: time.Minute}, nil)
	for _, w := range []fleet.Window{
		{Start: start.Add(time.Hour), End: start.Add(4 * time.Hour), Step: time.Minute},
		{Start: start.Add(time.Hour + 30*time.Second), End: start.Add(3*time.Hour + 30*time.Second), Step: time.Minute},
	} {
		h0, hours := w.HourGrid()
		if !h0.Equal(start.Add(time.Hour)) || hours != int(w.Duration().Round(time.Hour)/time.Hour) {
			t.Fatalf("window from %s: hour grid from %s, %d hours", w.Start.Format(time.TimeOnly), h0.Format(time.TimeOnly), hours)
		}
		// The engine's steps per GPU and hour.
		want := map[fleet.GPUKey][]float64{}
		for h := range hours {
			end := h0.Add(time.Duration(h+1) * time.Hour)
			vec, err := db.Query(context.Background(), "count_over_time(("+signals.MaxBy(signals.GPUKey, sch.GPU())+")[1h:1m])", end)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range vec {
				k := fleet.GPUKey{Node: string(s.Metric[signals.LabelNode]), UUID: string(s.Metric[signals.LabelUUID])}
				if want[k] == nil {
					want[k] = make([]float64, hours)
				}
				want[k][h] = float64(s.Value) / 60
			}
		}
		for _, sh := range []query.Sharding{{Lanes: true}, {Lanes: true, MaxNodes: 1}} {
			res, err := query.AnalyzeSharded(context.Background(), db, sch, w, sh)
			if err != nil {
				t.Fatal(err)
			}
			name := w.Start.Format(time.TimeOnly)
			if sh.MaxNodes > 0 {
				name += ", node shards"
			}
			if len(res.GPUs) < 5 || len(res.Allocations) < 5 {
				t.Fatalf("%s: %d GPUs and %d allocations, want 5 of each at least", name, len(res.GPUs), len(res.Allocations))
			}
			for _, g := range res.GPUs {
				if len(g.ReportedByHour) != hours {
					t.Fatalf("%s: GPU %s has %d hours, want %d", name, g.UUID, len(g.ReportedByHour), hours)
				}
				var sum float64
				for h, x := range g.ReportedByHour {
					sum += x
					if !close(x, want[g.GPUKey][h]) {
						t.Errorf("%s: GPU %s hour %d: %g h reported, the engine counts %g", name, g.UUID, h, x, want[g.GPUKey][h])
					}
				}
				if !close(sum, g.ReportedHours) {
					t.Errorf("%s: GPU %s: its hours sum to %g, it reported %g", name, g.UUID, sum, g.ReportedHours)
				}
			}
			for _, x := range res.Allocations {
				if x.Hours == nil {
					t.Fatalf("%s: allocation %s/%s has no hours", name, x.Namespace, x.Pod)
				}
				var held, gpuHours, measured, used float64
				for h := range hours {
					a, b, c, d := x.Hours.At(h)
					held, gpuHours, measured, used = held+a, gpuHours+b, measured+c, used+d
					if a > 1+1e-9 || c > a+1e-9 || d < 0 {
						t.Errorf("%s: %s/%s hour %d: held %g, measured %g, used %g", name, x.Namespace, x.Pod, h, a, c, d)
					}
				}
				if !close(held, x.HeldHours) || !close(gpuHours, x.AllocatedGPUHours) || measured > x.HeldHours+1e-9 {
					t.Errorf("%s: %s/%s: hours sum to held %g, %g GPU-h, measured %g; the window's: %g, %g GPU-h",
						name, x.Namespace, x.Pod, held, gpuHours, measured, x.HeldHours, x.AllocatedGPUHours)
				}
			}
		}
	}
}
