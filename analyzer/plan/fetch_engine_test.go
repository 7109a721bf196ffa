package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// fetchEngine is how the plan read its data until issue 43, kept to hold
// FromAnalysis to it (TestLaneFoldMatchesEngine): the GPUs and the
// allocations' claims with two instant queries, and every allocation's
// share, utilization and memory and every GPU's device memory in use at
// every step of the window with four range queries, unsharded, through
// the store's engine, a second read of the window beside the analysis's.
func fetchEngine(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, o Options) (*Data, error) {
	rq, ok := src.(source.RangeQuerier)
	if !ok {
		return nil, fmt.Errorf("%s cannot run range queries, which a plan needs", src.Describe())
	}
	w, err := w.WithDefaults()
	if err != nil {
		return nil, err
	}
	first, steps := w.Grid()
	at := func(ts model.Time) int { return int(ts.Time().Sub(first) / w.Step) }
	rng := w.SubqueryRange() + ":" + signals.Duration(w.Step)
	gpuQ := "max by " + signals.By(signals.GPULabels...) + " (max_over_time((" + sch.GPUMemoryTotal() + ")[" + rng + "]))" +
		" or max by " + signals.By(signals.GPULabels...) + " (max_over_time((" + sch.GPU() + ")[" + rng + "])) * 0"
	vec, err := src.Query(ctx, gpuQ, w.End)
	if err != nil {
		return nil, fmt.Errorf("GPUs: %w", err)
	}
	if len(vec) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s GPU series", ErrNoData, src.Describe(), sch.Name())
	}
	var gpus []gpuSeen
	for _, g := range vec {
		gpus = append(gpus, gpuSeen{node: string(g.Metric[signals.LabelNode]), model: string(g.Metric[signals.LabelModel]), memoryTotal: float64(g.Value)})
	}
	matrices := make([]model.Matrix, 4)
	for i, q := range []string{sch.Allocation(), sch.Utilization(), sch.MemoryUsed(), sch.GPUMemoryUsed()} {
		if matrices[i], err = rq.QueryRange(ctx, q, first, w.End, w.Step); err != nil {
			return nil, err
		}
	}
	allocs := engineAllocations(matrices, steps, at)
	claimLabels := append(slices.Clone(signals.AllocationKeyLabels), signals.LabelClaimNamespace, signals.LabelClaim)
	claims, err := src.Query(ctx, "group by "+signals.By(claimLabels...)+" (last_over_time(("+sch.Claims()+")["+rng+"]))", w.End)
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	engineClaims(allocs, claims)
	out := make([]*allocation, 0, len(allocs))
	for _, a := range allocs {
		// The arrays of the steps it was held in, as FromAnalysis's.
		a.mem, a.load, a.util = a.mem[a.first:a.last+1], a.load[a.first:a.last+1], a.util[a.first:a.last+1]
		out = append(out, &a.allocation)
	}
	return build(w, steps, gpus, out, o)
}

// engineAllocation is an allocation as the engine's matrices gave it:
// arrays over the whole window, and the steps it was held at.
type engineAllocation struct {
	allocation
	key  string
	held []bool
}

func allocKey(m model.Metric) string {
	var b strings.Builder
	for _, l := range signals.AllocationKeyLabels {
		b.WriteString(string(m[model.LabelName(l)]))
		b.WriteByte(0)
	}
	return b.String()
}

// engineAllocations joins the matrices by allocation key. Usage is only
// counted at steps where the allocation was held.
func engineAllocations(ms []model.Matrix, steps int, at func(model.Time) int) []*engineAllocation {
	byKey := map[string]*engineAllocation{}
	var out []*engineAllocation
	for _, s := range ms[0] {
		m := s.Metric
		a := &engineAllocation{allocation: allocation{namespace: string(m[signals.LabelNamespace]), pod: string(m[signals.LabelPod]), container: string(m[signals.LabelContainer]),
			node: string(m[signals.LabelNode]), uuid: string(m[signals.LabelUUID]), instance: string(m[signals.LabelGPUInstance]),
			model: string(m[signals.LabelModel]), sharing: vocab.Sharing(m[signals.LabelSharing]), profile: string(m[signals.LabelMIGProfile]),
			first: steps, last: -1, mem: make([]float32, steps), load: make([]float32, steps), util: make([]float32, steps)},
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
	for i, dst := range []func(*engineAllocation) []float32{
		func(a *engineAllocation) []float32 { return a.util },
		func(a *engineAllocation) []float32 { return a.mem },
	} {
		for _, s := range ms[1+i] {
			if a := byKey[allocKey(s.Metric)]; a != nil {
				for _, v := range s.Values {
					if t := at(v.Timestamp); t >= 0 && t < steps && a.held[t] {
						dst(a)[t] = float32(max(0, float64(v.Value)))
					}
				}
			}
		}
	}
	engineDeviceMemory(out, ms[3], steps, at)
	for _, a := range out {
		shared := a.sharing == vocab.SharingTimeSlicing || a.sharing == vocab.SharingMPS
		for t := range a.load {
			a.load[t] *= a.util[t]
			if shared {
				a.util[t] = a.load[t]
			} else {
				a.util[t] = min(a.util[t], 1)
			}
		}
	}
	return out
}

// engineDeviceMemory makes the tenants' memory add up to what each GPU's
// device reported at every step (fleet.AllocationUsage.Mem).
func engineDeviceMemory(allocs []*engineAllocation, used model.Matrix, steps int, at func(model.Time) int) {
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
	byGPU := map[gpuKey][]*engineAllocation{}
	for _, a := range allocs {
		if a.sharing != vocab.SharingMIG {
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

// engineClaims gives each allocation the ResourceClaim the claims signal
// names for it.
func engineClaims(allocs []*engineAllocation, claims model.Vector) {
	byKey := map[string]string{}
	for _, s := range claims {
		if c := s.Metric[signals.LabelClaim]; c != "" {
			byKey[allocKey(s.Metric)] = string(s.Metric[signals.LabelClaimNamespace]) + "/" + string(c)
		}
	}
	for _, a := range allocs {
		a.claim = byKey[a.key]
	}
}

// fetch is what a plan reads now: an analysis of w that folds its
// allocations' use (query.Sharding.Lanes), in node shards of at most
// maxNodes nodes where maxNodes is positive, and FromAnalysis on it.
func fetch(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, maxNodes int, o Options) (*Data, error) {
	res, err := query.AnalyzeSharded(ctx, src, sch, w, query.Sharding{Lanes: true, MaxNodes: maxNodes})
	if err != nil {
		return nil, err
	}
	return FromAnalysis(res, o)
}
