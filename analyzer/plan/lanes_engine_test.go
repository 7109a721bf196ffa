package plan

import (
	"context"
	"fmt"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// TestLaneFoldMatchesEngine: the plan's data made from the use the
// analysis's own passes folded (query.Sharding.Lanes, FromAnalysis) is the
// data the engine's six queries gave (fetchEngine, the plan's read until
// issue 43) on the same store, pool for pool and lane for lane, every
// step's memory and load, unsharded and in node shards of three nodes: the
// demo fleet in both schemas (dcgm-exporter's copying the device's memory
// to every time-sliced tenant, which the device memory shares out), the
// DRA fixtures, and a fixture day read on a window that does not start on
// a step. The dcgm-exporter demo is read unsharded only: its sharded
// analysis takes minutes (its workload queries run over the whole fleet in
// every run), and the fold is the same per shard in either schema.
func TestLaneFoldMatchesEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	type fixture struct {
		name string
		sch  signals.Schema
		src  source.Source
		w    fleet.Window
		// sharded also reads it in node shards of three nodes.
		sharded bool
	}
	var fixtures []fixture
	day := fleet.Window{Start: weekStart, End: weekStart.Add(24 * time.Hour), Step: weekStep}
	for _, sch := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
		fixtures = append(fixtures, fixture{"demo " + sch.Name(), sch, simulated(t, sim.Default(), sch, day), day, sch.Name() == native.SchemaName})
	}
	for _, f := range []struct {
		sch  signals.Schema
		file string
	}{{native.Schema{}, "native.dra.prom"}, {dcgm.Schema{}, "dcgm-exporter.dra.prom"}} {
		src, w := replayed(t, "../../signals/testdata/"+f.file, 4*time.Hour)
		fixtures = append(fixtures, fixture{f.file, f.sch, src, w, true})
	}
	src, fl := pipelinetest.Open(t, "testdata/fleet.yaml")
	fixtures = append(fixtures, fixture{"fleet.yaml", native.Schema{}, src, fleet.Window{Start: fl.Start.Add(30 * time.Second), End: fl.End, Step: time.Minute}, true})

	ctx := context.Background()
	o := Options{TrainingMinLoad: 0.8, TrainingMinHours: 2}
	for _, f := range fixtures {
		want, err := fetchEngine(ctx, f.src, f.sch, f.w, o)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		shards := []int{0}
		if f.sharded {
			shards = append(shards, 3)
		}
		for _, maxNodes := range shards {
			got, err := fetch(ctx, f.src, f.sch, f.w, maxNodes, o)
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			sameData(t, fmt.Sprintf("%s, at most %d nodes a shard", f.name, maxNodes), got, want)
		}
	}
}

func sameData(t *testing.T, name string, got, want *Data) {
	t.Helper()
	if got.Steps != want.Steps || !got.Start.Equal(want.Start) || got.Step != want.Step {
		t.Fatalf("%s: %d steps of %s from %s, want %d of %s from %s", name, got.Steps, got.Step, got.Start, want.Steps, want.Step, want.Start)
	}
	if !reflect.DeepEqual(got.Notes, want.Notes) {
		t.Errorf("%s: notes\n%q\nwant\n%q", name, got.Notes, want.Notes)
	}
	if len(got.Pools) != len(want.Pools) || len(want.Pools) == 0 {
		t.Fatalf("%s: %d pools, want %d (at least 1)", name, len(got.Pools), len(want.Pools))
	}
	lanes := 0
	for i, wp := range want.Pools {
		gp := got.Pools[i]
		if gp.Product != wp.Product || gp.GPUsToday != wp.GPUsToday || gp.Nodes != wp.Nodes || gp.GPUsPerNode != wp.GPUsPerNode ||
			gp.CapacityBytes != wp.CapacityBytes || !reflect.DeepEqual(gp.nodeGPUs, wp.nodeGPUs) {
			t.Errorf("%s: pool %q: %d GPUs on %d nodes of %d, %.0f bytes; want %q: %d on %d of %d, %.0f", name, gp.Product, gp.GPUsToday, gp.Nodes, gp.GPUsPerNode, gp.CapacityBytes,
				wp.Product, wp.GPUsToday, wp.Nodes, wp.GPUsPerNode, wp.CapacityBytes)
		}
		if len(gp.Lanes) != len(wp.Lanes) {
			t.Errorf("%s: %s: %d lanes, want %d", name, wp.Product, len(gp.Lanes), len(wp.Lanes))
			continue
		}
		for j, wl := range wp.Lanes {
			gl := gp.Lanes[j]
			lanes++
			if gl.Name() != wl.Name() || gl.Training != wl.Training || gl.From != wl.From || gl.Held != wl.Held || gl.AllocationPath != wl.AllocationPath ||
				!reflect.DeepEqual(gl.Pods, wl.Pods) || !reflect.DeepEqual(gl.Claims, wl.Claims) || !closeTo(gl.GrowthBytes, wl.GrowthBytes) {
				t.Errorf("%s: lane\n%+v\nwant\n%+v", name, *gl, *wl)
				continue
			}
			for s := range wl.Mem {
				if !closeTo(float64(gl.Mem[s]), float64(wl.Mem[s])) || !closeTo(float64(gl.Load[s]), float64(wl.Load[s])) {
					t.Errorf("%s: %s step %d: %v bytes, load %v; want %v and %v", name, wl.Name(), s, gl.Mem[s], gl.Load[s], wl.Mem[s], wl.Load[s])
					break
				}
			}
		}
	}
	if lanes == 0 {
		t.Errorf("%s: no lanes compared", name)
	}
}

// closeTo allows float32's rounding: the engine's values and the passes'
// are the same samples, summed in the same order.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
