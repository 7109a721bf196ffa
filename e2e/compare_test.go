package e2e

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
)

// engine is how a server's PromQL may differ from the embedded engine's
// on the same samples. Everything not listed here must match exactly.
type engine struct {
	name string
	// afterEnd is how many steps after its last sample a series that ended
	// is still returned. The embedded TSDB holds staleness markers, so
	// there a series ends at once; OpenMetrics cannot carry them, so a
	// backfilled server falls back on its lookback.
	afterEnd int
	// rel is the relative tolerance of every float figure, 0 for equal,
	// and relOf overrides it per field name (of Allocation and GPU).
	rel   float64
	relOf map[string]float64
	// energy checks one GPU's EnergyJoules, which follows increase()'s
	// extrapolation rules and so differs by engine.
	energy func(t *testing.T, e energyFacts, got float64)
}

// compare analyses w in the embedded TSDB and through src and checks every
// per-allocation and per-GPU figure, field by field, so that a figure added
// to the result later is compared (exactly) without touching this test.
func compare(t *testing.T, f *fixture, src source.Source, w fleet.Window, e engine) {
	t.Helper()
	compareResult(t, f, analyze(t, src, w), w, e)
}

// compareResult checks got, an analysis of w through a server, against
// the embedded TSDB's analysis of w, as compare does.
func compareResult(t *testing.T, f *fixture, got *fleet.Result, w fleet.Window, e engine) {
	t.Helper()
	want := analyze(t, f.db, w)

	// A comparison of two empty results would prove nothing.
	if len(want.Allocations) < 10 || len(want.GPUs) < 8 {
		t.Fatalf("embedded analysis has %d allocations and %d GPUs; the fixture should give at least 10 and 8",
			len(want.Allocations), len(want.GPUs))
	}
	if (got.Shards == want.Shards && got.QueryCount != want.QueryCount) || got.ExpectedSteps != want.ExpectedSteps {
		t.Errorf("%s: %d queries and %d expected steps, embedded %d and %d",
			e.name, got.QueryCount, got.ExpectedSteps, want.QueryCount, want.ExpectedSteps)
	}

	ended := endedSeries(t, f.db, w)
	adjusted := expectAfterEnd(want, ended, e.afterEnd, w)
	if len(ended.allocations)+len(ended.gpuUtil)+len(ended.gpuThrottle)+len(ended.gpuMem) == 0 {
		// Nothing was adjusted: the notes depend only on the figures, so
		// they must be equal too, and so must the workloads, which are
		// composed from the allocations' figures and the per-step ones.
		if !reflect.DeepEqual(got.Notes, want.Notes) {
			t.Errorf("%s: notes %q, embedded %q", e.name, got.Notes, want.Notes)
		}
		gotWorkloads := map[fleet.WorkloadKey]fleet.Workload{}
		for _, x := range got.Workloads {
			gotWorkloads[x.WorkloadKey] = x
		}
		if len(got.Workloads) != len(want.Workloads) || len(want.Workloads) == 0 {
			t.Errorf("%s: %d workloads, embedded %d", e.name, len(got.Workloads), len(want.Workloads))
		}
		for _, x := range want.Workloads {
			g, ok := gotWorkloads[x.WorkloadKey]
			if !ok {
				t.Errorf("%s: workload %+v missing", e.name, x.WorkloadKey)
				continue
			}
			compareFields(t, fmt.Sprintf("%s: workload %s/%s", e.name, x.Namespace, x.Name), reflect.ValueOf(x), reflect.ValueOf(g), e.tolerance(nil), nil)
		}
	}

	gotAllocs := map[fleet.AllocationKey]fleet.Allocation{}
	for _, a := range got.Allocations {
		gotAllocs[a.AllocationKey] = a
	}
	if len(got.Allocations) != len(want.Allocations) {
		t.Errorf("%s: %d allocations, embedded %d", e.name, len(got.Allocations), len(want.Allocations))
	}
	for _, x := range adjusted.allocations {
		g, ok := gotAllocs[x.AllocationKey]
		if !ok {
			t.Errorf("%s: allocation %s/%s on %s missing", e.name, x.Namespace, x.Pod, x.UUID)
			continue
		}
		name := fmt.Sprintf("%s: allocation %s/%s/%s gi=%q", e.name, x.Namespace, x.Pod, x.Container, x.GPUInstance)
		compareFields(t, name, reflect.ValueOf(x.Allocation), reflect.ValueOf(g), e.tolerance(x.rel), x.skip)
	}

	energy := energyOf(t, f.db, w)
	gotGPUs := map[fleet.GPUKey]fleet.GPU{}
	for _, g := range got.GPUs {
		gotGPUs[g.GPUKey] = g
	}
	if len(got.GPUs) != len(want.GPUs) {
		t.Errorf("%s: %d GPUs, embedded %d", e.name, len(got.GPUs), len(want.GPUs))
	}
	for _, x := range adjusted.gpus {
		g, ok := gotGPUs[x.GPUKey]
		if !ok {
			t.Errorf("%s: GPU %s on %s missing", e.name, x.UUID, x.Node)
			continue
		}
		name := fmt.Sprintf("%s: GPU %s on %s", e.name, x.UUID, x.Node)
		skip := map[string]string{"EnergyJoules": "checked by the engine's energy rule"}
		for k, v := range x.skip {
			skip[k] = v
		}
		compareFields(t, name, reflect.ValueOf(x.GPU), reflect.ValueOf(g), e.tolerance(x.rel), skip)

		facts, ok := energy[x.GPUKey]
		if !ok {
			t.Errorf("%s: no energy counter in the embedded TSDB", name)
			continue
		}
		facts.name, facts.embedded = name, x.EnergyJoules
		// The embedded figure extrapolates the first in-window sample back
		// to the window start (and half a step past the last sample of a
		// counter that ended); it cannot be further than one step's energy
		// from the exact delta. This is the bound the servers' figures are
		// held to where they do not extrapolate the same way.
		if d := math.Abs(facts.embedded - facts.delta); d > facts.maxStep {
			t.Errorf("%s: embedded energy %.6g is %.6g from the counter delta %.6g, more than one step (%.6g)",
				name, facts.embedded, d, facts.delta, facts.maxStep)
		}
		e.energy(t, facts, g.EnergyJoules)
	}
}

// tolerance returns the relative tolerance of each float field: the
// engine's, widened by the row's own where the expectation was computed.
func (e engine) tolerance(row map[string]float64) func(field string) float64 {
	return func(field string) float64 {
		rel, ok := e.relOf[field]
		if !ok {
			rel = e.rel
		}
		return max(rel, row[field])
	}
}

// compareFields compares every exported field of two structs of the same
// type, recursing into none: the key structs are compared by the lookup.
func compareFields(t *testing.T, name string, want, got reflect.Value, relOf func(string) float64, skip map[string]string) {
	t.Helper()
	for i := range want.NumField() {
		f := want.Type().Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		if _, ok := skip[f.Name]; ok {
			continue
		}
		w, g := want.Field(i), got.Field(i)
		if f.Type.Kind() == reflect.Float64 {
			if rel := relOf(f.Name); !closeEnough(w.Float(), g.Float(), rel) {
				t.Errorf("%s: %s = %v, embedded %v (relative difference %.3g, allowed %.3g)",
					name, f.Name, g.Float(), w.Float(), relDiff(w.Float(), g.Float()), rel)
			}
			continue
		}
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			t.Errorf("%s: %s = %v, embedded %v", name, f.Name, g.Interface(), w.Interface())
		}
	}
}

func relDiff(want, got float64) float64 {
	if want == got {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), math.Abs(got))
}

func closeEnough(want, got, rel float64) bool { return want == got || relDiff(want, got) <= rel }

// ended lists, per key, the time of the last step at which a series that
// ended inside the window was seen in the embedded TSDB.
type ended struct {
	allocations map[fleet.AllocationKey]time.Time
	gpuUtil     map[fleet.GPUKey]time.Time
	gpuThrottle map[fleet.GPUKey]time.Time
	gpuMem      map[fleet.GPUKey]time.Time
}

// endedSeries asks the embedded TSDB which series the analysis reads were
// present in the window but are gone at its end. Thanks to the staleness
// markers the simulation wrote, "gone" is exact there.
func endedSeries(t *testing.T, db source.Source, w fleet.Window) ended {
	t.Helper()
	const allocBy = "node, namespace, pod, container, uuid, gpu_instance"
	lastSeen := func(metric, by string) model.Vector {
		q := fmt.Sprintf("max_over_time(timestamp(max by (%[2]s) (%[1]s))[%[3]s:%[4]s]) unless on (%[2]s) max by (%[2]s) (%[1]s)",
			metric, by, promDuration(w.Duration()), promDuration(w.Step))
		return instant(t, db, q, w.End)
	}
	e := ended{allocations: map[fleet.AllocationKey]time.Time{}, gpuUtil: map[fleet.GPUKey]time.Time{}, gpuThrottle: map[fleet.GPUKey]time.Time{},
		gpuMem: map[fleet.GPUKey]time.Time{}}
	for _, s := range lastSeen("gpulens_container_gpu_allocation_ratio", allocBy) {
		m := s.Metric
		e.allocations[fleet.AllocationKey{Node: string(m["node"]), Namespace: string(m["namespace"]), Pod: string(m["pod"]),
			Container: string(m["container"]), UUID: string(m["uuid"]), GPUInstance: string(m["gpu_instance"])}] = seconds(s.Value)
	}
	for _, s := range lastSeen("gpulens_gpu_utilization_ratio", "node, uuid") {
		e.gpuUtil[fleet.GPUKey{Node: string(s.Metric["node"]), UUID: string(s.Metric["uuid"])}] = seconds(s.Value)
	}
	for _, s := range lastSeen("gpulens_gpu_memory_used_bytes", "node, uuid") {
		e.gpuMem[fleet.GPUKey{Node: string(s.Metric["node"]), UUID: string(s.Metric["uuid"])}] = seconds(s.Value)
	}
	for _, s := range lastSeen(`gpulens_gpu_throttle_active{reason=~".*thermal.*"}`, "node, uuid") {
		e.gpuThrottle[fleet.GPUKey{Node: string(s.Metric["node"]), UUID: string(s.Metric["uuid"])}] = seconds(s.Value)
	}
	return e
}

func seconds(v model.SampleValue) time.Time {
	return time.UnixMilli(int64(math.Round(float64(v) * 1000))).UTC()
}

// expectedAllocation and expectedGPU are rows as a server must return
// them: skip names the fields not compared, with the reason, and rel
// widens the tolerance of fields recomputed here.
type expectedAllocation struct {
	fleet.Allocation
	skip map[string]string
	rel  map[string]float64
}

type expectedGPU struct {
	fleet.GPU
	skip map[string]string
	rel  map[string]float64
}

// recomputed is the tolerance of an hour figure adjusted here: the sum of
// two converted step counts rounds differently from the conversion of
// their sum.
const recomputed = 1e-15

type expected struct {
	allocations []expectedAllocation
	gpus        []expectedGPU
}

// expectAfterEnd turns the embedded result into what a server that sees
// each ended series for afterEnd more steps must return: the step counts
// and the hours derived from them grow by exactly those steps (fewer when
// the window ends first). Figures the repeated last sample moves by an
// amount that depends on the data (average, quantiles, slope, thermal
// ratio) are not compared on such rows here; liveWindow, where nothing
// ends, compares them exactly.
func expectAfterEnd(want *fleet.Result, e ended, afterEnd int, w fleet.Window) expected {
	extra := func(last time.Time) int { return min(afterEnd, int(w.End.Sub(last)/w.Step)) }
	hours := func(steps float64) float64 { return steps * w.Step.Hours() }
	steps := float64(want.ExpectedSteps)
	var out expected
	// Steps and shares added to each GPU by its ended allocations.
	gpuSteps := map[fleet.GPUKey]int{}
	gpuShare := map[fleet.GPUKey]float64{}
	for _, a := range want.Allocations {
		x := expectedAllocation{Allocation: a, skip: map[string]string{}, rel: map[string]float64{}}
		if last, ok := e.allocations[a.AllocationKey]; ok {
			k := extra(last)
			x.Steps += k
			x.UtilizationSteps += k
			x.MemorySteps += k
			x.HeldHours = hours(float64(x.Steps))
			x.AllocatedGPUHours += hours(float64(k) * x.Share)
			x.Coverage = float64(x.Steps) / steps
			x.rel["AllocatedGPUHours"] = recomputed
			x.UtilizationCoverage = min(1, float64(x.UtilizationSteps)/float64(x.Steps))
			// Seen k steps longer, it was last seen k steps later.
			x.SinceLastSeen = max(0, x.SinceLastSeen-time.Duration(k)*w.Step)
			for _, f := range []string{"AvgUtilization", "P95Utilization", "P99MemoryBytes", "MemoryGrowthBytesPerHour"} {
				x.skip[f] = "moved by the repeated last sample; compared in liveWindow"
			}
			g := fleet.GPUKey{Node: a.Node, UUID: a.UUID}
			gpuSteps[g] = max(gpuSteps[g], k)
			gpuShare[g] += float64(k) * a.Share
		}
		out.allocations = append(out.allocations, x)
	}
	for _, g := range want.GPUs {
		x := expectedGPU{GPU: g, skip: map[string]string{}, rel: map[string]float64{}}
		if k := gpuSteps[g.GPUKey]; k > 0 {
			// Exact only when the ended allocation was alone on its GPU at
			// the end, as in the fixture; a co-tenant still holding the GPU
			// would already count those steps as allocated.
			x.AllocatedHours += hours(float64(k))
			x.UnallocatedHours = max(0, x.ReportedHours-x.AllocatedHours)
			x.AllocatedGPUHours += hours(gpuShare[g.GPUKey])
			for _, f := range []string{"AllocatedHours", "UnallocatedHours", "AllocatedGPUHours"} {
				x.rel[f] = recomputed
			}
			x.skip["TenantsMemoryP99Bytes"] = "moved by the repeated last sample; compared in liveWindow"
		}
		if last, ok := e.gpuMem[g.GPUKey]; ok {
			x.MemoryUsedSteps += extra(last)
			x.skip["MemoryUsedP99Bytes"] = "moved by the repeated last sample; compared in liveWindow"
			x.skip["MemoryUsedGrowthBytesPerHour"] = "moved by the repeated last sample; compared in liveWindow"
		}
		if last, ok := e.gpuUtil[g.GPUKey]; ok {
			x.UtilizationSteps += extra(last)
			x.skip["AvgUtilization"] = "moved by the repeated last sample; compared in liveWindow"
		}
		if last, ok := e.gpuThrottle[g.GPUKey]; ok {
			x.ThrottleSteps += extra(last)
			x.skip["ThermalThrottleRatio"] = "moved by the repeated last sample; compared in liveWindow"
		}
		out.gpus = append(out.gpus, x)
	}
	return out
}

// energyFacts are the exact figures of one GPU's energy counter in the
// window, from the embedded TSDB.
type energyFacts struct {
	name string
	// embedded is the embedded analysis' EnergyJoules (increase()).
	embedded float64
	// delta is the counter's last value in the window minus its value at
	// the window start: the energy without any extrapolation.
	delta float64
	// maxStep is the largest increase between two consecutive steps.
	maxStep float64
	// counter is the counter's largest value, the scale of its rounding.
	counter float64
	// whole says the counter has samples at the window's start and end.
	whole bool
}

func energyOf(t *testing.T, db source.Source, w fleet.Window) map[fleet.GPUKey]energyFacts {
	t.Helper()
	const e = "gpulens_gpu_energy_joules_total"
	r, s := promDuration(w.Duration()), promDuration(w.Step)
	if v := instant(t, db, fmt.Sprintf("max(resets(%s[%s])) > 0", e, r), w.End); len(v) > 0 {
		// delta below assumes none; the fixture has no driver reload.
		t.Fatalf("the fixture's energy counters reset in the window; delta would be wrong")
	}
	facts := map[fleet.GPUKey]energyFacts{}
	each := func(q string, set func(*energyFacts, float64)) {
		for _, smp := range instant(t, db, q, w.End) {
			k := fleet.GPUKey{Node: string(smp.Metric["node"]), UUID: string(smp.Metric["uuid"])}
			f := facts[k]
			set(&f, float64(smp.Value))
			facts[k] = f
		}
	}
	each(fmt.Sprintf("max by (node, uuid) (last_over_time(%[1]s[%[2]s]) - last_over_time(%[1]s[%[3]s] offset %[2]s))", e, r, s),
		func(f *energyFacts, v float64) { f.delta = v })
	each(fmt.Sprintf("max by (node, uuid) (max_over_time((%[1]s - %[1]s offset %[3]s)[%[2]s:%[3]s]))", e, r, s),
		func(f *energyFacts, v float64) { f.maxStep = v })
	each(fmt.Sprintf("max by (node, uuid) (max_over_time(%s[%s]))", e, r),
		func(f *energyFacts, v float64) { f.counter = v })
	each(fmt.Sprintf("max by (node, uuid) (%[1]s and %[1]s offset %[2]s)", e, r),
		func(f *energyFacts, _ float64) { f.whole = true })
	return facts
}

func instant(t *testing.T, src source.Source, q string, ts time.Time) model.Vector {
	t.Helper()
	v, err := src.Query(context.Background(), q, ts)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func promDuration(d time.Duration) string { return model.Duration(d).String() }

// describe is a short form of a window for subtest names and messages.
func describe(w fleet.Window) string {
	return strings.ReplaceAll(fmt.Sprintf("%s+%s", w.Start.Format("15:04"), w.Duration()), "0s", "")
}
