package ledger

import "time"

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
	// Team is the tenant's namespace's team, where the analysis named it
	// (rollup.Teams; the JSON report has each team's charges in its teams).
	Team string `json:"-"`
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
	// Scale is what the tenants were charged over what they held: 1, or
	// less where in some hour they held more than the GPU's time then.
	Scale   float64  `json:"scale"`
	Tenants []Tenant `json:"tenants,omitempty"`
	// Allocation and Usage are the remainder on each basis.
	Allocation Remainder `json:"allocation"`
	Usage      Remainder `json:"usage"`
	// Hourly is the GPU's ledger hour by hour, of the hours its exporter
	// reported it; the figures above are their sums. Where the analysis
	// folded no hours (a source without range queries) it is one period,
	// the window. Left out of the JSON report: -o ledger-csv writes it.
	Hourly []Hour `json:"-"`
	// Absent is the GPU's time gone at the window's end, where its node
	// kept reporting without it: outside Hours and Cost (absent.go).
	Absent *Absent `json:"absent,omitempty"`
}

// Hour is one GPU's ledger over one clock hour (or the window, where the
// analysis folded no hours): its tenants' charges and its remainder add up
// to its price × Hours, the part of the hour its exporter reported it, on
// both bases.
type Hour struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Hours float64   `json:"hours"`
	Cost  float64   `json:"cost"`
	// Scale is 1, or Hours over what the tenants held in the hour where
	// that was more.
	Scale float64 `json:"scale"`
	// Charges are the tenants', in the order of GPU.Tenants.
	Charges    []Charge  `json:"charges"`
	Allocation Remainder `json:"allocation"`
	Usage      Remainder `json:"usage"`
}

// Remainder is the hour's remainder on basis b.
func (h Hour) Remainder(b Basis) Remainder {
	if b == Usage {
		return h.Usage
	}
	return h.Allocation
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

// ByHour says the ledger was balanced hour by hour: some GPU had hours
// folded by the analysis, not the window as its one period.
func (l *Ledger) ByHour() bool {
	for _, g := range l.GPUs {
		for _, h := range g.Hourly {
			if h.End.Sub(h.Start) == time.Hour {
				return true
			}
		}
	}
	return false
}
