package ledger

import (
	"cmp"
	"slices"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// entry is a tenant before scaling, with what it held and used in each
// hour of the window's HourGrid; held nil where only its window figures
// (Tenant.HeldGPUHours, UsedGPUHours) are known.
type entry struct {
	Tenant
	held, used []float64
}

// Build is res's ledger at prices (nil: every price unknown). It gives
// res's HAMi tenants' allocations HAMi's shares (fleet.Result.ApplyHAMi).
func Build(res *fleet.Result, prices *price.Prices) *Ledger {
	l := &Ledger{}
	// HAMi's shares for the allocations that are HAMi tenants, as the
	// pipeline gave them (idempotent): one rule for the report and the
	// ledger, whoever built res.
	res.ApplyHAMi()
	_, hours := res.Window.HourGrid()
	byGPU := map[fleet.GPUKey][]*entry{}
	for i := range res.Allocations {
		x := &res.Allocations[i]
		k := fleet.GPUKey{Cluster: x.Cluster, Node: x.Node, UUID: x.UUID}
		byGPU[k] = append(byGPU[k], allocationEntry(x, hours))
	}
	hamiTenants(res, byGPU)
	unpriced := map[string]bool{}
	absent := absences(res) // absent.go
	for _, g := range res.GPUs {
		price, err := prices.PerHour(g.Model)
		if err != nil {
			unpriced[g.Model] = true
		}
		lg := balance(res.Window, g, byGPU[g.GPUKey], price, err == nil)
		a, ok := absent[g.GPUKey]
		lg.Absent = absentOf(a, ok, lg.PricePerHour)
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

// allocationEntry is x as a tenant, before scaling: hour by hour where
// the analysis folded x's hours (of a grid of hours hours).
func allocationEntry(x *fleet.Allocation, hours int) *entry {
	t := Tenant{Namespace: x.Namespace, Pod: x.Pod, Container: x.Container, GPUInstance: x.GPUInstance,
		Mode: modeOf(*x), Share: x.Share, HeldGPUHours: x.AllocatedGPUHours}
	// A slice the analysis gave no share: its profile's, from the catalog.
	catalog := 0.0
	if t.HeldGPUHours == 0 && x.HeldHours > 0 && x.MIGProfile != "" {
		if m, ok := price.LookupModel(x.Model); ok {
			if p, ok := m.Profile(x.MIGProfile); ok {
				catalog = price.ProfileShare(criteria.ShareCompute, p)
				t.Share, t.HeldGPUHours = catalog, catalog*x.HeldHours
			}
		}
	}
	t.HeldGPUHours = max(0, t.HeldGPUHours)
	e := &entry{Tenant: t}
	if x.Hours == nil {
		e.Tenant.used(x.UtilizationSteps > 0, x.AvgUtilization)
		return e
	}
	// Each hour is charged by the usage rule (fleet.AllocationHours.
	// Utilization: the hour's reading, or the window's where the hour had
	// none); an allocation with no reading at all is charged on the usage
	// basis for all it held.
	window, measured := x.Hours.WindowUtilization()
	e.held, e.used = make([]float64, hours), make([]float64, hours)
	e.HeldGPUHours, e.Measured = 0, measured
	for h := range hours {
		held, gpuHours, _, _ := x.Hours.At(h)
		if catalog > 0 {
			gpuHours = catalog * held
		}
		gpuHours = max(0, gpuHours)
		util := 1.0
		if measured {
			util = x.Hours.Utilization(h, window)
		}
		e.held[h], e.used[h] = gpuHours, gpuHours*util
		e.HeldGPUHours += e.held[h]
		e.UsedGPUHours += e.used[h]
	}
	return e
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
	case x.AllocationPath == vocab.AllocationPathDRA:
		return ModeDRA
	case x.Sharing == "" || x.Sharing == vocab.SharingNone:
		return ModeWhole
	}
	return string(x.Sharing)
}

// hamiTenants puts res's HAMi tenants on their GPUs. A tenant the
// exporter saw is its allocations, which fleet.Result.ApplyHAMi gave
// HAMi's share and use: it is only named a HAMi tenant here. One the
// exporter did not see is added at its share over the part of the window
// HAMi read it, which balance spreads over the hours its GPU reported:
// HAMi's series are read as window figures (query.ReadHAMi), not hour by
// hour, and a HAMi tenant's use is its window's (p95 of the utilisation,
// p99 of the memory) in every hour.
func hamiTenants(res *fleet.Result, byGPU map[fleet.GPUKey][]*entry) {
	if len(res.HAMi) == 0 {
		return
	}
	// By cluster and UUID: the clusters of one store may repeat pod
	// names and even UUIDs, and a tenant is charged in its own only.
	gpuOf := map[[2]string]fleet.GPUKey{}
	for _, g := range res.GPUs {
		gpuOf[[2]string{g.Cluster, g.UUID}] = g.GPUKey
	}
	window := res.Window.Duration().Hours()
	for _, h := range res.HAMi {
		k, ok := gpuOf[[2]string{h.Cluster, h.GPUUUID}]
		if !ok {
			k = fleet.GPUKey{Cluster: h.Cluster, Node: h.Node, UUID: h.GPUUUID}
		}
		seen := false
		for _, e := range byGPU[k] {
			if e.Namespace == h.Namespace && e.Pod == h.Pod && e.Container == h.Container {
				e.Mode, seen = ModeHAMi, true
			}
		}
		if seen {
			continue
		}
		share := h.HeldShare()
		e := &entry{Tenant: Tenant{Namespace: h.Namespace, Pod: h.Pod, Container: h.Container, Mode: ModeHAMi, Share: share, HeldGPUHours: share * h.Coverage * window}}
		e.Tenant.used(h.Coverage > 0, h.Utilization())
		byGPU[k] = append(byGPU[k], e)
	}
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
