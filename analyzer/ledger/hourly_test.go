package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// hoursOf is an allocation's hours from hour first: held time, GPU-hours,
// measured time and used time in each.
func hoursOf(first int, held, gpuHours, measured, used []float64) *fleet.AllocationHours {
	return &fleet.AllocationHours{First: first, Held: held, GPUHours: gpuHours, Measured: measured, Used: used}
}

func sum(v ...float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}

// TestThreeHours: one H100 at $8/h over three hours, worked by hand. Its
// exporter reported it all of 10:00 and 12:00 and half of 11:00. Two
// time-sliced tenants: a (share 0.5, all three hours, 80% then no reading
// then 20%: the hour without one takes its window's (0.8+0.2)/2 = 50%) and
// b (share 0.75, from 11:00, 100% then 50%); and c, a HAMi tenant the
// exporter never saw: 25% of the cores for a third of the window (1 h), so
// 0.25 GPU-h spread over the 2.5 h the GPU reported (0.1, 0.05, 0.1), using
// 10% of the device (40% of its share) throughout.
//
//	10:00  1 h, $8: a 0.5 + c 0.1 = 0.6, scale 1. Allocation: a 0.5, c 0.1,
//	       unallocated 0.4. Usage: a 0.4, c 0.04, idle 0.1+0.06 = 0.16,
//	       unallocated 0.4.
//	11:00  0.5 h, $4: a 0.5 + b 0.75 + c 0.05 = 1.3, scale 0.5/1.3 = 5/13.
//	       Allocation: a 2.5/13, b 3.75/13, c 0.25/13, unallocated 0.
//	       Usage: a 0.25×5/13 = 1.25/13, b 3.75/13, c 0.1/13, idle 1.4/13.
//	12:00  1 h, $8: a 0.5 + b 0.75 + c 0.1 = 1.35, scale 20/27.
//	       Allocation: a 10/27, b 15/27, c 2/27, unallocated 0.
//	       Usage: a 0.1×20/27 = 2/27, b 0.375×20/27 = 7.5/27, c 0.8/27,
//	       idle 16.7/27.
func TestThreeHours(t *testing.T) {
	prices, err := price.DefaultPrices().Override([]byte("prices: {H100-80GB: 8.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const model = "NVIDIA H100 80GB HBM3"
	w := fleet.Window{Start: time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC), Step: time.Minute}
	g := gpu("g", model, 2.5)
	g.ReportedByHour = []float64{1, 0.5, 1}
	a := alloc("g", "a", vocab.SharingTimeSlicing, 0.5, 3, 0.5)
	a.Hours = hoursOf(0, []float64{1, 1, 1}, []float64{0.5, 0.5, 0.5}, []float64{1, 0, 1}, []float64{0.8, 0, 0.2})
	b := alloc("g", "b", vocab.SharingTimeSlicing, 0.75, 2, 0.75)
	b.Hours = hoursOf(1, []float64{1, 1}, []float64{0.75, 0.75}, []float64{1, 1}, []float64{1, 0.5})
	c := fleet.HAMiTenant{Namespace: "ns-c", Pod: "c", Container: "c", GPUUUID: "g", CoresPct: 25, DeviceBytes: 80 << 30, UtilP95: 0.1, Coverage: 1.0 / 3}
	res := &fleet.Result{Window: w, GPUs: []fleet.GPU{g}, Allocations: []fleet.Allocation{a, b}, HAMi: []fleet.HAMiTenant{c}}
	l := Build(res, prices)
	if len(l.GPUs) != 1 {
		t.Fatalf("%d GPUs, want 1", len(l.GPUs))
	}
	lg := l.GPUs[0]
	checkBalance(t, lg)
	checkHours(t, lg)

	type want struct {
		hours, scale      float64
		alloc, usage      [3]float64 // a, b, c in GPU-hours
		idle, unallocated float64
	}
	wants := []want{
		{hours: 1, scale: 1, alloc: [3]float64{0.5, 0, 0.1}, usage: [3]float64{0.4, 0, 0.04}, idle: 0.16, unallocated: 0.4},
		{hours: 0.5, scale: 5.0 / 13, alloc: [3]float64{2.5 / 13, 3.75 / 13, 0.25 / 13}, usage: [3]float64{1.25 / 13, 3.75 / 13, 0.1 / 13}, idle: 1.4 / 13},
		{hours: 1, scale: 20.0 / 27, alloc: [3]float64{10.0 / 27, 15.0 / 27, 2.0 / 27}, usage: [3]float64{2.0 / 27, 7.5 / 27, 0.8 / 27}, idle: 16.7 / 27},
	}
	if len(lg.Hourly) != 3 || len(lg.Tenants) != 3 {
		t.Fatalf("%d hours and %d tenants, want 3 and 3", len(lg.Hourly), len(lg.Tenants))
	}
	var windowAlloc, windowUsage [3]float64
	for i, wt := range wants {
		h := lg.Hourly[i]
		if start := w.Start.Add(time.Duration(i) * time.Hour); !h.Start.Equal(start) || !h.End.Equal(start.Add(time.Hour)) {
			t.Errorf("hour %d: %s to %s, want from %s", i, h.Start, h.End, start)
		}
		if !near(h.Hours, wt.hours) || !near(h.Cost, 8*wt.hours) || !near(h.Scale, wt.scale) {
			t.Errorf("hour %d: %g h, $%g, scale %g; want %g h, $%g, scale %g", i, h.Hours, h.Cost, h.Scale, wt.hours, 8*wt.hours, wt.scale)
		}
		for j := range 3 {
			if !near(h.Charges[j].Allocation.GPUHours, wt.alloc[j]) || !near(h.Charges[j].Usage.GPUHours, wt.usage[j]) ||
				!near(h.Charges[j].Allocation.Cost, 8*wt.alloc[j]) || !near(h.Charges[j].Usage.Cost, 8*wt.usage[j]) {
				t.Errorf("hour %d, %s: %+v, want %g GPU-h allocation, %g usage", i, lg.Tenants[j].Pod, h.Charges[j], wt.alloc[j], wt.usage[j])
			}
			windowAlloc[j] += wt.alloc[j]
			windowUsage[j] += wt.usage[j]
		}
		if !near(h.Usage.Idle.GPUHours, wt.idle) || !near(h.Usage.Unallocated.GPUHours, wt.unallocated) || !near(h.Allocation.Unallocated.GPUHours, wt.unallocated) {
			t.Errorf("hour %d: remainder %+v / %+v, want idle %g, unallocated %g", i, h.Allocation, h.Usage, wt.idle, wt.unallocated)
		}
	}
	// The window is the sum of its hours.
	if !near(lg.Hours, 2.5) || !near(lg.Cost, 20) || lg.Mode != string(vocab.SharingTimeSlicing) {
		t.Errorf("window: %g h, $%g, mode %s; want 2.5 h, $20, time-slicing", lg.Hours, lg.Cost, lg.Mode)
	}
	for j, x := range lg.Tenants {
		if !near(x.Allocation.GPUHours, windowAlloc[j]) || !near(x.Usage.GPUHours, windowUsage[j]) {
			t.Errorf("window, %s: %+v, want %g and %g GPU-h", x.Pod, x.Charge, windowAlloc[j], windowUsage[j])
		}
	}
	// What they held before scaling: a 1.5 GPU-h of which it used 0.4 +
	// 0.25 + 0.1; b 1.5, used 0.75 + 0.375; c 0.25, used 0.1.
	for j, wantHeld := range []float64{1.5, 1.5, 0.25} {
		wantUsed := []float64{0.75, 1.125, 0.1}[j]
		if x := lg.Tenants[j]; !near(x.HeldGPUHours, wantHeld) || !near(x.UsedGPUHours, wantUsed) || !x.Measured {
			t.Errorf("%s: held %g used %g measured %v, want %g and %g, measured", x.Pod, x.HeldGPUHours, x.UsedGPUHours, x.Measured, wantHeld, wantUsed)
		}
	}
}

// checkHours: every hour of g balances on both bases, in GPU-hours and
// money, with no negative amount and no tenant using more than it held;
// and g's figures are the sums of its hours.
func checkHours(t *testing.T, g GPU) {
	t.Helper()
	var hours float64
	tenants := make([]Charge, len(g.Tenants))
	var rem [2]Remainder
	for _, h := range g.Hourly {
		if len(h.Charges) != len(g.Tenants) {
			t.Fatalf("GPU %s, hour %s: %d charges for %d tenants", g.UUID, h.Start, len(h.Charges), len(g.Tenants))
		}
		if h.Hours <= 0 || h.Scale <= 0 || h.Scale > 1 {
			t.Errorf("GPU %s, hour %s: %g h, scale %g", g.UUID, h.Start, h.Hours, h.Scale)
		}
		hours += h.Hours
		for i, b := range Bases {
			r := h.Remainder(b)
			parts := []Amount{r.Idle, r.Unallocated}
			for j, c := range h.Charges {
				parts = append(parts, c.On(b))
				if b == Usage && c.Usage.GPUHours > c.Allocation.GPUHours*(1+1e-12) {
					t.Errorf("GPU %s, hour %s: %s used %g of the %g GPU-h it held", g.UUID, h.Start, g.Tenants[j].Pod, c.Usage.GPUHours, c.Allocation.GPUHours)
				}
			}
			var s Amount
			for _, p := range parts {
				if p.GPUHours < 0 || p.Cost < 0 {
					t.Errorf("GPU %s, hour %s, %s basis: a negative amount %+v", g.UUID, h.Start, b, p)
				}
				s.add(p)
			}
			if b == Allocation && r.Idle != (Amount{}) {
				t.Errorf("GPU %s, hour %s: idle %+v on the allocation basis", g.UUID, h.Start, r.Idle)
			}
			if rel(s.GPUHours, h.Hours) > 1e-9 || rel(s.Cost, h.Hours*g.PricePerHour) > 1e-9 || rel(h.Cost, h.Hours*g.PricePerHour) > 1e-9 {
				t.Errorf("GPU %s, hour %s, %s basis: charges + remainder = %g GPU-h, %g; the hour is %g h at %g/h",
					g.UUID, h.Start, b, s.GPUHours, s.Cost, h.Hours, g.PricePerHour)
			}
			rem[i].Idle.add(r.Idle)
			rem[i].Unallocated.add(r.Unallocated)
		}
		for j, c := range h.Charges {
			tenants[j].Allocation.add(c.Allocation)
			tenants[j].Usage.add(c.Usage)
		}
	}
	if rel(hours, g.Hours) > 1e-9 {
		t.Errorf("GPU %s: its hours sum to %g h, its window to %g", g.UUID, hours, g.Hours)
	}
	for i, b := range Bases {
		if r := g.Remainder(b); rel(rem[i].Idle.Cost, r.Idle.Cost) > 1e-9 || rel(rem[i].Unallocated.GPUHours, r.Unallocated.GPUHours) > 1e-9 {
			t.Errorf("GPU %s, %s basis: its hours' remainder %+v, its window's %+v", g.UUID, b, rem[i], r)
		}
	}
	for j, x := range g.Tenants {
		if rel(tenants[j].Allocation.GPUHours, x.Allocation.GPUHours) > 1e-9 || rel(tenants[j].Usage.Cost, x.Usage.Cost) > 1e-9 {
			t.Errorf("GPU %s, %s: its hours' charges %+v, its window's %+v", g.UUID, x.Pod, tenants[j], x.Charge)
		}
	}
}

// TestHourlyBalanceProperty: over random fleets of every sharing mode
// (whole, MIG with and without the analysis's share, time-slicing, MPS,
// DRA, HAMi seen and unseen by the exporter), with gaps in the exporters'
// hours, tenants held while their GPU was not reported, and shares that
// overcommit a GPU, every GPU's tenants are charged, and its idle and
// unallocated time are, what the fleet's world says (worldOf, worked
// from the inputs, not from the ledger), every hour balances, and the
// window's figures are the sums of the hours.
func TestHourlyBalanceProperty(t *testing.T) {
	prices := price.DefaultPrices()
	models := []string{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "Some GPU without a price"}
	modes := []string{"", string(vocab.SharingNone), string(vocab.SharingMIG), string(vocab.SharingTimeSlicing), string(vocab.SharingMPS), ModeDRA, ModeHAMi}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 4646))
		steps := []time.Duration{30 * time.Second, time.Minute, 5 * time.Minute, 7 * time.Minute}[rng.IntN(4)]
		start := time.Date(2026, 3, 9, rng.IntN(24), rng.IntN(60), 0, 0, time.UTC)
		w := fleet.Window{Start: start, End: start.Add(time.Duration(1+rng.IntN(30)) * time.Hour), Step: steps}
		_, n := w.HourGrid()
		hourLen := func(h int) float64 { // the step time the grid puts in hour h
			var x float64
			_, s := w.Grid()
			for i := range s {
				if w.StepHour(i) == h {
					x += steps.Hours()
				}
			}
			return x
		}
		full := make([]float64, n)
		for h := range n {
			full[h] = hourLen(h)
		}
		res := &fleet.Result{Window: w}
		for gi := range 1 + rng.IntN(5) {
			uuid := fmt.Sprintf("GPU-%d", gi)
			model := models[rng.IntN(len(models))]
			g := gpu(uuid, model, 0)
			g.ReportedByHour = make([]float64, n)
			for h := range n {
				switch rng.IntN(6) {
				case 0: // a gap: the exporter did not report it
				case 1:
					g.ReportedByHour[h] = full[h] * rng.Float64()
				default:
					g.ReportedByHour[h] = full[h]
				}
				g.ReportedHours += g.ReportedByHour[h]
			}
			if rng.IntN(8) == 0 { // no hours folded: the window is its one period
				g.ReportedByHour = nil
			}
			res.GPUs = append(res.GPUs, g)
			mode := modes[rng.IntN(len(modes))]
			for i := range rng.IntN(7) {
				pod := fmt.Sprintf("p%d-%d", gi, i)
				if mode == ModeHAMi {
					res.HAMi = append(res.HAMi, fleet.HAMiTenant{Namespace: "ns-" + pod, Pod: pod, Container: "c", GPUUUID: uuid,
						CoresPct: int64(rng.IntN(101)), MemoryMiB: int64(rng.IntN(100 << 10)), DeviceBytes: float64(int64(rng.IntN(2)) * 80 << 30),
						UtilP95: rng.Float64() * 1.2, MemP99: rng.Float64() * (90 << 30), Coverage: rng.Float64()})
					if rng.IntN(2) == 0 {
						continue // a tenant the exporter did not see
					}
				}
				sharing, share := vocab.Sharing(mode), rng.Float64()*1.5
				if mode == ModeDRA || mode == ModeHAMi {
					sharing = vocab.SharingTimeSlicing
				}
				x := alloc(uuid, pod, sharing, share, 0, -1)
				x.Model = model
				if mode == ModeDRA {
					x.AllocationPath = vocab.AllocationPathDRA
				}
				catalog := mode == string(vocab.SharingMIG) && rng.IntN(3) == 0
				if catalog {
					x.MIGProfile, x.Model = "1g.10gb", "NVIDIA A100-SXM4-80GB"
				}
				first := rng.IntN(n)
				last := first + rng.IntN(n-first)
				hs := hoursOf(first, make([]float64, last-first+1), make([]float64, last-first+1), make([]float64, last-first+1), make([]float64, last-first+1))
				measured := rng.IntN(5) > 0
				for j := range hs.Held {
					// Held for up to the hour, whether or not its GPU was
					// reported then.
					hs.Held[j] = full[first+j] * min(1, rng.Float64()*1.3)
					if !catalog {
						hs.GPUHours[j] = hs.Held[j] * share
					}
					if measured && rng.IntN(4) > 0 {
						hs.Measured[j] = hs.Held[j] * rng.Float64()
						hs.Used[j] = hs.Measured[j] * rng.Float64() * 1.5 // a time slice above its share
					}
					x.HeldHours += hs.Held[j]
					x.AllocatedGPUHours += hs.GPUHours[j]
				}
				if sum(hs.Measured...) > 0 {
					x.UtilizationSteps, x.AvgUtilization = 1, sum(hs.Used...)/sum(hs.Measured...)
				}
				if rng.IntN(10) > 0 {
					x.Hours = hs
				}
				res.Allocations = append(res.Allocations, x)
			}
		}
		world := worldOf(res, prices) // before Build, which gives HAMi's tenants their shares in place
		l := Build(res, prices)
		checkWorld(t, seed, l, world)
		for i, g := range l.GPUs {
			checkHours(t, g)
			if res.GPUs[i].ReportedByHour != nil {
				var want int
				for _, h := range res.GPUs[i].ReportedByHour {
					if h > 0 {
						want++
					}
				}
				if len(g.Hourly) != want {
					t.Errorf("seed %d, GPU %s: %d hours, it reported %d", seed, g.UUID, len(g.Hourly), want)
				}
			}
		}
		for _, b := range Bases {
			tot := l.Totals(b)
			s := tot.Attributed.Cost + tot.Idle.Cost + tot.Unallocated.Cost
			if rel(s, tot.Cost.Cost) > 1e-9 {
				t.Errorf("seed %d, %s basis: attributed + idle + unallocated = %g, fleet cost %g", seed, b, s, tot.Cost.Cost)
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}
