package fleet

import (
	"math"
	"testing"
)

// TestApplyHAMiHourByHour: a HAMi tenant's allocation takes HAMi's share
// and use in every hour it was held, not the exporter's replica; the held
// time stays the exporter's; a tenant HAMi has no reading of is measured
// nowhere; an allocation that is no HAMi tenant, or one of another GPU or
// cluster, is left as it was. Issue 53's mutation audit: until this test
// only the demo's 90 s money test caught a wrong hourly charge.
//
// By hand, on an 80 GiB device (HAMi's size): tenant a holds gpucores 30
// and gpumem 40 GiB, so its share is max(0.30, 40/80) = 0.5; it used p95
// 0.2 of the SMs and p99 30 GiB of memory, max(0.2, 30/80) = 0.375 of
// the GPU, which is 0.375 / 0.5 = 0.75 of its share. Its allocation was
// held 1 h, 0.5 h and 1 h in three hours (exporter's replica 0.1).
func TestApplyHAMiHourByHour(t *testing.T) {
	const gib = float64(1 << 30)
	hours := func() *AllocationHours {
		return &AllocationHours{First: 4, Held: []float64{1, 0.5, 1}, GPUHours: []float64{0.1, 0.05, 0.1},
			Measured: []float64{1, 0.5, 1}, Used: []float64{0.05, 0.02, 0.05}}
	}
	alloc := func(cluster, uuid, pod string) Allocation {
		return Allocation{AllocationKey: AllocationKey{Cluster: cluster, Node: "n", Namespace: "ns", Pod: pod, Container: "c", UUID: uuid},
			Share: 0.1, HeldHours: 2.5, AllocatedGPUHours: 0.25, AvgUtilization: 0.4, UtilizationSteps: 150, Hours: hours()}
	}
	r := &Result{ExpectedSteps: 600, Allocations: []Allocation{
		alloc("", "GPU-1", "a"),     // HAMi's tenant a
		alloc("", "GPU-1", "b"),     // tenant b, of which HAMi has no reading
		alloc("", "GPU-1", "other"), // no HAMi tenant
		alloc("eu", "GPU-1", "a"),   // the same names in another cluster
	}, HAMi: []HAMiTenant{
		{Namespace: "ns", Pod: "a", Container: "c", GPUUUID: "GPU-1", CoresPct: 30, MemoryMiB: 40 << 10, DeviceBytes: 80 * gib,
			UtilP95: 0.2, MemP99: 30 * gib, Coverage: 0.5},
		{Namespace: "ns", Pod: "b", Container: "c", GPUUUID: "GPU-1", CoresPct: 25, DeviceBytes: 80 * gib},
	}}
	r.ApplyHAMi()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	eq := func(got, want []float64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if !near(got[i], want[i]) {
				return false
			}
		}
		return true
	}

	a := r.Allocations[0]
	if !near(a.Share, 0.5) || !near(a.AllocatedGPUHours, 0.5*2.5) || !near(a.AvgUtilization, 0.75) || a.UtilizationSteps != 300 || a.HeldHours != 2.5 {
		t.Errorf("tenant a: share %g, GPU-h %g, util %g, steps %d, held %g; want 0.5, 1.25, 0.75, 300, 2.5",
			a.Share, a.AllocatedGPUHours, a.AvgUtilization, a.UtilizationSteps, a.HeldHours)
	}
	if h := a.Hours; !eq(h.Held, []float64{1, 0.5, 1}) || !eq(h.GPUHours, []float64{0.5, 0.25, 0.5}) ||
		!eq(h.Measured, []float64{1, 0.5, 1}) || !eq(h.Used, []float64{0.75, 0.375, 0.75}) {
		t.Errorf("tenant a's hours %+v: want held 1, 0.5, 1; GPU-h 0.5, 0.25, 0.5; measured as held; used 0.75 of it", *h)
	}

	// b: gpucores 25 of a device HAMi sized, no memory limit: 0.25; no
	// reading, so no hour is measured and nothing is used.
	b := r.Allocations[1]
	if !near(b.Share, 0.25) || b.UtilizationSteps != 0 || !eq(b.Hours.GPUHours, []float64{0.25, 0.125, 0.25}) ||
		!eq(b.Hours.Measured, []float64{0, 0, 0}) || !eq(b.Hours.Used, []float64{0, 0, 0}) {
		t.Errorf("tenant b: share %g, steps %d, hours %+v; want 0.25, 0, GPU-h 0.25, 0.125, 0.25, nothing measured", b.Share, b.UtilizationSteps, *b.Hours)
	}

	for _, i := range []int{2, 3} {
		x, want := r.Allocations[i], alloc(r.Allocations[i].Cluster, "GPU-1", r.Allocations[i].Pod)
		if x.Share != want.Share || x.AllocatedGPUHours != want.AllocatedGPUHours || x.AvgUtilization != want.AvgUtilization ||
			!eq(x.Hours.GPUHours, want.Hours.GPUHours) || !eq(x.Hours.Used, want.Hours.Used) {
			t.Errorf("allocation %s/%s is no HAMi tenant of its cluster, yet changed: %+v", x.Cluster, x.Pod, x)
		}
	}
}
