package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

const week = 168.0

var window = fleet.Window{Start: time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC), Step: time.Minute}

func gpu(uuid, model string, hours float64) fleet.GPU {
	return fleet.GPU{GPUKey: fleet.GPUKey{Node: "n1", UUID: uuid}, Model: model, ReportedHours: hours}
}

func alloc(uuid, pod string, sharing vocab.Sharing, share, hours, util float64) fleet.Allocation {
	x := fleet.Allocation{AllocationKey: fleet.AllocationKey{Node: "n1", Namespace: "ns-" + pod, Pod: pod, Container: "c", UUID: uuid},
		Model: "NVIDIA H100 80GB HBM3", Sharing: sharing, Share: share, HeldHours: hours, AllocatedGPUHours: share * hours}
	if util >= 0 {
		x.AvgUtilization, x.UtilizationSteps = util, 10
	}
	return x
}

// TestModes: each sharing mode's charges, on a GPU of a known price.
func TestModes(t *testing.T) {
	prices := price.DefaultPrices()
	const model = "NVIDIA H100 80GB HBM3"
	price, err := prices.PerHour(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		allocs []fleet.Allocation
		hami   []fleet.HAMiTenant
		// want are each tenant's held and used GPU-hours after scaling,
		// in pod order, and the GPU's unallocated hours.
		wantHeld, wantUsed []float64
		wantFree           float64
		wantMode           string
	}{
		{name: "whole, half used", allocs: []fleet.Allocation{alloc("g", "a", "", 1, week, 0.5)},
			wantHeld: []float64{week}, wantUsed: []float64{week / 2}, wantMode: ModeWhole},
		{name: "whole, held half the week, unmeasured", allocs: []fleet.Allocation{alloc("g", "a", "none", 1, week/2, -1)},
			wantHeld: []float64{week / 2}, wantUsed: []float64{week / 2}, wantFree: week / 2, wantMode: ModeWhole},
		{name: "MIG slices, one free", allocs: []fleet.Allocation{alloc("g", "a", vocab.SharingMIG, 3.0/7, week, 1), alloc("g", "b", vocab.SharingMIG, 3.0/7, week, 0)},
			wantHeld: []float64{3 * week / 7, 3 * week / 7}, wantUsed: []float64{3 * week / 7, 0}, wantFree: week / 7, wantMode: string(vocab.SharingMIG)},
		{name: "MIG slice without a share: the catalog's", allocs: []fleet.Allocation{func() fleet.Allocation {
			x := alloc("g", "a", vocab.SharingMIG, 0, week, 0.5)
			x.MIGProfile = "3g.40gb"
			return x
		}()}, wantHeld: []float64{3 * week / 7}, wantUsed: []float64{1.5 * week / 7}, wantFree: 4 * week / 7, wantMode: string(vocab.SharingMIG)},
		{name: "time-slicing past 1: scaled", allocs: []fleet.Allocation{alloc("g", "a", vocab.SharingTimeSlicing, 1, week, 0.2), alloc("g", "b", vocab.SharingTimeSlicing, 1, week, 0.6)},
			wantHeld: []float64{week / 2, week / 2}, wantUsed: []float64{0.1 * week, 0.3 * week}, wantMode: string(vocab.SharingTimeSlicing)},
		{name: "MPS replicas", allocs: []fleet.Allocation{alloc("g", "a", vocab.SharingMPS, 0.25, week, 2)},
			wantHeld: []float64{week / 4}, wantUsed: []float64{week / 4}, wantFree: 3 * week / 4, wantMode: string(vocab.SharingMPS)},
		{name: "DRA claim", allocs: []fleet.Allocation{func() fleet.Allocation {
			x := alloc("g", "a", "", 1, week, 0.25)
			x.AllocationPath = vocab.AllocationPathDRA
			return x
		}()}, wantHeld: []float64{week}, wantUsed: []float64{week / 4}, wantMode: ModeDRA},
		{name: "HAMi: memory share beats cores, one tenant the exporter missed",
			allocs: []fleet.Allocation{alloc("g", "a", vocab.SharingTimeSlicing, 0.5, week, 0.9)},
			hami: []fleet.HAMiTenant{
				{Namespace: "ns-a", Pod: "a", Container: "c", GPUUUID: "g", CoresPct: 20, MemoryMiB: 40 << 10, DeviceBytes: 80 << 30, UtilP95: 0.1, Coverage: 1},
				{Namespace: "ns-b", Pod: "b", Container: "c", GPUUUID: "g", CoresPct: 25, MemoryMiB: 8 << 10, DeviceBytes: 80 << 30, UtilP95: 0.5, Coverage: 0.5},
			},
			wantHeld: []float64{week / 2, week / 8}, wantUsed: []float64{week / 10, week / 8}, wantFree: 3 * week / 8, wantMode: ModeHAMi},
		{name: "HAMi limits past the device: scaled",
			hami: []fleet.HAMiTenant{
				{Namespace: "ns-a", Pod: "a", Container: "c", GPUUUID: "g", CoresPct: 100, DeviceBytes: 80 << 30, UtilP95: 0.5, Coverage: 1},
				{Namespace: "ns-b", Pod: "b", Container: "c", GPUUUID: "g", CoresPct: 60, MemoryMiB: 60 << 10, DeviceBytes: 80 << 30, MemP99: 20 << 30, UtilP95: 0.1, Coverage: 1},
			},
			// b used a quarter of the device's memory and 10% of its SMs: a quarter.
			wantHeld: []float64{week / 1.75, 0.75 * week / 1.75}, wantUsed: []float64{week / 2 / 1.75, 0.25 * week / 1.75}, wantMode: ModeHAMi},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := &fleet.Result{Window: window, GPUs: []fleet.GPU{gpu("g", model, week)}, Allocations: tt.allocs, HAMi: tt.hami}
			l := Build(res, prices)
			if len(l.GPUs) != 1 {
				t.Fatalf("%d GPUs, want 1", len(l.GPUs))
			}
			g := l.GPUs[0]
			checkBalance(t, g)
			if g.Mode != tt.wantMode {
				t.Errorf("mode %q, want %q", g.Mode, tt.wantMode)
			}
			if len(g.Tenants) != len(tt.wantHeld) {
				t.Fatalf("%d tenants, want %d: %+v", len(g.Tenants), len(tt.wantHeld), g.Tenants)
			}
			for i, x := range g.Tenants {
				if !near(x.Allocation.GPUHours, tt.wantHeld[i]) || !near(x.Usage.GPUHours, tt.wantUsed[i]) {
					t.Errorf("%s: held %g used %g GPU-h, want %g and %g", x.Pod, x.Allocation.GPUHours, x.Usage.GPUHours, tt.wantHeld[i], tt.wantUsed[i])
				}
				if !near(x.Allocation.Cost, tt.wantHeld[i]*price) {
					t.Errorf("%s: allocation charge %g, want %g", x.Pod, x.Allocation.Cost, tt.wantHeld[i]*price)
				}
			}
			if !near(g.Allocation.Unallocated.GPUHours, tt.wantFree) {
				t.Errorf("unallocated %g GPU-h, want %g", g.Allocation.Unallocated.GPUHours, tt.wantFree)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// checkBalance: the GPU's charges and remainder are its cost, on both
// bases, in GPU-hours and money, and no amount is negative.
func checkBalance(t *testing.T, g GPU) {
	t.Helper()
	for _, b := range Bases {
		r := g.Remainder(b)
		parts := []Amount{r.Idle, r.Unallocated}
		for _, x := range g.Tenants {
			parts = append(parts, x.On(b))
		}
		var sum Amount
		for _, p := range parts {
			if p.GPUHours < 0 || p.Cost < 0 {
				t.Errorf("GPU %s, %s basis: a negative amount %+v", g.UUID, b, p)
			}
			sum.add(p)
		}
		if b == Allocation && r.Idle != (Amount{}) {
			t.Errorf("GPU %s: idle %+v on the allocation basis", g.UUID, r.Idle)
		}
		if rel(sum.GPUHours, g.Hours) > 1e-9 || rel(sum.Cost, g.Cost) > 1e-9 {
			t.Errorf("GPU %s, %s basis: charges + remainder = %g GPU-h, %g; the GPU is %g GPU-h, %g", g.UUID, b, sum.GPUHours, sum.Cost, g.Hours, g.Cost)
		}
	}
	for _, x := range g.Tenants {
		if x.Usage.GPUHours > x.Allocation.GPUHours*(1+1e-12) {
			t.Errorf("GPU %s: %s used %g of the %g GPU-h it held", g.UUID, x.Pod, x.Usage.GPUHours, x.Allocation.GPUHours)
		}
	}
}

func rel(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestOrphans: an allocation on a GPU the exporter never reported has no
// cost to be charged from: counted, not charged.
func TestOrphans(t *testing.T) {
	res := &fleet.Result{Window: window, Allocations: []fleet.Allocation{alloc("gone", "a", "", 1, week, 1)}}
	l := Build(res, nil)
	if l.Orphans != 1 || len(l.GPUs) != 0 || l.Allocation.Attributed != (Amount{}) {
		t.Errorf("got %+v, want one orphan and nothing charged", l)
	}
}
