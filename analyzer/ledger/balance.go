package ledger

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// balance charges g's tenants at price hour by hour: in each hour, what
// they held and used, scaled down together where they held more than the
// GPU's time in that hour, and the rest of its time as the remainder. The
// GPU's figures are the sums of its hours. Where the analysis folded no
// hours for g, the window is its one period.
func balance(w fleet.Window, g fleet.GPU, es []*entry, price float64, priced bool) GPU {
	out := GPU{Cluster: g.Cluster, Node: g.Node, UUID: g.UUID, Model: g.Model, PriceKnown: priced, Scale: 1}
	if priced {
		out.PricePerHour = price
	}
	money := func(h float64) Amount { return Amount{GPUHours: h, Cost: h * out.PricePerHour} }
	slices.SortFunc(es, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container), cmp.Compare(a.GPUInstance, b.GPUInstance))
	})
	modeHours := map[string]float64{}
	for _, e := range es {
		modeHours[e.Mode] += e.HeldGPUHours
	}
	if len(es) > 0 {
		out.Mode = slices.MaxFunc(slices.Sorted(maps.Keys(modeHours)), func(a, b string) int { return cmp.Compare(modeHours[a], modeHours[b]) })
	}

	ps := periods(w, g)
	var reported float64
	for _, p := range ps {
		reported += p.Hours
	}
	hourly := g.ReportedByHour != nil
	// at is what e held and used in period i, before scaling: its hours
	// where the analysis folded them, else its window figures, spread over
	// the hours its GPU reported in proportion to each hour's part.
	at := func(e *entry, i int) (held, used float64) {
		switch {
		case !hourly:
			return e.HeldGPUHours, e.UsedGPUHours
		case e.held != nil:
			if x := ps[i].index; x < len(e.held) {
				return e.held[x], e.used[x]
			}
			return 0, 0
		case reported > 0:
			f := ps[i].Hours / reported
			return e.HeldGPUHours * f, e.UsedGPUHours * f
		}
		return 0, 0
	}

	charges := make([]Charge, len(es))
	var heldAll, chargedAll float64
	for i, p := range ps {
		hr := Hour{Start: p.Start, End: p.End, Hours: p.Hours, Cost: p.Hours * out.PricePerHour, Scale: 1, Charges: make([]Charge, len(es))}
		var held float64
		for _, e := range es {
			h, _ := at(e, i)
			held += h
		}
		if held > p.Hours {
			hr.Scale = p.Hours / held
		}
		var idle, charged float64
		for j, e := range es {
			h, u := at(e, i)
			h, u = h*hr.Scale, u*hr.Scale
			hr.Charges[j] = Charge{Allocation: money(h), Usage: money(u)}
			charges[j].Allocation.add(hr.Charges[j].Allocation)
			charges[j].Usage.add(hr.Charges[j].Usage)
			idle += h - u
			charged += h
		}
		// What is left is computed, not summed from its parts, so that each
		// hour balances to the rounding of one subtraction; the rounding of
		// shares that fill the hour (3 × 1/3) is none.
		free := max(0, p.Hours-charged)
		if free <= 1e-12*p.Hours {
			free = 0
		}
		hr.Allocation.Unallocated = money(free)
		hr.Usage.Unallocated = money(free)
		hr.Usage.Idle = money(idle)
		out.Hours += p.Hours
		out.Allocation.Unallocated.add(hr.Allocation.Unallocated)
		out.Usage.Unallocated.add(hr.Usage.Unallocated)
		out.Usage.Idle.add(hr.Usage.Idle)
		heldAll += held
		chargedAll += charged
		out.Hourly = append(out.Hourly, hr)
	}
	out.Cost = out.Hours * out.PricePerHour
	if heldAll > 0 && chargedAll < heldAll {
		out.Scale = chargedAll / heldAll
	}
	for j, e := range es {
		t := e.Tenant
		t.Charge = charges[j]
		out.Tenants = append(out.Tenants, t)
	}
	return out
}

// period is one of a GPU's hours (index of the window's HourGrid) that
// its exporter reported it in, or the window.
type period struct {
	Start, End time.Time
	Hours      float64
	index      int
}

// periods are g's: each hour of w it reported in, where the analysis
// folded its hours; else the window, whatever it reported.
func periods(w fleet.Window, g fleet.GPU) []period {
	if g.ReportedByHour == nil {
		return []period{{Start: w.Start, End: w.End, Hours: max(0, g.ReportedHours)}}
	}
	h0, _ := w.HourGrid()
	var ps []period
	for i, h := range g.ReportedByHour {
		if h > 0 {
			start := h0.Add(time.Duration(i) * time.Hour)
			ps = append(ps, period{Start: start, End: start.Add(time.Hour), Hours: h, index: i})
		}
	}
	return ps
}
