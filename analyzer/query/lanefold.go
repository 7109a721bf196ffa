package query

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/scan"
)

// laneFold folds each allocation's use at every step (Usage) out of the
// allocation, utilization, memory and device memory passes, which read
// those values anyway: the consolidation plan no longer reads the window a
// second time through six unsharded queries, which failed at 5,000 GPUs
// (issue 43). The values are the ones plan.Fetch read from the engine
// (TestLaneFoldMatchesEngine in analyzer/plan holds them to that read): each allocation's share,
// utilization and memory at the steps it was held at, the device memory
// shared out over a GPU's tenants at each step. A shard's allocations are
// folded when its own passes run, so what is kept is float32 per held step
// and allocation, not the shard's matrices. Its steps are a view of the
// allocations' share runs (shareFold), in float32.
type laneFold struct {
	allocs map[fleet.AllocationKey]*fleet.AllocationUsage
	// byGPU are the allocations of each GPU, until the device memory pass
	// has shared that GPU's memory out.
	byGPU map[fleet.GPUKey][]*fleet.AllocationUsage
	steps int
}

// newLaneFold is a fold for w's steps; nil for none.
func newLaneFold(w fleet.Window, on bool) *laneFold {
	if !on {
		return nil
	}
	return &laneFold{allocs: map[fleet.AllocationKey]*fleet.AllocationUsage{}, byGPU: map[fleet.GPUKey][]*fleet.AllocationUsage{}, steps: w.ExpectedSteps()}
}

// keep starts an allocation's use from its share runs (shareFold.keep):
// the steps it was held at. Runs whose shares differ only past a float32's
// precision are one lane run.
func (f *laneFold) keep(k fleet.AllocationKey, shares []shareRun) {
	if f == nil {
		return
	}
	runs := make([]fleet.ShareRun, 0, len(shares))
	for _, r := range shares {
		s := float32(r.v)
		if n := len(runs); n > 0 && runs[n-1].Share == s && runs[n-1].From+runs[n-1].N == r.from {
			runs[n-1].N += r.n
			continue
		}
		runs = append(runs, fleet.ShareRun{From: r.from, N: r.n, Share: s})
	}
	if len(runs) == 0 {
		return
	}
	u := &fleet.AllocationUsage{AllocationKey: k, First: runs[0].From, Shares: runs}
	f.allocs[k] = u
	g := fleet.GPUKey{Node: k.Node, UUID: k.UUID}
	f.byGPU[g] = append(f.byGPU[g], u)
}

// span is one past the last step u was held at, as an index of its arrays.
func usageSpan(u *fleet.AllocationUsage) int {
	r := u.Shares[len(u.Shares)-1]
	return r.From + r.N - u.First
}

// held is v at the steps u was held at, from u.First, at least 0; nil
// where v has no value at any of them.
func usageHeld(u *fleet.AllocationUsage, v []float64) []float32 {
	var out []float32
	for _, r := range u.Shares {
		for t := r.From; t < r.From+r.N && t < len(v); t++ {
			x := v[t]
			if scan.IsAbsent(x) || math.IsNaN(x) {
				continue
			}
			if out == nil {
				out = make([]float32, usageSpan(u))
			}
			out[t-u.First] = float32(max(0, x))
		}
	}
	return out
}

// util keeps an allocation's utilization (the utilization pass's max by
// its key) where it was held.
func (f *laneFold) util(k fleet.AllocationKey, v []float64) {
	if f == nil {
		return
	}
	if u := f.allocs[k]; u != nil {
		u.Util = usageHeld(u, v)
	}
}

// mem keeps an allocation's memory (the memory pass's max by its key)
// where it was held.
func (f *laneFold) mem(k fleet.AllocationKey, v []float64) {
	if f == nil {
		return
	}
	if u := f.allocs[k]; u != nil {
		u.Mem = usageHeld(u, v)
	}
}

// device shares a GPU's device memory in use at each step (the device
// memory pass's max by the GPU's key) out over its tenants, so that a plan
// never depends on how well memory was attributed: memory no tenant was
// charged with (contexts, processes outside any pod's cgroup) goes to the
// tenants by share, and tenants charged with more than the device held are
// scaled down to it in proportion. mig says an allocation holds a MIG
// slice, whose memory is its own (the device's figure sums the slices).
// Where the device reported nothing, attribution stands.
func (f *laneFold) device(g fleet.GPUKey, d []float64, mig func(fleet.AllocationKey) bool) {
	if f == nil {
		return
	}
	var as []*fleet.AllocationUsage
	for _, u := range f.byGPU[g] {
		if !mig(u.AllocationKey) {
			as = append(as, u)
		}
	}
	delete(f.byGPU, g)
	if len(as) == 0 {
		return
	}
	cur := make([]int, len(as)) // each tenant's run at step t
	shares := make([]float32, len(as))
	for t, x := range d {
		if scan.IsAbsent(x) || math.IsNaN(x) {
			continue
		}
		dev := float64(float32(x))
		if dev < 0 {
			continue
		}
		var mem, share float64
		for i, u := range as {
			shares[i] = usageShareAt(u, t, &cur[i])
			if shares[i] != 0 {
				mem, share = mem+float64(usageMemAt(u, t)), share+float64(shares[i])
			}
		}
		if share == 0 {
			continue
		}
		for i, u := range as {
			if shares[i] == 0 {
				continue
			}
			if u.Mem == nil {
				u.Mem = make([]float32, usageSpan(u))
			}
			m := &u.Mem[t-u.First]
			if mem > dev && mem > 0 {
				*m = float32(float64(*m) * dev / mem)
			} else {
				*m += float32((dev - mem) * float64(shares[i]) / share)
			}
		}
	}
}

// shareAt is u's share at step t, 0 where it was not held; *run is the
// run to look from, for steps asked in order.
func usageShareAt(u *fleet.AllocationUsage, t int, run *int) float32 {
	for *run < len(u.Shares) && u.Shares[*run].From+u.Shares[*run].N <= t {
		*run++
	}
	if *run < len(u.Shares) && u.Shares[*run].From <= t {
		return u.Shares[*run].Share
	}
	return 0
}

func usageMemAt(u *fleet.AllocationUsage, t int) float32 {
	if u.Mem == nil {
		return 0
	}
	return u.Mem[t-u.First]
}

// result is the use folded, in the order of Result.Allocations; nil
// without a fold.
func (f *laneFold) result() *fleet.Usage {
	if f == nil {
		return nil
	}
	out := &fleet.Usage{Steps: f.steps, Allocations: make([]fleet.AllocationUsage, 0, len(f.allocs))}
	for _, u := range f.allocs {
		out.Allocations = append(out.Allocations, *u)
	}
	clear(f.allocs)
	clear(f.byGPU)
	slices.SortFunc(out.Allocations, func(x, y fleet.AllocationUsage) int { return compareAllocationKeys(x.AllocationKey, y.AllocationKey) })
	return out
}

// compareAllocationKeys is Result.Allocations' order.
func compareAllocationKeys(x, y fleet.AllocationKey) int {
	return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Pod, y.Pod), cmp.Compare(x.Container, y.Container),
		cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID), cmp.Compare(x.GPUInstance, y.GPUInstance))
}

// holdsMIG says the allocation's sharing mode, as settleAllocModes will
// settle it from the labellings the allocation pass saw, is a MIG slice.
func (a *analysis) holdsMIG(k fleet.AllocationKey) bool {
	m := bestMode(a.allocModes[k])
	return m != nil && m.sharing == vocab.SharingMIG
}
