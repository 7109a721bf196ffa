package pipeline

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals/native"
)

// TestPreviousWindowReadsHAMiShares: the week-over-week change compares a
// HAMi tenant with itself. Two days of the HAMi scenario, the second
// analysed: embed-api holds max(30% of the cores, 40 GiB of 80) = 0.5 of
// its A100 by HAMi's limits in both windows, not the exporter's replica
// (1/10) in the previous one.
func TestPreviousWindowReadsHAMiShares(t *testing.T) {
	sc, err := sim.Load("testdata/hami-clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := openEmpty(t)
	ctx := context.Background()
	var n atomic.Int64
	newSink := func(node string) fleet.Sink {
		tsdb := func(job, instance string) fleet.Sink { return fleet.NewTSDBSink(ctx, db, &n).WithTarget(job, instance) }
		return fleet.NewHAMiSink(tsdb("gpulens-exporter", node+":9845"), tsdb("hami-vgpu-monitor", node+":9394"), sc, node)
	}
	if err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: hamiStart.Add(-(hamiEnd.Sub(hamiStart))), End: hamiEnd, Step: hamiStep}, newSink); err != nil {
		t.Fatal(err)
	}
	a, err := Run(ctx, Options{Source: db, Schema: native.Schema{}, Start: hamiStart, End: hamiEnd, Step: hamiStep, Prices: price.DefaultPrices()})
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*Analysis{"current": a, "previous": a} {
		r := res.Current
		if name == "previous" {
			r = res.Previous
		}
		found := false
		for _, x := range r.Allocations {
			if x.Pod != "embed-api" {
				continue
			}
			found = true
			if x.Share != 0.5 || x.AllocatedGPUHours != 0.5*x.HeldHours {
				t.Errorf("%s window: embed-api holds %v (%v GPU-h over %v h), want HAMi's 0.5", name, x.Share, x.AllocatedGPUHours, x.HeldHours)
			}
		}
		if !found {
			t.Errorf("%s window: no embed-api allocation", name)
		}
	}
}
