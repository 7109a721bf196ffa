package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// ErrNoData is wrapped by FromAnalysis's error when the window holds no
// GPU.
var ErrNoData = errors.New("no GPU series in the window")

// Options say how to read a workload's character from its use.
type Options struct {
	// Workload names a pod's workload; nil infers it from the pod's name.
	Workload func(namespace, pod string) workload.Ref
	// A lane is training-like when its p95 utilization of a GPU or slice
	// it held alone, or its p95 load of a shared GPU (the findings' rule),
	// reaches TrainingMinLoad over at least TrainingMinHours.
	TrainingMinLoad, TrainingMinHours float64
	// GrowthHorizon is how far ahead memory growth is projected; zero
	// means one more window.
	GrowthHorizon time.Duration
}

// Data is what a plan is made from: a pool per GPU model, and what it
// left out.
type Data struct {
	Start, End time.Time
	Step       time.Duration
	Steps      int
	Pools      []*Pool
	Notes      []string
}

// FromAnalysis groups the allocations of an analysis into lanes by
// workload, and its GPUs into pools by model. It reads the window no
// second time: every allocation's share, utilization and memory at every
// step are the ones the analysis's passes folded (query.Sharding.Lanes,
// fleet.Usage), on the analysis's grid, so the plan and the report's
// figures are read at the same instants.
func FromAnalysis(res *fleet.Result, o Options) (*Data, error) {
	w := res.Window
	if res.Usage == nil {
		return nil, errors.New("the analysis kept no per-step use of its allocations (query.Sharding.Lanes, which needs range queries): a plan needs it")
	}
	var gpus []gpuSeen
	for _, g := range res.GPUs {
		// A GPU the GPU signal or its memory total named, as the pool's
		// count: one known only from its tenants' series is not counted.
		if g.Steps > 0 || g.MemoryTotalBytes > 0 {
			gpus = append(gpus, gpuSeen{node: g.Node, model: g.Model, memoryTotal: g.MemoryTotalBytes})
		}
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("%w: no %s GPU series in %s – %s", ErrNoData, res.Schema,
			w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339))
	}
	rows := make(map[fleet.AllocationKey]*fleet.Allocation, len(res.Allocations))
	for i := range res.Allocations {
		rows[res.Allocations[i].AllocationKey] = &res.Allocations[i]
	}
	allocs := make([]*allocation, 0, len(res.Usage.Allocations))
	for i := range res.Usage.Allocations {
		u := &res.Usage.Allocations[i]
		x := rows[u.AllocationKey]
		if x == nil {
			continue
		}
		allocs = append(allocs, allocationOf(u, x))
	}
	return build(w, res.Usage.Steps, gpus, allocs, o)
}

// gpuSeen is one GPU of the window: its node, model, and device memory
// as its exporter measured it (0 when it did not).
type gpuSeen struct {
	node, model string
	memoryTotal float64
}

// allocation is one container's hold on one GPU or slice over the window.
type allocation struct {
	namespace, pod, container string
	node, uuid, instance      string
	model                     string
	sharing                   vocab.Sharing
	profile                   string
	// claim is the ResourceClaim (namespace/name) the GPU came through;
	// empty on the device plugin's path.
	claim       string
	first, last int
	// mem, load and util are its memory, share × utilization, and the
	// utilization training-like is judged on, at steps first..last: from
	// use, where it came from an analysis, when its lane is built
	// (arrays).
	mem, load, util []float32
	use             *fleet.AllocationUsage
}

// allocationOf is an allocation of the analysis; its arrays are read from
// u when its lane is built.
func allocationOf(u *fleet.AllocationUsage, x *fleet.Allocation) *allocation {
	last := u.Shares[len(u.Shares)-1]
	a := &allocation{namespace: u.Namespace, pod: u.Pod, container: u.Container, node: u.Node, uuid: u.UUID, instance: u.GPUInstance,
		model: x.Model, sharing: x.Sharing, profile: x.MIGProfile, first: u.First, last: last.From + last.N - 1, use: u}
	if x.AllocationPath == vocab.AllocationPathDRA {
		a.claim = x.Claim.String()
	}
	return a
}

// arrays reads mem, load and util from the analysis's use; usage is only
// counted at steps where the allocation was held, since a usage series
// without its allocation has nothing to be planned into. It is read one
// allocation at a time, as its lane takes it, and the use's own arrays
// are dropped: the analysis hands its use out once (pipeline.Analysis.
// Usage), and all of it read at once beside the lanes it is copied into
// was three times its 0.8 GiB at 10,000 GPUs a week.
func (a *allocation) arrays() {
	u := a.use
	if u == nil {
		return
	}
	a.use = nil
	n := a.last - a.first + 1
	a.mem = u.Mem
	if a.mem == nil {
		a.mem = make([]float32, n)
	}
	a.load, a.util = make([]float32, n), make([]float32, n)
	shared := a.sharing == vocab.SharingTimeSlicing || a.sharing == vocab.SharingMPS
	for _, r := range u.Shares {
		for t := r.From; t < r.From+r.N; t++ {
			i := t - a.first
			var util float32
			if u.Util != nil {
				util = u.Util[i]
			}
			a.load[i] = r.Share * util
			// What training-like is judged on: how much of what it held
			// it used when it held it alone, but of the whole GPU when
			// shared, where a tenant's utilization of its replica passes
			// 1 by using what co-tenants leave idle.
			if shared {
				a.util[i] = a.load[i]
			} else {
				a.util[i] = min(util, 1)
			}
		}
	}
	u.Mem, u.Util = nil, nil
}

// build groups GPUs into pools by model and the pools' allocations into
// lanes.
func build(w fleet.Window, steps int, gpus []gpuSeen, allocs []*allocation, o Options) (*Data, error) {
	if o.Workload == nil {
		o.Workload = inventory.InferWorkload
	}
	if o.GrowthHorizon <= 0 {
		o.GrowthHorizon = w.Duration()
	}
	d := &Data{Start: w.Start, End: w.End, Step: w.Step, Steps: steps}
	if n := countDRA(allocs); n > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d allocations got their GPU through DRA ResourceClaims: their layout is requested in the claims "+
			"(device class, MIG profile, sharing), which the device plugin and MIG manager node labels of this plan do not change; "+
			"the plan never puts them on a GPU with the device plugin's tenants, since one GPU is handed out by one or the other", n))
	}
	pools := map[string]*Pool{}
	nodes := map[string]map[string]int{}
	for _, g := range gpus {
		p := pools[g.model]
		if p == nil {
			p = &Pool{Product: g.model}
			pools[g.model] = p
			nodes[g.model] = map[string]int{}
		}
		p.GPUsToday++
		if nodes[g.model][g.node] == 0 {
			p.Nodes++
		}
		nodes[g.model][g.node]++
		// The largest node of the pool is its shape: a node that reported
		// fewer GPUs lost some to the bus or to the window's edge.
		p.GPUsPerNode = max(p.GPUsPerNode, nodes[g.model][g.node])
		if v := g.memoryTotal; v > 0 && (p.CapacityBytes == 0 || v < p.CapacityBytes) {
			p.CapacityBytes = v
		}
	}
	byPool := map[string][]*allocation{}
	for _, a := range allocs {
		byPool[a.model] = append(byPool[a.model], a)
		if pools[a.model] == nil {
			pools[a.model] = &Pool{Product: a.model}
		}
	}
	for _, product := range slices.Sorted(maps.Keys(pools)) {
		p := pools[product]
		m, ok := lookupModel(product)
		if typ, vgpu := vgpuType(product); vgpu {
			// A VM's slice of a board: its layout (MIG, or the number of
			// VMs a board holds) is the hypervisor's, not the cluster's.
			d.Notes = append(d.Notes, fmt.Sprintf("GPU model %q is a vGPU (type %s): its %d GPUs are not planned, since MIG layouts and the vGPUs a board holds are set up on the hypervisor host, not in the cluster",
				product, typ, p.GPUsToday))
			continue
		}
		if !ok {
			d.Notes = append(d.Notes, fmt.Sprintf("GPU model %q is not in the catalog: its %d GPUs are not planned", product, p.GPUsToday))
			continue
		}
		p.Model = m
		p.nodeGPUs = nodes[product]
		if p.CapacityBytes == 0 {
			p.CapacityBytes = m.MemoryBytes
		}
		p.Lanes = lanesOf(byPool[product], o, w.Step, steps)
		for _, l := range p.Lanes {
			growth(l, p.CapacityBytes, int(o.GrowthHorizon/w.Step))
			if l.GrowthBytes > 0 && peakOf(l.Mem)+l.GrowthBytes >= p.CapacityBytes {
				d.Notes = append(d.Notes, fmt.Sprintf("%s: its memory grows past a whole %s within %s; planned on a whole GPU, where it will still run out", l.Name(), m.Key, o.GrowthHorizon))
			}
		}
		d.Pools = append(d.Pools, p)
	}
	return d, nil
}

func countDRA(allocs []*allocation) int {
	n := 0
	for _, a := range allocs {
		if a.claim != "" {
			n++
		}
	}
	return n
}

// lanesOf groups a pool's allocations by workload and chains each
// workload's allocations into lanes: an allocation takes the first lane
// that is free since before it started (interval colouring, so a workload
// gets as many lanes as it ever ran pods at once).
func lanesOf(allocs []*allocation, o Options, step time.Duration, steps int) []*Lane {
	byW := map[workload.Ref][]*allocation{}
	for _, a := range allocs {
		ref := o.Workload(a.namespace, a.pod)
		w := workload.Ref{Kind: cmp.Or(ref.Kind, "Pod"), Namespace: a.namespace, Name: cmp.Or(ref.Name, a.pod), Container: a.container}
		byW[w] = append(byW[w], a)
	}
	var out []*Lane
	for _, w := range slices.SortedFunc(maps.Keys(byW), func(a, b workload.Ref) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Container, b.Container))
	}) {
		as := byW[w]
		slices.SortFunc(as, func(a, b *allocation) int { return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.pod, b.pod)) })
		var lanes []*Lane
		var ends []int
		// held is each lane's utilization at the steps it ran, for
		// training-like: its allocations' spans do not overlap.
		var held [][]float64
		for _, a := range as {
			k := slices.IndexFunc(ends, func(e int) bool { return e < a.first })
			if k < 0 {
				k = len(lanes)
				lanes = append(lanes, &Lane{Workload: w, Replica: k, Mem: make([]float32, steps), Load: make([]float32, steps)})
				ends = append(ends, -1)
				held = append(held, nil)
			}
			l := lanes[k]
			ends[k] = a.last
			if !slices.Contains(l.Pods, a.pod) {
				l.Pods = append(l.Pods, a.pod)
			}
			l.From = describeFrom(a)
			l.Held = Holding{Node: a.node, UUID: a.uuid, Instance: a.instance, Sharing: a.sharing, Profile: a.profile}
			// The lane's latest pod decides its path, as it does From.
			l.AllocationPath = vocab.AllocationPathDevicePlugin
			if a.claim != "" {
				l.AllocationPath = vocab.AllocationPathDRA
				if !slices.Contains(l.Claims, a.claim) {
					l.Claims = append(l.Claims, a.claim)
				}
			}
			a.arrays()
			copy(l.Mem[a.first:a.last+1], a.mem)
			copy(l.Load[a.first:a.last+1], a.load)
			// Held but reading 0 memory and 0 load: still a step the lane
			// ran, which statsOf must see; a float32 denormal keeps it.
			for t := a.first; t <= a.last; t++ {
				if l.Mem[t] == 0 && l.Load[t] == 0 {
					l.Mem[t] = math.SmallestNonzeroFloat32
				}
				if l.running(t) {
					if held[k] == nil {
						held[k] = make([]float64, 0, a.last-a.first+1)
					}
					held[k] = append(held[k], float64(a.util[t-a.first]))
				}
			}
			// Copied: the allocation's own arrays are not needed again.
			a.mem, a.load, a.util = nil, nil, nil
		}
		for k, l := range lanes {
			l.Training = trainingLike(held[k], o, step)
		}
		if len(lanes) == 1 {
			lanes[0].Replica = 0
		} else {
			for k, l := range lanes {
				l.Replica = k + 1
			}
		}
		out = append(out, lanes...)
	}
	return out
}

func describeFrom(a *allocation) string {
	switch a.sharing {
	case vocab.SharingMIG:
		return "mig " + a.profile
	case vocab.SharingTimeSlicing, vocab.SharingMPS:
		return string(a.sharing)
	}
	return "whole"
}

// trainingLike: p95 of what the lane used (of its GPU or slice held alone,
// of the whole GPU when shared) at the steps it ran, held, at or above the
// threshold, held long enough to be more than a burst. It reorders held.
func trainingLike(held []float64, o Options, step time.Duration) bool {
	if len(held) == 0 || float64(len(held))*step.Hours() < o.TrainingMinHours {
		return false
	}
	return o.TrainingMinLoad > 0 && quantile(held, 0.95) >= o.TrainingMinLoad
}
