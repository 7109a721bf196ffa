package query

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

const (
	a100 = "NVIDIA A100-SXM4-80GB"
	h100 = "NVIDIA H100 80GB HBM3"
	l4   = "NVIDIA L4"
	mib  = 1 << 20
	gib  = 1 << 30
)

// nativeGPU writes what the exporter reports for a physical GPU over
// minutes [from, to].
func nativeGPU(t testing.TB, f *testFleet, node, uuid, model string, from, to int, util float64) {
	f.series(t, gpuLabels("gpulens_gpu_info", node, uuid, model), from, to, constant(1))
	if util >= 0 {
		f.series(t, gpuLabels("gpulens_gpu_utilization_ratio", node, uuid, model), from, to, constant(util))
	}
	f.series(t, gpuLabels("gpulens_gpu_memory_total_bytes", node, uuid, model), from, to, constant(80*gib))
}

type container struct {
	node, uuid, model, ns, pod, sharing, gi, profile string
	share                                            float64
	util, mem                                        func(int) float64 // nil: no series
}

func (c container) write(t testing.TB, f *testFleet, from, to int) {
	f.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", c.node, c.uuid, c.model, c.ns, c.pod, c.sharing, c.gi, c.profile), from, to, constant(c.share))
	method := "device"
	if c.sharing == string(vocab.SharingMIG) {
		method = "mig-gpm"
	}
	if c.util != nil {
		f.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", c.node, c.uuid, c.model, c.ns, c.pod, c.sharing, c.gi, c.profile, "method", method), from, to, c.util)
	}
	if c.mem != nil {
		f.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", c.node, c.uuid, c.model, c.ns, c.pod, c.sharing, c.gi, c.profile, "method", method), from, to, c.mem)
	}
}

// buildFleet is three GPUs over a 4h window (minutes 1..240):
//   - GPU-a, a whole A100: train-0 holds it for the first 2h at 40%/60%
//     alternately with memory growing 1 MiB a minute; the exporter then
//     restarts (minutes 121-130 missing) and the driver reload resets the
//     energy counter, which otherwise grows 100 J a minute.
//   - GPU-m, an H100 in MIG mode: three pods on 3g, 2g and 1g slices.
//   - GPU-t, an L4 time-sliced into four replicas, all held; ts-3 reports
//     no utilization.
func buildFleet(t testing.TB) *testFleet {
	f := newFleet(t)
	nativeGPU(t, f, "node-1", "GPU-a", a100, 1, 120, 0.5)
	nativeGPU(t, f, "node-1", "GPU-a", a100, 131, 240, 0.5)
	energy := gpuLabels("gpulens_gpu_energy_joules_total", "node-1", "GPU-a", a100)
	f.series(t, energy, 1, 120, func(i int) float64 { return 100 * float64(i) })
	f.series(t, energy, 131, 240, func(i int) float64 { return 100 * float64(i-120) })
	container{node: "node-1", uuid: "GPU-a", model: a100, ns: "team-a", pod: "train-0", sharing: "none", share: 1,
		util: func(i int) float64 { return []float64{0.4, 0.6}[i%2] },
		mem:  func(i int) float64 { return float64(i) * mib },
	}.write(t, f, 1, 120)

	nativeGPU(t, f, "node-2", "GPU-m", h100, 1, 240, -1)
	for _, m := range []struct {
		pod, gi, profile string
		slices           int
		util             float64
	}{{"mig-a", "1", "3g.40gb", 3, 0.6}, {"mig-b", "5", "2g.20gb", 2, 0.3}, {"mig-c", "13", "1g.10gb", 1, 0.9}} {
		mig := []string{"gpu_instance", m.gi, "compute_instance", "0", "mig_profile", m.profile, "mig_uuid", "MIG-" + m.gi}
		f.series(t, gpuLabels("gpulens_mig_compute_slices", "node-2", "GPU-m", h100, mig...), 1, 240, constant(float64(m.slices)))
		f.series(t, gpuLabels("gpulens_mig_sm_active_ratio", "node-2", "GPU-m", h100, mig...), 1, 240, constant(m.util))
		container{node: "node-2", uuid: "GPU-m", model: h100, ns: "team-c", pod: m.pod, sharing: "mig", gi: m.gi, profile: m.profile,
			share: float64(m.slices) / 7, util: constant(m.util), mem: constant(10 * gib)}.write(t, f, 1, 240)
	}

	// Health: GPU-a is down for minutes 100-109 and has three XID events
	// in the window (13 twice, 79 once); GPU-m's XID 48 predates the
	// window, so it is not an event of it; GPU-t throttles for heat in its
	// first hour (gpu_idle is not a thermal reason).
	f.series(t, gpuLabels("gpulens_gpu_up", "node-1", "GPU-a", a100), 1, 120, func(i int) float64 { return map[bool]float64{true: 0, false: 1}[i >= 100 && i < 110] })
	f.series(t, gpuLabels("gpulens_gpu_xid_errors_total", "node-1", "GPU-a", a100, "xid", "13"), 50, 120, func(i int) float64 { return map[bool]float64{true: 2, false: 1}[i >= 100] })
	f.series(t, gpuLabels("gpulens_gpu_xid_errors_total", "node-1", "GPU-a", a100, "xid", "79"), 110, 120, constant(1))
	f.series(t, gpuLabels("gpulens_gpu_xid_errors_total", "node-2", "GPU-m", h100, "xid", "48"), -30, 240, constant(5))
	for _, r := range []struct {
		reason string
		on     int
	}{{"hw_thermal_slowdown", 60}, {"sw_thermal_slowdown", 0}, {"gpu_idle", 240}} {
		f.series(t, gpuLabels("gpulens_gpu_throttle_active", "node-3", "GPU-t", l4, "reason", r.reason), 1, 240, func(i int) float64 { return map[bool]float64{true: 1, false: 0}[i <= r.on] })
	}

	nativeGPU(t, f, "node-3", "GPU-t", l4, 1, 240, 0.8)
	for i := range 4 {
		c := container{node: "node-3", uuid: "GPU-t", model: l4, ns: "team-b", pod: fmt.Sprintf("ts-%d", i), sharing: "time-slicing",
			share: 0.25, util: constant(0.2), mem: constant(5 * gib)}
		if i == 3 {
			c.util = nil
		}
		c.write(t, f, 1, 240)
	}
	f.commit(t)
	return f
}

// dp is the path of every allocation without a claim.
const dp = vocab.AllocationPathDevicePlugin

var window = fleet.Window{Start: t0, End: minute(240), Step: time.Minute}

func TestAnalyzeNative(t *testing.T) {
	f := buildFleet(t)
	res, err := Analyze(context.Background(), f.src, native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	if res.Schema != "native" || res.ExpectedSteps != 240 || res.QueryCount != 17+2 || res.Shards != 1 { // 16 passes, the claims, and the shard probe's 2: the fixture has no kube-state-metrics restarts, so their 2 queries are skipped
		t.Errorf("schema %q, expected steps %d, queries %d, shards %d", res.Schema, res.ExpectedSteps, res.QueryCount, res.Shards)
	}

	mig := func(pod, gi, profile string, slices float64, util float64) fleet.Allocation {
		return fleet.Allocation{
			AllocationKey: fleet.AllocationKey{Node: "node-2", Namespace: "team-c", Pod: pod, Container: "main", UUID: "GPU-m", GPUInstance: gi},
			Workload:      pod, WorkloadKind: "Pod",
			Model: h100, MIGProfile: profile, Sharing: "mig", Share: slices / 7, AllocationPath: dp,
			HeldHours: 4, AllocatedGPUHours: 4 * slices / 7, Steps: 240, Coverage: 1,
			AvgUtilization: util, P95Utilization: util, UtilizationSteps: 240, UtilizationCoverage: 1,
			PeakMemoryBytes: 10 * gib, P99MemoryBytes: 10 * gib, MemorySteps: 240, LastMemoryBytes: 10 * gib,
		}
	}
	ts := func(i int) fleet.Allocation {
		a := fleet.Allocation{
			AllocationKey: fleet.AllocationKey{Node: "node-3", Namespace: "team-b", Pod: fmt.Sprintf("ts-%d", i), Container: "main", UUID: "GPU-t"},
			Workload:      "ts", WorkloadKind: "StatefulSet",
			Model: l4, Sharing: "time-slicing", Share: 0.25, AllocationPath: dp,
			HeldHours: 4, AllocatedGPUHours: 1, Steps: 240, Coverage: 1,
			AvgUtilization: 0.2, P95Utilization: 0.2, UtilizationSteps: 240, UtilizationCoverage: 1,
			PeakMemoryBytes: 5 * gib, P99MemoryBytes: 5 * gib, MemorySteps: 240, LastMemoryBytes: 5 * gib,
		}
		if i == 3 {
			a.AvgUtilization, a.P95Utilization, a.UtilizationSteps, a.UtilizationCoverage = 0, 0, 0, 0
		}
		return a
	}
	want := []fleet.Allocation{
		{
			AllocationKey: fleet.AllocationKey{Node: "node-1", Namespace: "team-a", Pod: "train-0", Container: "main", UUID: "GPU-a"},
			Workload:      "train", WorkloadKind: "StatefulSet",
			Model: a100, Sharing: "none", Share: 1, AllocationPath: dp,
			HeldHours: 2, AllocatedGPUHours: 2, Steps: 120, Coverage: 0.5,
			// Written at minutes 1..120 of 240: last seen 2h before the end.
			SinceLastSeen:  2 * time.Hour,
			AvgUtilization: 0.5, P95Utilization: 0.6, UtilizationSteps: 120, UtilizationCoverage: 1,
			// Memory 1..120 MiB: p99 interpolates at rank 0.99×119.
			PeakMemoryBytes: 120 * mib, P99MemoryBytes: 118.81 * mib, MemorySteps: 120,
			LastMemoryBytes: 120 * mib, MemoryGrowthBytesPerHour: 60 * mib,
		},
		ts(0), ts(1), ts(2), ts(3),
		mig("mig-a", "1", "3g.40gb", 3, 0.6), mig("mig-b", "5", "2g.20gb", 2, 0.3), mig("mig-c", "13", "1g.10gb", 1, 0.9),
	}
	compareAll(t, "allocation", res.Allocations, want)

	wantGPUs := []fleet.GPU{
		{
			GPUKey: fleet.GPUKey{Node: "node-1", UUID: "GPU-a"}, Model: a100, Sharing: "none", Attribution: fleet.AttributionPerTenant,
			ReportedHours: 230.0 / 60, AllocatedHours: 2, UnallocatedHours: 110.0 / 60, AllocatedGPUHours: 2,
			Steps: 230, Coverage: 230.0 / 240, CoTenants: 1, AvgUtilization: 0.5, UtilizationSteps: 230,
			MemoryTotalBytes: 80 * gib, TenantsMemoryP99Bytes: 118.81 * mib,
			// 240 minutes at 100 J: the reset is corrected and the
			// missing minutes are bridged by increase().
			EnergyJoules: 24000,
			// XID 13 is the application's (a graphics engine
			// exception), 79 the GPU's.
			DownSteps: 10, XIDErrors: 1, XIDCodes: []string{"79"}, WorkloadXIDErrors: 2, WorkloadXIDCodes: []string{"13"},
			// The XID 13 counter appears at minute 50 (its first event)
			// and grows at 100, both while train-0 held the GPU (1-120).
			WorkloadXIDEvents: []fleet.XIDEvent{
				{Time: minute(50), Code: "13", Holders: []fleet.XIDHolder{{Namespace: "team-a", Pod: "train-0", Container: "main"}}},
				{Time: minute(100), Code: "13", Holders: []fleet.XIDHolder{{Namespace: "team-a", Pod: "train-0", Container: "main"}}},
			},
		},
		{
			GPUKey: fleet.GPUKey{Node: "node-2", UUID: "GPU-m"}, Model: h100, Sharing: "mig", Attribution: fleet.AttributionPerTenant,
			ReportedHours: 4, AllocatedHours: 4, AllocatedGPUHours: 4 * 6.0 / 7,
			Steps: 240, Coverage: 1, CoTenants: 3, AvgUtilization: (3*0.6 + 2*0.3 + 0.9) / 7, UtilizationSteps: 240,
			MemoryTotalBytes: 80 * gib, TenantsMemoryP99Bytes: 30 * gib,
		},
		{
			GPUKey: fleet.GPUKey{Node: "node-3", UUID: "GPU-t"}, Model: l4, Sharing: "time-slicing", Attribution: fleet.AttributionPerTenant,
			ReportedHours: 4, AllocatedHours: 4, AllocatedGPUHours: 4,
			Steps: 240, Coverage: 1, CoTenants: 4, AvgUtilization: 0.8, UtilizationSteps: 240,
			MemoryTotalBytes: 80 * gib, ThermalThrottleRatio: 0.25, ThrottleSteps: 240,
			// Four tenants at 5 GiB at every step.
			TenantsMemoryP99Bytes: 20 * gib,
		},
	}
	compareAll(t, "gpu", res.GPUs, wantGPUs)

	// ts-0..3 are one StatefulSet's replicas on one GPU; the others stand
	// alone. Expected values from the fleet above: ts holds 4 replicas at
	// every one of 240 steps, three of them report 0.2.
	wantWorkloads := []fleet.Workload{
		{
			WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: "StatefulSet", Namespace: "team-a", Name: "train", Container: "main"}, Model: a100},
			Sharing:     "none", AllocationPath: dp, Share: 1, Pods: []string{"train-0"}, GPUs: []fleet.GPUKey{{Node: "node-1", UUID: "GPU-a"}},
			Steps: 120, Coverage: 0.5, HeldHours: 2, AllocationSteps: 120, Replicas: 1, AllocatedGPUHours: 2,
			AvgUtilization: 0.5, P95Utilization: 0.6, UtilizationSteps: 120, UtilizationCoverage: 1,
			PeakMemoryBytes: 120 * mib, P99MemoryBytes: 118.81 * mib, MemorySteps: 120,
		},
		{
			WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: "StatefulSet", Namespace: "team-b", Name: "ts", Container: "main"}, Model: l4},
			Sharing:     "time-slicing", AllocationPath: dp, Share: 0.25, Pods: []string{"ts-0", "ts-1", "ts-2", "ts-3"}, GPUs: []fleet.GPUKey{{Node: "node-3", UUID: "GPU-t"}},
			Steps: 240, Coverage: 1, HeldHours: 4, AllocationSteps: 960, Replicas: 4, AllocatedGPUHours: 4,
			AvgUtilization: 0.2, P95Utilization: 0.2, UtilizationSteps: 720, UtilizationCoverage: 0.75,
			PeakMemoryBytes: 5 * gib, P99MemoryBytes: 5 * gib, MemorySteps: 960,
		},
	}
	for _, m := range []struct {
		pod, gi, profile string
		slices, util     float64
	}{{"mig-a", "1", "3g.40gb", 3, 0.6}, {"mig-b", "5", "2g.20gb", 2, 0.3}, {"mig-c", "13", "1g.10gb", 1, 0.9}} {
		wantWorkloads = append(wantWorkloads, fleet.Workload{
			WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: "Pod", Namespace: "team-c", Name: m.pod, Container: "main"}, Model: h100, MIGProfile: m.profile},
			Sharing:     "mig", AllocationPath: dp, Share: m.slices / 7, Pods: []string{m.pod}, GPUs: []fleet.GPUKey{{Node: "node-2", UUID: "GPU-m"}}, GPUInstance: m.gi,
			Steps: 240, Coverage: 1, HeldHours: 4, AllocationSteps: 240, Replicas: 1, AllocatedGPUHours: 4 * m.slices / 7,
			AvgUtilization: m.util, P95Utilization: m.util, UtilizationSteps: 240, UtilizationCoverage: 1,
			PeakMemoryBytes: 10 * gib, P99MemoryBytes: 10 * gib, MemorySteps: 240,
		})
	}
	compareAll(t, "workload", res.Workloads, wantWorkloads)

	notes := strings.Join(res.Notes, "\n")
	for _, w := range []string{"1 of 3 GPUs reported for only part of the window (lowest: GPU-a on node-1, 96%)", "1 allocations have no utilization samples"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
}

// TestQueryCountIsConstant checks that a fleet ten times larger costs the
// same number of queries.
func TestQueryCountIsConstant(t *testing.T) {
	count := func(gpus int) int {
		f := newFleet(t)
		for g := range gpus {
			uuid := fmt.Sprintf("GPU-%d", g)
			nativeGPU(t, f, "node-1", uuid, a100, 1, 60, 0.5)
			container{node: "node-1", uuid: uuid, model: a100, ns: "ns", pod: fmt.Sprintf("p-%d", g), sharing: "none", share: 1,
				util: constant(0.5), mem: constant(gib)}.write(t, f, 1, 60)
		}
		src := f.commit(t)
		res, err := Analyze(context.Background(), src, native.Schema{}, fleet.Window{Start: t0, End: minute(60)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GPUs) != gpus || len(res.Allocations) != gpus {
			t.Fatalf("%d GPUs: got %d GPUs, %d allocations", gpus, len(res.GPUs), len(res.Allocations))
		}
		return res.QueryCount
	}
	if small, large := count(2), count(20); small != large || small == 0 {
		t.Errorf("queries for 2 GPUs = %d, for 20 = %d; want equal", small, large)
	}
}

// TestDCGMMatchesNative analyses the same fleet as reported by gpulens and
// by dcgm-exporter (signals/testdata) and expects the same figures per
// allocation and per GPU.
func TestDCGMMatchesNative(t *testing.T) {
	analyze := func(file string, sch signals.Schema) *fleet.Result {
		f := newFleet(t)
		// Scraped for the first 90 minutes of a 2h window, then gone.
		f.scrape(t, file, 1, 90)
		src := f.commit(t)
		res, err := Analyze(context.Background(), src, sch, fleet.Window{Start: t0, End: minute(120)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	native := analyze("../../signals/testdata/native.prom", native.Schema{})
	dcgm := analyze("../../signals/testdata/dcgm-exporter.prom", dcgm.Schema{})
	if len(native.Allocations) != 8 || len(native.GPUs) != 5 {
		t.Fatalf("native fixture: %d allocations, %d GPUs; want 8 and 5", len(native.Allocations), len(native.GPUs))
	}
	// How tenants are attributed is where the exporters differ: gpulens
	// measures each; the fixture's dcgm-exporter copies the device's
	// figures to both tenants of the time-sliced GPU and maps one pod to
	// the whole one. The unheld GPU has no tenant to attribute.
	wantAttribution := map[string][2]string{
		"GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e60": {fleet.AttributionPerTenant, fleet.AttributionOneTenant},
		"GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e61": {fleet.AttributionPerTenant, fleet.AttributionCopies},
		"GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e62": {"", ""},
		"GPU-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c60": {fleet.AttributionPerTenant, fleet.AttributionPerTenant},
		"GPU-a30a30a3-0000-4000-8000-000000000030": {fleet.AttributionPerTenant, fleet.AttributionPerTenant},
	}
	for i := range native.GPUs {
		n, d := &native.GPUs[i], &dcgm.GPUs[i]
		if w := wantAttribution[n.UUID]; n.Attribution != w[0] || d.Attribution != w[1] {
			t.Errorf("%s: attribution native %q, dcgm-exporter %q; want %q", n.UUID, n.Attribution, d.Attribution, w)
		}
		n.Attribution, d.Attribution = "", ""
	}
	if native.Allocations[0].Coverage != 90.0/120 {
		t.Errorf("coverage = %v, want 0.75", native.Allocations[0].Coverage)
	}
	compareAll(t, "allocation", dcgm.Allocations, native.Allocations)
	compareAll(t, "gpu", dcgm.GPUs, native.GPUs)
	// dcgm-exporter's one more: the nodes of exporter pods that name
	// themselves in the host label (hosts.go).
	if native.QueryCount+1 != dcgm.QueryCount {
		t.Errorf("query counts: native %d, dcgm-exporter %d, want one more", native.QueryCount, dcgm.QueryCount)
	}
}

func TestAnalyzeRejectsBadWindows(t *testing.T) {
	f := newFleet(t)
	for _, w := range []fleet.Window{
		{Start: t0, End: t0},
		{Start: t0, End: t0.Add(time.Hour), Step: 1500 * time.Millisecond},
		{Start: t0, End: t0.Add(30 * time.Second)},
	} {
		if _, err := Analyze(context.Background(), f.src, native.Schema{}, w); err == nil {
			t.Errorf("Analyze(%+v) succeeded", w)
		}
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	f := newFleet(t)
	res, err := Analyze(context.Background(), f.src, native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GPUs) != 0 || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "no GPU series") {
		t.Errorf("empty store: %d GPUs, notes %q", len(res.GPUs), res.Notes)
	}
}

func TestExpectedSteps(t *testing.T) {
	tests := []struct {
		w    fleet.Window
		want int
	}{
		{fleet.Window{Start: t0, End: minute(240), Step: time.Minute}, 240},
		{fleet.Window{Start: t0.Add(30 * time.Second), End: minute(240).Add(30 * time.Second), Step: time.Minute}, 240},
		{fleet.Window{Start: t0, End: minute(240), Step: 5 * time.Minute}, 48},
		{fleet.Window{Start: t0, End: t0.Add(7 * 24 * time.Hour), Step: time.Minute}, 10080},
	}
	for _, tt := range tests {
		if got := tt.w.ExpectedSteps(); got != tt.want {
			t.Errorf("%v..%v step %v: %d steps, want %d", tt.w.Start, tt.w.End, tt.w.Step, got, tt.want)
		}
	}
}

// compareAll compares slices of structs field by field, floats to 1e-9.
func compareAll[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d %ss, want %d:\n got %+v\nwant %+v", len(got), what, len(want), got, want)
		return
	}
	for i := range want {
		for _, d := range diff(reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), "") {
			t.Errorf("%s %d (%+v): %s", what, i, reflect.ValueOf(want[i]).Field(0).Interface(), d)
		}
	}
}

func diff(g, w reflect.Value, path string) []string {
	switch w.Kind() {
	case reflect.Struct:
		var out []string
		for i := range w.NumField() {
			out = append(out, diff(g.Field(i), w.Field(i), path+"."+w.Type().Field(i).Name)...)
		}
		return out
	case reflect.Float64:
		if gv, wv := g.Float(), w.Float(); math.Abs(gv-wv) > 1e-9*math.Max(1, math.Abs(wv)) {
			return []string{fmt.Sprintf("%s = %v, want %v", path, gv, wv)}
		}
	default:
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			return []string{fmt.Sprintf("%s = %v, want %v", path, g.Interface(), w.Interface())}
		}
	}
	return nil
}
