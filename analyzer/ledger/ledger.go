package ledger

import (
	"cmp"
	"maps"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/internal/mig"
	"github.com/gpulens/gpulens/signals"
)

// Basis is how a tenant is charged: for what it held or what it used.
type Basis string

// The bases, the values of gpulens report --cost-basis.
const (
	Allocation Basis = "allocation"
	Usage      Basis = "usage"
)

// Bases are the bases in the order reports show them.
var Bases = []Basis{Allocation, Usage}

// Modes, the values of Tenant.Mode: signals' sharing values, with whole
// for an unshared GPU and dra and hami for the allocations those make.
const (
	ModeWhole = "whole"
	ModeDRA   = "dra"
	ModeHAMi  = "hami"
)

// Amount is a part of a GPU's cost, in GPU-hours and in money. Cost is
// GPUHours × the GPU's price; zero where the GPU has no price.
type Amount struct {
	GPUHours float64 `json:"gpu_hours"`
	Cost     float64 `json:"cost"`
}

func (a *Amount) add(b Amount) { a.GPUHours += b.GPUHours; a.Cost += b.Cost }

// Charge is one tenant's charge on both bases.
type Charge struct {
	Allocation Amount `json:"allocation"`
	Usage      Amount `json:"usage"`
}

// On is the charge on basis b.
func (c Charge) On(b Basis) Amount {
	if b == Usage {
		return c.Usage
	}
	return c.Allocation
}

// Tenant is one container's hold on one GPU.
type Tenant struct {
	Namespace   string `json:"namespace"`
	Pod         string `json:"pod"`
	Container   string `json:"container"`
	GPUInstance string `json:"gpu_instance,omitempty"`
	Mode        string `json:"mode"`
	// Share is the share of the GPU it held, as last seen (HAMi's
	// HeldShare for a HAMi tenant).
	Share float64 `json:"share"`
	// HeldGPUHours and UsedGPUHours are what it held and used before any
	// scaling. Measured is false where it had no utilisation reading: it
	// is then charged on the usage basis for all it held (no reading, no
	// discount).
	HeldGPUHours float64 `json:"held_gpu_hours"`
	UsedGPUHours float64 `json:"used_gpu_hours"`
	Measured     bool    `json:"measured"`
	Charge
}

// Remainder is the part of a GPU's cost no tenant is charged: Idle
// (held and unused, on the usage basis; zero on the allocation basis)
// and Unallocated (held by nobody).
type Remainder struct {
	Idle        Amount `json:"idle"`
	Unallocated Amount `json:"unallocated"`
}

// GPU is one physical GPU's ledger.
type GPU struct {
	Cluster string `json:"cluster,omitempty"`
	Node    string `json:"node"`
	UUID    string `json:"uuid"`
	Model   string `json:"model"`
	// Mode is the sharing mode of the tenants that held it longest;
	// empty when none held it.
	Mode string `json:"mode,omitempty"`
	// Hours is the time its exporter reported it; Cost is Hours × its
	// price, unknown (PriceKnown false, Cost 0) without one.
	Hours        float64 `json:"hours"`
	PricePerHour float64 `json:"price_per_hour"`
	PriceKnown   bool    `json:"price_known"`
	Cost         float64 `json:"cost"`
	// Scale is what every tenant's held and used hours were multiplied by:
	// 1, or Hours over what they held together where that was more.
	Scale   float64  `json:"scale"`
	Tenants []Tenant `json:"tenants,omitempty"`
	// Allocation and Usage are the remainder on each basis.
	Allocation Remainder `json:"allocation"`
	Usage      Remainder `json:"usage"`
}

// Remainder is the GPU's remainder on basis b.
func (g GPU) Remainder(b Basis) Remainder {
	if b == Usage {
		return g.Usage
	}
	return g.Allocation
}

// Totals sum a basis over GPUs: Attributed + Idle + Unallocated = Cost.
type Totals struct {
	Attributed  Amount `json:"attributed"`
	Idle        Amount `json:"idle"`
	Unallocated Amount `json:"unallocated"`
	Cost        Amount `json:"fleet_cost"`
}

// Ledger is the fleet's: every GPU's, and their sums on both bases over
// the priced GPUs (money) and all of them (GPU-hours).
type Ledger struct {
	GPUs       []GPU  `json:"gpus"`
	Allocation Totals `json:"allocation"`
	Usage      Totals `json:"usage"`
	// Unpriced are the models without a price: their GPUs' hours are in
	// the totals' GPU-hours, and their money in none.
	Unpriced []string `json:"unpriced_models,omitempty"`
	// Orphans are the allocations on a GPU its exporter never reported:
	// no cost to charge them from, counted here and nowhere else.
	Orphans int `json:"orphan_allocations,omitempty"`
}

// Totals are the sums on basis b.
func (l *Ledger) Totals(b Basis) Totals {
	if b == Usage {
		return l.Usage
	}
	return l.Allocation
}

// Build is res's ledger at prices (nil: every price unknown).
func Build(res *fleet.Result, prices *recommend.Prices) *Ledger {
	l := &Ledger{}
	byGPU := map[fleet.GPUKey][]Tenant{}
	for _, x := range res.Allocations {
		k := fleet.GPUKey{Cluster: x.Cluster, Node: x.Node, UUID: x.UUID}
		byGPU[k] = append(byGPU[k], allocationTenant(x))
	}
	hamiTenants(res, byGPU)
	unpriced := map[string]bool{}
	for _, g := range res.GPUs {
		price, err := prices.PerHour(g.Model)
		if err != nil {
			unpriced[g.Model] = true
		}
		lg := balance(g, byGPU[g.GPUKey], price, err == nil)
		delete(byGPU, g.GPUKey)
		l.GPUs = append(l.GPUs, lg)
		l.addTotals(lg)
	}
	for _, ts := range byGPU {
		l.Orphans += len(ts)
	}
	for m := range unpriced {
		l.Unpriced = append(l.Unpriced, cmp.Or(m, "GPUs of unknown model"))
	}
	slices.Sort(l.Unpriced)
	return l
}

// allocationTenant is x as a tenant, before scaling.
func allocationTenant(x fleet.Allocation) Tenant {
	t := Tenant{Namespace: x.Namespace, Pod: x.Pod, Container: x.Container, GPUInstance: x.GPUInstance,
		Mode: modeOf(x), Share: x.Share, HeldGPUHours: x.AllocatedGPUHours}
	if t.HeldGPUHours == 0 && x.HeldHours > 0 && x.MIGProfile != "" {
		// A slice the analysis gave no share: its profile's, from the catalog.
		if m, ok := mig.Lookup(x.Model); ok {
			if p, ok := m.Profile(x.MIGProfile); ok {
				t.Share, t.HeldGPUHours = p.ComputeShare(), p.ComputeShare()*x.HeldHours
			}
		}
	}
	t.HeldGPUHours = max(0, t.HeldGPUHours)
	t.used(x.UtilizationSteps > 0, x.AvgUtilization)
	return t
}

// used sets the tenant's used hours from a utilisation of its share.
func (t *Tenant) used(measured bool, util float64) {
	t.Measured = measured
	t.UsedGPUHours = t.HeldGPUHours
	if measured {
		t.UsedGPUHours = t.HeldGPUHours * min(1, max(0, util))
	}
}

func modeOf(x fleet.Allocation) string {
	switch {
	case x.AllocationPath == signals.AllocationPathDRA:
		return ModeDRA
	case x.Sharing == "" || x.Sharing == signals.SharingNone:
		return ModeWhole
	}
	return x.Sharing
}

// hamiTenants puts res's HAMi tenants on their GPUs: the exporter sees a
// HAMi GPU time-sliced, each tenant with a replica's share; HAMi's
// resources say what each really holds. A tenant the exporter saw is
// re-shared over the hours it was seen; one it did not is added over the
// part of the window HAMi read it.
func hamiTenants(res *fleet.Result, byGPU map[fleet.GPUKey][]Tenant) {
	if len(res.HAMi) == 0 {
		return
	}
	// By cluster and UUID: the clusters of one store may repeat pod
	// names and even UUIDs, and a tenant is charged in its own only.
	gpuOf := map[[2]string]fleet.GPUKey{}
	for _, g := range res.GPUs {
		gpuOf[[2]string{g.Cluster, g.UUID}] = g.GPUKey
	}
	heldHours := map[[5]string]float64{}
	for _, x := range res.Allocations {
		heldHours[[5]string{x.Cluster, x.UUID, x.Namespace, x.Pod, x.Container}] += x.HeldHours
	}
	window := res.Window.Duration().Hours()
	for _, h := range res.HAMi {
		k, ok := gpuOf[[2]string{h.Cluster, h.GPUUUID}]
		if !ok {
			k = fleet.GPUKey{Cluster: h.Cluster, Node: h.Node, UUID: h.GPUUUID}
		}
		share := max(0, recommend.HAMiShare(h.CoresPct, h.MemoryMiB, h.DeviceBytes))
		hours, seen := heldHours[[5]string{h.Cluster, h.GPUUUID, h.Namespace, h.Pod, h.Container}]
		if !seen {
			hours = h.Coverage * window
		}
		t := Tenant{Namespace: h.Namespace, Pod: h.Pod, Container: h.Container, Mode: ModeHAMi, Share: share, HeldGPUHours: share * hours}
		// What it used is the larger of its SM utilisation and its memory
		// used, each of the device (signals/hami's UsedShare); of the
		// tenant's share, that over the share. The analysis keeps HAMi's
		// p95 of the utilisation and p99 of the memory, not averages: the
		// usage basis charges a HAMi tenant for its busy hours.
		used := h.UtilP95
		if h.DeviceBytes > 0 {
			used = max(used, h.MemP99/h.DeviceBytes)
		}
		util := 0.0
		if share > 0 {
			util = used / share
		}
		t.used(h.Coverage > 0, util)
		ts := byGPU[k]
		i := slices.IndexFunc(ts, func(x Tenant) bool {
			return x.Namespace == h.Namespace && x.Pod == h.Pod && x.Container == h.Container
		})
		if i >= 0 {
			ts[i] = t
		} else {
			byGPU[k] = append(ts, t)
		}
	}
}

// balance charges g's tenants at price: what they held and used, scaled
// down together where they held more than g's hours, and the rest of the
// hours as the remainder.
func balance(g fleet.GPU, ts []Tenant, price float64, priced bool) GPU {
	out := GPU{Cluster: g.Cluster, Node: g.Node, UUID: g.UUID, Model: g.Model, Hours: max(0, g.ReportedHours), PriceKnown: priced, Scale: 1}
	if priced {
		out.PricePerHour = price
	}
	money := func(h float64) Amount { return Amount{GPUHours: h, Cost: h * out.PricePerHour} }
	out.Cost = out.Hours * out.PricePerHour
	var held float64
	modeHours := map[string]float64{}
	for _, t := range ts {
		held += t.HeldGPUHours
		modeHours[t.Mode] += t.HeldGPUHours
	}
	if held > out.Hours {
		out.Scale = out.Hours / held
	}
	var idle, charged float64
	for _, t := range ts {
		h, u := t.HeldGPUHours*out.Scale, t.UsedGPUHours*out.Scale
		t.Allocation, t.Usage = money(h), money(u)
		idle += h - u
		charged += h
		out.Tenants = append(out.Tenants, t)
	}
	// What is left is computed, not summed from its parts, so that each
	// GPU balances to the rounding of one subtraction.
	free := max(0, out.Hours-charged)
	out.Allocation.Unallocated = money(free)
	out.Usage.Unallocated = money(free)
	out.Usage.Idle = money(idle)
	if len(ts) > 0 {
		out.Mode = slices.MaxFunc(slices.Sorted(maps.Keys(modeHours)), func(a, b string) int { return cmp.Compare(modeHours[a], modeHours[b]) })
	}
	slices.SortFunc(out.Tenants, func(a, b Tenant) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container), cmp.Compare(a.GPUInstance, b.GPUInstance))
	})
	return out
}

// addTotals adds g to both bases' totals: GPU-hours always, money where g
// is priced.
func (l *Ledger) addTotals(g GPU) {
	for _, b := range Bases {
		tot := &l.Allocation
		if b == Usage {
			tot = &l.Usage
		}
		r := g.Remainder(b)
		tot.Cost.add(Amount{GPUHours: g.Hours, Cost: g.Cost})
		tot.Idle.add(r.Idle)
		tot.Unallocated.add(r.Unallocated)
		for _, t := range g.Tenants {
			tot.Attributed.add(t.On(b))
		}
	}
}
