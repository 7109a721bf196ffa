package ledger

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// The property tests' fleets: each GPU's hours and each tenant's hold and
// use are drawn by the generator, which keeps what it drew (a world), and
// the expected ledger is worked from the world by the rules of
// docs/MONEY.md, not read back from the ledger: a GPU costs its price for
// each hour its exporter reported it; in each such hour a tenant is
// charged what it held (share × time held), all of them scaled down
// together where they held more than the hour; the usage basis charges
// what it used (held × its utilisation, capped at 1; everything held
// where it had no reading); what nobody held is unallocated, what was held
// and not used idle. So a wrong charge shows as a tenant charged other
// than the world says and as a remainder other than the world's: the
// remainder is not the price less the charges (issue 53's mutation
// audit: with `price − charged`, any wrong charge balanced).

// propPrices are the test's own: the expected money is hours × these.
var propPrices = map[string]float64{"NVIDIA H100 80GB HBM3": 8, "NVIDIA A100-SXM4-80GB": 3, "Some GPU without a price": 0}

var propModels = []string{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Some GPU without a price"}

// propWindow is six hours: small enough to draw every hour of every
// tenant, long enough for tenants that come and go.
var propWindow = fleet.Window{Start: time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 9, 6, 0, 0, 0, time.UTC), Step: time.Minute}

// worldTenant is what the generator drew for one tenant: in each period
// of its GPU (each hour, or the window), the GPU-hours it held and used.
type worldTenant struct {
	pod        string
	held, used []float64
}

// worldGPU is one GPU as drawn: the hours its exporter reported it in
// each period, its price, its tenants.
type worldGPU struct {
	uuid     string
	price    float64
	reported []float64
	tenants  []worldTenant
}

// expected is the ledger of a GPU worked from the world, in GPU-hours.
type expected struct {
	hours, unallocated, idle float64
	alloc, usage             map[string]float64 // by pod
}

func (w worldGPU) expect() expected {
	e := expected{alloc: map[string]float64{}, usage: map[string]float64{}}
	for p, rep := range w.reported {
		if rep <= 0 {
			continue // an hour the exporter did not report the GPU: no cost, no charge
		}
		e.hours += rep
		var held float64
		for _, t := range w.tenants {
			held += t.held[p]
		}
		scale := 1.0
		if held > rep {
			scale = rep / held
		}
		e.unallocated += max(0, rep-held)
		for _, t := range w.tenants {
			e.alloc[t.pod] += t.held[p] * scale
			e.usage[t.pod] += t.used[p] * scale
			e.idle += (t.held[p] - t.used[p]) * scale
		}
	}
	return e
}

// drawWorld draws a fleet on propWindow and what each of its GPUs is:
// hourly (the analysis folded hours) or with the window as one period.
func drawWorld(rng *rand.Rand) (*fleet.Result, []worldGPU) {
	res := &fleet.Result{Window: propWindow}
	_, nh := propWindow.HourGrid()
	windowHours := propWindow.Duration().Hours()
	hourly := rng.IntN(4) != 0
	periods := 1
	if hourly {
		periods = nh
	}
	var world []worldGPU
	for gi := range 1 + rng.IntN(5) {
		model := propModels[rng.IntN(len(propModels))]
		wg := worldGPU{uuid: fmt.Sprintf("GPU-%d", gi), price: propPrices[model], reported: make([]float64, periods)}
		g := gpu(wg.uuid, model, 0)
		if hourly {
			g.ReportedByHour = make([]float64, nh)
			for h := range nh {
				switch r := rng.IntN(10); {
				case r < 2: // not reported this hour
				case r < 6:
					wg.reported[h] = 1
				default:
					wg.reported[h] = rng.Float64()
				}
				g.ReportedByHour[h] = wg.reported[h]
				g.ReportedHours += wg.reported[h]
			}
		} else {
			wg.reported[0] = windowHours * rng.Float64()
			g.ReportedHours = wg.reported[0]
		}
		res.GPUs = append(res.GPUs, g)
		var reportedAll float64
		for _, r := range wg.reported {
			reportedAll += r
		}
		for ti := range rng.IntN(7) {
			pod := fmt.Sprintf("p%d-%d", gi, ti)
			wt := worldTenant{pod: pod, held: make([]float64, periods), used: make([]float64, periods)}
			if rng.IntN(6) == 0 {
				// A HAMi tenant the exporter did not see: gpucores c and
				// gpumem m of an 80 GiB device hold max(c/100, m/80 GiB)
				// (HAMi's allocation: the larger share keeps the others
				// out), for the part of the window HAMi read it, spread
				// over the GPU's reported time; it used its p95
				// utilisation of the device, capped at what it held.
				cores, memMiB := int64(rng.IntN(101)), int64(rng.IntN(80<<10))
				cov, util := rng.Float64(), rng.Float64()*1.2
				share := max(float64(cores)/100, float64(memMiB)/(80<<10))
				res.HAMi = append(res.HAMi, fleet.HAMiTenant{Namespace: "ns-" + pod, Pod: pod, Container: "c", GPUUUID: wg.uuid, Node: "n1",
					CoresPct: cores, MemoryMiB: memMiB, DeviceBytes: 80 << 30, UtilP95: util, Coverage: cov})
				usedOf := math.Min(1, util/share)
				for p, r := range wg.reported {
					if reportedAll > 0 {
						wt.held[p] = share * cov * windowHours * r / reportedAll
						wt.used[p] = wt.held[p] * usedOf
					}
				}
				wg.tenants = append(wg.tenants, wt)
				continue
			}
			mode := []string{"", string(vocab.SharingNone), string(vocab.SharingMIG), string(vocab.SharingTimeSlicing), string(vocab.SharingMPS), ModeDRA}[rng.IntN(6)]
			share := rng.Float64() * 1.5
			if mode == "" || mode == string(vocab.SharingNone) || mode == ModeDRA {
				share = 1
			}
			sharing := vocab.Sharing(mode)
			if mode == ModeDRA {
				sharing = ""
			}
			// A MIG slice the exporter gave no share: NVIDIA's A100
			// profile table gives 1g.10gb one of seven compute slices.
			catalog := mode == string(vocab.SharingMIG) && rng.IntN(3) == 0
			if catalog {
				share = 1.0 / 7
			}
			measured := rng.IntN(5) != 0
			x := alloc(wg.uuid, pod, sharing, share, 0, -1)
			x.Model = model
			if mode == ModeDRA {
				x.AllocationPath = vocab.AllocationPathDRA
			}
			if catalog {
				x.MIGProfile, x.Model = "1g.10gb", "NVIDIA A100-SXM4-80GB"
			}
			if hourly {
				first := rng.IntN(nh)
				n := 1 + rng.IntN(nh-first)
				hx := &fleet.AllocationHours{First: first, Held: make([]float64, n), GPUHours: make([]float64, n), Measured: make([]float64, n), Used: make([]float64, n)}
				for i := range n {
					t := 1.0
					if rng.IntN(3) == 0 {
						t = rng.Float64()
					}
					reading := rng.Float64()*1.5 - 0.1
					hx.Held[i], hx.GPUHours[i] = t, t*share
					if catalog {
						hx.GPUHours[i] = 0
					}
					if measured {
						hx.Measured[i], hx.Used[i] = t, t*reading
					}
					x.HeldHours += t
					wt.held[first+i] = t * share
					wt.used[first+i] = wt.held[first+i]
					if measured {
						wt.used[first+i] *= min(1, max(0, reading))
					}
				}
				x.Hours = hx
			} else {
				x.HeldHours = windowHours * rng.Float64() * 1.3
				reading := rng.Float64()*1.5 - 0.1
				if measured {
					x.AvgUtilization, x.UtilizationSteps = reading, 10
				}
				wt.held[0] = share * x.HeldHours
				wt.used[0] = wt.held[0]
				if measured {
					wt.used[0] *= min(1, max(0, reading))
				}
			}
			x.AllocatedGPUHours = share * x.HeldHours
			if catalog {
				x.AllocatedGPUHours, x.Share = 0, 0
			}
			res.Allocations = append(res.Allocations, x)
			wg.tenants = append(wg.tenants, wt)
		}
		world = append(world, wg)
	}
	return res, world
}

func propPriceTable(t *testing.T) *price.Prices {
	t.Helper()
	prices, err := price.DefaultPrices().Override([]byte("prices: {H100-80GB: 8.00, A100-80GB: 3.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return prices
}

// TestBalanceProperty: over random fleets of every sharing mode, hour by
// hour and by the window, each GPU's tenants are charged, and its idle
// and unallocated time are, what the drawn world says, in GPU-hours and
// money, on both bases; and the fleet's totals are the worlds' sums.
func TestBalanceProperty(t *testing.T) {
	prices := propPriceTable(t)
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 53))
		res, world := drawWorld(rng)
		l := Build(res, prices)
		checkWorld(t, seed, l, world)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// checkWorld compares l with the world it was built from: every GPU's
// hours and cost, its tenants' charges and its idle and unallocated time
// on both bases, and the fleet's totals, each worked from the world.
func checkWorld(t *testing.T, seed uint64, l *Ledger, world []worldGPU) {
	t.Helper()
	if len(l.GPUs) != len(world) {
		t.Fatalf("seed %d: %d GPUs in the ledger, want %d", seed, len(l.GPUs), len(world))
	}
	var fleetCost, fleetUnalloc, fleetIdle, fleetAttrAlloc, fleetAttrUsage float64
	for i, g := range l.GPUs {
		wg := world[i]
		e := wg.expect()
		checkBalance(t, g)
		// Within 1e-9 of the GPU's hours: what one hour's rounding
		// leaves, far below a mischarge.
		tol := 1e-9 * max(1, e.hours)
		off := func(got, want float64) bool { return math.Abs(got-want) > tol }
		if g.UUID != wg.uuid || off(g.Hours, e.hours) || off(g.Cost, e.hours*wg.price) {
			t.Errorf("seed %d, %s: %g h, $%g; want %s, %g h, $%g", seed, g.UUID, g.Hours, g.Cost, wg.uuid, e.hours, e.hours*wg.price)
		}
		for _, b := range Bases {
			r := g.Remainder(b)
			if off(r.Unallocated.GPUHours, e.unallocated) || off(r.Unallocated.Cost, e.unallocated*wg.price) {
				t.Errorf("seed %d, %s, %s basis: unallocated %+v; want %g GPU-h, $%g", seed, g.UUID, b, r.Unallocated, e.unallocated, e.unallocated*wg.price)
			}
			wantIdle := e.idle
			if b == Allocation {
				wantIdle = 0
			}
			if off(r.Idle.GPUHours, wantIdle) || off(r.Idle.Cost, wantIdle*wg.price) {
				t.Errorf("seed %d, %s, %s basis: idle %+v; want %g GPU-h, $%g", seed, g.UUID, b, r.Idle, wantIdle, wantIdle*wg.price)
			}
		}
		if len(g.Tenants) != len(wg.tenants) {
			t.Errorf("seed %d, %s: %d tenants, want %d", seed, g.UUID, len(g.Tenants), len(wg.tenants))
		}
		for _, x := range g.Tenants {
			wa, wu := e.alloc[x.Pod], e.usage[x.Pod]
			if off(x.Allocation.GPUHours, wa) || off(x.Allocation.Cost, wa*wg.price) || off(x.Usage.GPUHours, wu) || off(x.Usage.Cost, wu*wg.price) {
				t.Errorf("seed %d, %s, %s: charged %+v; want %g GPU-h ($%g) held, %g ($%g) used", seed, g.UUID, x.Pod, x.Charge, wa, wa*wg.price, wu, wu*wg.price)
			}
			fleetAttrAlloc += wa * wg.price
			fleetAttrUsage += wu * wg.price
		}
		fleetCost += e.hours * wg.price
		fleetUnalloc += e.unallocated * wg.price
		fleetIdle += e.idle * wg.price
	}
	tol := 1e-9 * max(1, fleetCost)
	for _, b := range Bases {
		tot := l.Totals(b)
		attr, idle := fleetAttrAlloc, 0.0
		if b == Usage {
			attr, idle = fleetAttrUsage, fleetIdle
		}
		if math.Abs(tot.Cost.Cost-fleetCost) > tol || math.Abs(tot.Unallocated.Cost-fleetUnalloc) > tol ||
			math.Abs(tot.Idle.Cost-idle) > tol || math.Abs(tot.Attributed.Cost-attr) > tol {
			t.Errorf("seed %d, %s basis: totals %+v; want cost $%g, attributed $%g, idle $%g, unallocated $%g", seed, b, tot, fleetCost, attr, idle, fleetUnalloc)
		}
	}
}

// worldOf is the world of a fleet drawn as TestHourlyBalanceProperty
// draws it, worked from its inputs before Build (which gives HAMi's
// tenants their shares in place) by the rules of docs/MONEY.md and
// fleet/hours.go's usage rule: an allocation holds its GPU-hours hour by
// hour (a MIG slice without a share its profile's, 1g.10gb one of the
// A100's seven compute slices), and uses in each hour its reading of
// that hour, else its window's, capped at 1; without any reading, all it
// held. An allocation without hours, and a HAMi tenant the exporter did
// not see, hold their window figures spread over the hours the GPU
// reported. A HAMi tenant the exporter saw holds HAMi's share (the larger
// of gpucores over 100 and gpumem over the device) of the time the
// exporter saw it held, and uses its p95 share of it, where HAMi read it.
// A GPU with no hours folded has the window as its one period.
func worldOf(res *fleet.Result, prices *price.Prices) []worldGPU {
	_, n := res.Window.HourGrid()
	windowHours := res.Window.Duration().Hours()
	clamp := func(v float64) float64 { return min(1, max(0, v)) }
	type key struct{ uuid, pod string }
	hami := map[key]fleet.HAMiTenant{}
	for _, h := range res.HAMi {
		hami[key{h.GPUUUID, h.Pod}] = h
	}
	held := func(h fleet.HAMiTenant) (share, util float64) {
		share = float64(h.CoresPct) / 100
		used := h.UtilP95
		if h.DeviceBytes > 0 {
			share = max(share, float64(h.MemoryMiB)*(1<<20)/h.DeviceBytes)
			used = max(used, h.MemP99/h.DeviceBytes)
		}
		if share > 0 {
			util = used / share
		}
		return share, util
	}
	var world []worldGPU
	for _, g := range res.GPUs {
		price, _ := prices.PerHour(g.Model)
		wg := worldGPU{uuid: g.UUID, price: price, reported: []float64{g.ReportedHours}}
		if g.ReportedByHour != nil {
			wg.reported = g.ReportedByHour
		}
		var reportedAll float64
		for _, r := range wg.reported {
			reportedAll += r
		}
		// spread puts window figures on the GPU's periods.
		spread := func(pod string, heldW, usedW float64) worldTenant {
			wt := worldTenant{pod: pod, held: make([]float64, len(wg.reported)), used: make([]float64, len(wg.reported))}
			for p, r := range wg.reported {
				if reportedAll > 0 {
					wt.held[p], wt.used[p] = heldW*r/reportedAll, usedW*r/reportedAll
				}
			}
			return wt
		}
		seen := map[string]bool{}
		for _, x := range res.Allocations {
			if x.UUID != g.UUID {
				continue
			}
			seen[x.Pod] = true
			h, isHAMi := hami[key{x.UUID, x.Pod}]
			share, util := held(h)
			measured := isHAMi && h.Coverage > 0
			catalog := !isHAMi && x.MIGProfile != "" && x.AllocatedGPUHours == 0 && x.HeldHours > 0
			if x.Hours == nil {
				heldW := x.AllocatedGPUHours
				if !isHAMi {
					measured, util = x.UtilizationSteps > 0, x.AvgUtilization
				}
				switch {
				case isHAMi:
					heldW = share * x.HeldHours
				case catalog:
					heldW = x.HeldHours / 7
				}
				usedW := heldW
				if measured {
					usedW = heldW * clamp(util)
				}
				wg.tenants = append(wg.tenants, spread(x.Pod, heldW, usedW))
				continue
			}
			hs := x.Hours
			var sumM, sumU float64
			for j := range hs.Held {
				sumM += hs.Measured[j]
				sumU += hs.Used[j]
			}
			heldH, usedH := make([]float64, n), make([]float64, n)
			for j := range hs.Held {
				h := hs.First + j
				u := util
				switch {
				case isHAMi:
					heldH[h] = share * hs.Held[j]
				case catalog:
					heldH[h] = hs.Held[j] / 7
				default:
					heldH[h] = hs.GPUHours[j]
				}
				if !isHAMi {
					measured = sumM > 0
					u = sumU / max(sumM, 1e-300)
					if hs.Measured[j] > 0 {
						u = hs.Used[j] / hs.Measured[j]
					}
				}
				usedH[h] = heldH[h]
				if measured {
					usedH[h] *= clamp(u)
				}
			}
			if g.ReportedByHour == nil {
				var hw, uw float64
				for h := range n {
					hw += heldH[h]
					uw += usedH[h]
				}
				wg.tenants = append(wg.tenants, worldTenant{pod: x.Pod, held: []float64{hw}, used: []float64{uw}})
				continue
			}
			wg.tenants = append(wg.tenants, worldTenant{pod: x.Pod, held: heldH, used: usedH})
		}
		for _, h := range res.HAMi {
			if h.GPUUUID != g.UUID || seen[h.Pod] {
				continue
			}
			share, util := held(h)
			heldW := share * h.Coverage * windowHours
			usedW := heldW
			if h.Coverage > 0 {
				usedW = heldW * clamp(util)
			}
			wg.tenants = append(wg.tenants, spread(h.Pod, heldW, usedW))
		}
		world = append(world, wg)
	}
	return world
}
