package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/signals"
)

// ErrNoData is wrapped by Fetch's error when the window holds no GPU.
var ErrNoData = errors.New("no GPU series in the window")

// FetchOptions say which window to read and how to read a workload's
// character from it.
type FetchOptions struct {
	// Window is read on its grid, the analysis's (query.Window.Grid), so
	// that the plan and the report's figures are read at the same instants.
	Window fleet.Window
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

// Data is what Fetch read: a pool per GPU model, and what it left out.
type Data struct {
	Start, End time.Time
	Step       time.Duration
	Steps      int
	Pools      []*Pool
	Notes      []string
	// Queries is how many queries it took: 6, whatever the fleet's size.
	Queries int
}

// Fetch reads every allocation's share, utilization and memory, and every
// GPU's device memory in use, at every step of the window with four range
// queries, the GPUs and the allocations' ResourceClaims with two instant
// queries, and groups the allocations into lanes by workload.
func Fetch(ctx context.Context, src source.Source, sch signals.Schema, o FetchOptions) (*Data, error) {
	rq, ok := src.(source.RangeQuerier)
	if !ok {
		return nil, fmt.Errorf("%s cannot run range queries, which a plan needs", src.Describe())
	}
	w, err := o.Window.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("plan window: %w", err)
	}
	o.Window = w
	first, steps := w.Grid()
	if o.Workload == nil {
		o.Workload = inventory.InferWorkload
	}
	if o.GrowthHorizon <= 0 {
		o.GrowthHorizon = w.Duration()
	}
	d := &Data{Start: w.Start, End: w.End, Step: w.Step, Steps: steps}
	at := func(ts model.Time) int { return int(ts.Time().Sub(first) / w.Step) }
	rng := w.SubqueryRange() + ":" + signals.Duration(w.Step)
	gpuQ := "max by " + signals.By(signals.GPULabels...) + " (max_over_time((" + sch.GPUMemoryTotal() + ")[" + rng + "]))" +
		" or max by " + signals.By(signals.GPULabels...) + " (max_over_time((" + sch.GPU() + ")[" + rng + "])) * 0"
	gpus, err := src.Query(ctx, gpuQ, w.End)
	d.Queries++
	if err != nil {
		return nil, fmt.Errorf("GPUs: %w", err)
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s GPU series in %s – %s", ErrNoData, src.Describe(), sch.Name(),
			w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339))
	}

	matrices := make([]model.Matrix, 4)
	for i, q := range []string{sch.Allocation(), sch.Utilization(), sch.MemoryUsed(), sch.GPUMemoryUsed()} {
		if matrices[i], err = rq.QueryRange(ctx, q, first, w.End, w.Step); err != nil {
			return nil, err
		}
		d.Queries++
	}
	allocs := readAllocations(matrices, steps, at)
	claimLabels := append(slices.Clone(signals.AllocationKeyLabels), signals.LabelClaimNamespace, signals.LabelClaim)
	claims, err := src.Query(ctx, "group by "+signals.By(claimLabels...)+" (last_over_time(("+sch.Claims()+")["+rng+"]))", w.End)
	d.Queries++
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	if n := readClaims(allocs, claims); n > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d allocations got their GPU through DRA ResourceClaims: their layout is requested in the claims "+
			"(device class, MIG profile, sharing), which the device plugin and MIG manager node labels of this plan do not change; "+
			"the plan never puts them on a GPU with the device plugin's tenants, since one GPU is handed out by one or the other", n))
	}

	pools := map[string]*Pool{}
	nodes := map[string]map[string]int{}
	for _, g := range gpus {
		product := string(g.Metric[signals.LabelModel])
		p := pools[product]
		if p == nil {
			p = &Pool{Product: product}
			pools[product] = p
			nodes[product] = map[string]int{}
		}
		p.GPUsToday++
		n := string(g.Metric[signals.LabelNode])
		if nodes[product][n] == 0 {
			p.Nodes++
		}
		nodes[product][n]++
		// The largest node of the pool is its shape: a node that reported
		// fewer GPUs lost some to the bus or to the window's edge.
		p.GPUsPerNode = max(p.GPUsPerNode, nodes[product][n])
		if v := float64(g.Value); v > 0 && (p.CapacityBytes == 0 || v < p.CapacityBytes) {
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
		p.Lanes = lanesOf(byPool[product], o, steps)
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

// allocation is one container's hold on one GPU or slice over the window.
type allocation struct {
	namespace, pod, container string
	node, uuid, instance      string
	model, sharing, profile   string
	// claim is the ResourceClaim (namespace/name) the GPU came through;
	// empty on the device plugin's path.
	claim           string
	key             string // allocKey
	first, last     int
	mem, load, util []float32
	held            []bool
}

func allocKey(m model.Metric) string {
	var b strings.Builder
	for _, l := range signals.AllocationKeyLabels {
		b.WriteString(string(m[model.LabelName(l)]))
		b.WriteByte(0)
	}
	return b.String()
}

// readAllocations joins the three matrices by allocation key. Usage is
// only counted at steps where the allocation was held: a usage series
// without its allocation has nothing to be planned into.
func readAllocations(ms []model.Matrix, steps int, at func(model.Time) int) []*allocation {
	byKey := map[string]*allocation{}
	var out []*allocation
	for _, s := range ms[0] {
		m := s.Metric
		a := &allocation{namespace: string(m[signals.LabelNamespace]), pod: string(m[signals.LabelPod]), container: string(m[signals.LabelContainer]),
			node: string(m[signals.LabelNode]), uuid: string(m[signals.LabelUUID]), instance: string(m[signals.LabelGPUInstance]),
			model: string(m[signals.LabelModel]), sharing: string(m[signals.LabelSharing]), profile: string(m[signals.LabelMIGProfile]),
			first: steps, last: -1, mem: make([]float32, steps), load: make([]float32, steps), util: make([]float32, steps),
			held: make([]bool, steps)}
		for _, v := range s.Values {
			if t := at(v.Timestamp); t >= 0 && t < steps {
				// The share is kept in load until utilization multiplies it.
				a.load[t] = float32(v.Value)
				a.held[t] = true
				a.first, a.last = min(a.first, t), max(a.last, t)
			}
		}
		if a.last < 0 {
			continue
		}
		if prev := byKey[allocKey(m)]; prev != nil {
			// The same allocation under another sharing label (a device
			// plugin change): one allocation.
			for t := range a.load {
				if a.held[t] {
					prev.load[t], prev.held[t] = a.load[t], true
				}
			}
			prev.first, prev.last = min(prev.first, a.first), max(prev.last, a.last)
			continue
		}
		a.key = allocKey(m)
		byKey[a.key] = a
		out = append(out, a)
	}
	for _, s := range ms[1] {
		if a := byKey[allocKey(s.Metric)]; a != nil {
			for _, v := range s.Values {
				if t := at(v.Timestamp); t >= 0 && t < steps && a.held[t] {
					a.util[t] = float32(max(0, float64(v.Value)))
				}
			}
		}
	}
	for _, s := range ms[2] {
		if a := byKey[allocKey(s.Metric)]; a != nil {
			for _, v := range s.Values {
				if t := at(v.Timestamp); t >= 0 && t < steps && a.held[t] {
					a.mem[t] = float32(max(0, float64(v.Value)))
				}
			}
		}
	}
	deviceMemory(out, ms[3], steps, at)
	for _, a := range out {
		shared := a.sharing == signals.SharingTimeSlicing || a.sharing == signals.SharingMPS
		for t := range a.load {
			a.load[t] *= a.util[t]
			// What training-like is judged on: how much of what it held
			// it used when it held it alone, but of the whole GPU when
			// shared, where a tenant's utilization of its replica passes
			// 1 by using what co-tenants leave idle.
			if shared {
				a.util[t] = a.load[t]
			} else {
				a.util[t] = min(a.util[t], 1)
			}
		}
	}
	return out
}

// deviceMemory makes the tenants' memory add up to what each GPU's
// device reported at every step, so that a plan never depends on how well
// memory was attributed: memory no tenant was charged with (contexts,
// processes outside any pod's cgroup) is shared out by allocation share,
// and tenants charged with more than the device held (dcgm-exporter
// copies the device's figure to every tenant of a time-sliced GPU) are
// scaled down to it in proportion. MIG GPUs are left alone: a slice's
// memory is its own, and the device's figure sums the slices. Where the
// device reported nothing, attribution stands.
func deviceMemory(allocs []*allocation, used model.Matrix, steps int, at func(model.Time) int) {
	type gpuKey struct{ node, uuid string }
	device := map[gpuKey][]float32{}
	for _, s := range used {
		v := make([]float32, steps)
		for i := range v {
			v[i] = -1
		}
		for _, p := range s.Values {
			if t := at(p.Timestamp); t >= 0 && t < steps {
				v[t] = float32(p.Value)
			}
		}
		device[gpuKey{string(s.Metric[signals.LabelNode]), string(s.Metric[signals.LabelUUID])}] = v
	}
	byGPU := map[gpuKey][]*allocation{}
	for _, a := range allocs {
		if a.sharing != signals.SharingMIG {
			k := gpuKey{a.node, a.uuid}
			byGPU[k] = append(byGPU[k], a)
		}
	}
	for k, as := range byGPU {
		d := device[k]
		if d == nil {
			continue
		}
		for t := 0; t < steps; t++ {
			if d[t] < 0 {
				continue
			}
			// a.load holds the share until utilization multiplies it.
			var mem, share float64
			for _, a := range as {
				if a.held[t] {
					mem, share = mem+float64(a.mem[t]), share+float64(a.load[t])
				}
			}
			if share == 0 {
				continue
			}
			dev := float64(d[t])
			for _, a := range as {
				if !a.held[t] {
					continue
				}
				if mem > dev && mem > 0 {
					a.mem[t] = float32(float64(a.mem[t]) * dev / mem)
				} else {
					a.mem[t] += float32((dev - mem) * float64(a.load[t]) / share)
				}
			}
		}
	}
}

// lanesOf groups a pool's allocations by workload and chains each
// workload's allocations into lanes: an allocation takes the first lane
// that is free since before it started (interval colouring, so a workload
// gets as many lanes as it ever ran pods at once).
func lanesOf(allocs []*allocation, o FetchOptions, steps int) []*Lane {
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
		var utils [][]float32
		for _, a := range as {
			k := slices.IndexFunc(ends, func(e int) bool { return e < a.first })
			if k < 0 {
				k = len(lanes)
				lanes = append(lanes, &Lane{Workload: w, Replica: k, Mem: make([]float32, steps), Load: make([]float32, steps)})
				ends = append(ends, -1)
				utils = append(utils, make([]float32, steps))
			}
			l := lanes[k]
			ends[k] = a.last
			if !slices.Contains(l.Pods, a.pod) {
				l.Pods = append(l.Pods, a.pod)
			}
			l.From = describeFrom(a)
			l.Held = Holding{Node: a.node, UUID: a.uuid, Instance: a.instance, Sharing: a.sharing, Profile: a.profile}
			// The lane's latest pod decides its path, as it does From.
			l.AllocationPath = signals.AllocationPathDevicePlugin
			if a.claim != "" {
				l.AllocationPath = signals.AllocationPathDRA
				if !slices.Contains(l.Claims, a.claim) {
					l.Claims = append(l.Claims, a.claim)
				}
			}
			for t := a.first; t <= a.last; t++ {
				l.Mem[t], l.Load[t], utils[k][t] = a.mem[t], a.load[t], a.util[t]
			}
			// Held but reading 0 memory and 0 load: still a step the lane
			// ran, which statsOf must see; a float32 denormal keeps it.
			for t := a.first; t <= a.last; t++ {
				if l.Mem[t] == 0 && l.Load[t] == 0 {
					l.Mem[t] = math.SmallestNonzeroFloat32
				}
			}
		}
		for k, l := range lanes {
			l.Training = trainingLike(utils[k], l, o)
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

// readClaims gives each allocation the ResourceClaim the claims signal
// names for it, and counts them. The signal is read over the whole
// window: a pod's claims are fixed for its life.
func readClaims(allocs []*allocation, claims model.Vector) int {
	byKey := map[string]string{}
	for _, s := range claims {
		if c := s.Metric[signals.LabelClaim]; c != "" {
			byKey[allocKey(s.Metric)] = string(s.Metric[signals.LabelClaimNamespace]) + "/" + string(c)
		}
	}
	n := 0
	for _, a := range allocs {
		if a.claim = byKey[a.key]; a.claim != "" {
			n++
		}
	}
	return n
}

func describeFrom(a *allocation) string {
	switch a.sharing {
	case signals.SharingMIG:
		return "mig " + a.profile
	case signals.SharingTimeSlicing, signals.SharingMPS:
		return a.sharing
	}
	return "whole"
}

// trainingLike: p95 of what the lane used (of its GPU or slice held alone,
// of the whole GPU when shared) at or above the threshold, held long
// enough to be more than a burst.
func trainingLike(util []float32, l *Lane, o FetchOptions) bool {
	var held []float64
	for t := range util {
		if l.Mem[t] > 0 || l.Load[t] > 0 {
			held = append(held, float64(util[t]))
		}
	}
	if len(held) == 0 || float64(len(held))*o.Window.Step.Hours() < o.TrainingMinHours {
		return false
	}
	return o.TrainingMinLoad > 0 && quantile(held, 0.95) >= o.TrainingMinLoad
}

// growth sets l.GrowthBytes from the trend of its last run: the steps
// since it last started or last dropped to under half its memory (a leak
// that died of OOM and restarted). A least-squares slope projected over
// horizon steps counts when it adds at least 1 GiB or a tenth of the
// peak; the projection stops at a whole GPU's memory.
func growth(l *Lane, capacity float64, horizon int) {
	end := len(l.Mem) - 1
	for end >= 0 && l.Mem[end] == 0 {
		end--
	}
	if end < 0 {
		return
	}
	start := end
	for start > 0 && l.Mem[start-1] > 0 && float64(l.Mem[start]) >= 0.5*float64(l.Mem[start-1]) {
		start--
	}
	n := end - start + 1
	if n < 12 {
		return
	}
	var sx, sy, sxx, sxy, syy float64
	for t := start; t <= end; t++ {
		x, y := float64(t-start), float64(l.Mem[t])
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
	}
	fn := float64(n)
	vx, vy, cxy := sxx-sx*sx/fn, syy-sy*sy/fn, sxy-sx*sy/fn
	if vx <= 0 || vy <= 0 || cxy <= 0 || cxy*cxy/(vx*vy) < 0.8 {
		return
	}
	slope := cxy / vx
	peak := peakOf(l.Mem)
	projected := math.Min(float64(l.Mem[end])+slope*float64(horizon), capacity)
	if add := projected - peak; add >= math.Max(1<<30, 0.1*peak) {
		l.GrowthBytes = add
	}
}

func peakOf(v []float32) float64 {
	if len(v) == 0 {
		return 0
	}
	return float64(slices.Max(v))
}
