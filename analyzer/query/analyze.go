package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
)

// Analyze runs the query set over w and joins the answers, sharded when
// one query over the whole fleet would exceed DefaultMaxSamples
// (AnalyzeSharded).
func Analyze(ctx context.Context, src source.Source, sch schema.Schema, w Window) (*Result, error) {
	return AnalyzeSharded(ctx, src, sch, w, Sharding{})
}

func newAnalysis(sch schema.Schema, w Window) *analysis {
	return &analysis{
		w:      w,
		allocs: map[AllocationKey]*Allocation{},
		gpus:   map[GPUKey]*GPU{},
		res:    &Result{Schema: sch.Name(), Window: w, ExpectedSteps: w.ExpectedSteps()},

		workloadSteps: map[WorkloadKey]*workloadPerStep{},
		podOwners:     map[PodRef]Owner{}, setOwners: map[PodRef]Owner{}, jobOwners: map[PodRef]Owner{},
	}
}

type namedQuery struct {
	name  string
	expr  string
	apply func(*model.Sample)
}

type analysis struct {
	w      Window
	res    *Result
	allocs map[AllocationKey]*Allocation
	gpus   map[GPUKey]*GPU
	// workloadSteps are the per-step figures of each workload, which
	// cannot be composed from its allocations' own.
	workloadSteps map[WorkloadKey]*workloadPerStep
	// podOwners, setOwners and jobOwners are kube-state-metrics' owner
	// references of GPU pods, ReplicaSets and Jobs.
	podOwners, setOwners, jobOwners map[PodRef]Owner
	// gpuSharingSteps counts steps per sharing mode and GPU.
	gpuSharingSteps map[GPUKey]map[string]int
	sharingChanged  int
}

func by(labels []string) string { return "(" + strings.Join(labels, ", ") + ")" }

// queries is the fixed query set. Allocation-level figures are keyed by
// schema.AllocationKey and GPU-level ones by schema.GPUKey, aggregated
// inside the engine before the subquery so that a label that changes
// within the window (a measurement method, a sharing mode) cannot split
// one allocation into two.
func (a *analysis) queries(sch schema.Schema) []namedQuery {
	over := a.over
	quantile := func(q float64, expr string) string {
		return fmt.Sprintf("quantile_over_time(%g, (%s)[%s:%s])", q, expr, a.w.subqueryRangeStr(), a.w.stepStr())
	}
	gpuKey := by(schema.GPUKey)
	alloc := maxBy(schema.AllocationKey, sch.Allocation())
	util := maxBy(schema.AllocationKey, sch.Utilization())
	mem := maxBy(schema.AllocationKey, sch.MemoryUsed())
	gpu := maxBy(schema.GPUKey, sch.GPU())
	gpuUtil := maxBy(schema.GPUKey, sch.GPUUtilization())
	gpuMem := maxBy(schema.GPUKey, sch.GPUMemoryUsed())

	return append([]namedQuery{
		// withWorkload outside the subquery labels each allocation's row
		// once, not at every step.
		{"allocation steps", withWorkload(over("count_over_time", alloc)), a.allocSteps},
		{"allocated GPU steps", over("sum_over_time", alloc), a.alloc(func(x *Allocation, v float64) { x.AllocatedGPUHours = a.w.hours(v) })},
		{"allocation attributes", over("last_over_time", sch.Allocation()), a.allocAttributes},
		{"utilization average", over("avg_over_time", util), a.alloc(func(x *Allocation, v float64) { x.AvgUtilization = v })},
		{"utilization p95", quantile(0.95, util), a.alloc(func(x *Allocation, v float64) { x.P95Utilization = v })},
		{"utilization steps", over("count_over_time", util), a.alloc(func(x *Allocation, v float64) { x.UtilizationSteps = int(v) })},
		{"memory peak", a.maxOverTime(schema.AllocationKey, sch.MemoryUsed()), a.alloc(func(x *Allocation, v float64) { x.PeakMemoryBytes = v })},
		{"memory p99", quantile(0.99, mem), a.alloc(func(x *Allocation, v float64) { x.P99MemoryBytes = v })},
		{"memory steps", over("count_over_time", mem), a.alloc(func(x *Allocation, v float64) { x.MemorySteps = int(v) })},
		{"memory last", over("last_over_time", mem), a.alloc(func(x *Allocation, v float64) { x.LastMemoryBytes = v })},
		// deriv() is a least-squares fit over the whole window, so a
		// sawtooth of allocations and frees does not read as growth.
		{"memory growth", over("deriv", mem), a.alloc(func(x *Allocation, v float64) { x.MemoryGrowthBytesPerHour = v * 3600 })},

		{"gpu steps", over("count_over_time", maxBy(schema.GPULabels, sch.GPU())), a.gpu(func(g *GPU, s *model.Sample) {
			g.Steps += int(s.Value)
			if g.Model == "" {
				g.Model = string(s.Metric[schema.LabelModel])
			}
		})},
		{"gpu allocated steps", over("count_over_time", gpu+" and on "+gpuKey+" "+presence(schema.GPUKey, sch.Allocation())), a.gpuValue(func(g *GPU, v float64) { g.AllocatedHours = a.w.hours(v) })},
		{"gpu allocated GPU steps", over("sum_over_time", "sum by "+gpuKey+" ("+sch.Allocation()+")"), a.gpuValue(func(g *GPU, v float64) { g.AllocatedGPUHours = a.w.hours(v) })},
		{"gpu co-tenants", over("max_over_time", "count by "+gpuKey+" ("+alloc+")"), a.gpuValue(func(g *GPU, v float64) { g.CoTenants = int(v) })},
		{"gpu sharing", over("count_over_time", "count by (node, uuid, sharing) ("+sch.Allocation()+")"), a.gpuSharing},
		{"gpu utilization average", over("avg_over_time", gpuUtil), a.gpuValue(func(g *GPU, v float64) { g.AvgUtilization = v })},
		{"gpu utilization steps", over("count_over_time", gpuUtil), a.gpuValue(func(g *GPU, v float64) { g.UtilizationSteps = int(v) })},
		{"gpu memory total", a.maxOverTime(schema.GPUKey, sch.GPUMemoryTotal()), a.gpuValue(func(g *GPU, v float64) { g.MemoryTotalBytes = v })},
		{"gpu energy", maxBy(schema.GPUKey, sch.GPUEnergy(a.w.rangeStr(), a.w.stepStr())), a.gpuValue(func(g *GPU, v float64) { g.EnergyJoules = v })},
		{"gpu memory used p99", quantile(0.99, gpuMem), a.gpuValue(func(g *GPU, v float64) { g.MemoryUsedP99Bytes = v })},
		{"gpu memory used peak", a.maxOverTime(schema.GPUKey, sch.GPUMemoryUsed()), a.gpuValue(func(g *GPU, v float64) { g.MemoryUsedPeakBytes = v })},
		{"gpu memory used steps", over("count_over_time", gpuMem), a.gpuValue(func(g *GPU, v float64) { g.MemoryUsedSteps = int(v) })},
		{"gpu memory used last", over("last_over_time", gpuMem), a.gpuValue(func(g *GPU, v float64) { g.MemoryUsedLastBytes = v })},
		{"gpu memory used growth", over("deriv", gpuMem), a.gpuValue(func(g *GPU, v float64) { g.MemoryUsedGrowthBytesPerHour = v * 3600 })},
		// The tenants' memory is summed per step, before the quantile:
		// tenants that take turns never add up.
		{"gpu tenants memory p99", quantile(0.99, "sum by "+gpuKey+" ("+mem+")"), a.gpuValue(func(g *GPU, v float64) { g.TenantsMemoryP99Bytes = v })},
	}, slices.Concat(a.workloadQueries(sch), a.ownerQueries(sch), a.healthQueries(sch), a.attributionQueries(sch))...)
}

// allocSteps records an allocation's steps and the workload the engine
// inferred for its pod.
func (a *analysis) allocSteps(s *model.Sample) {
	x := a.allocation(s.Metric)
	x.Steps = int(s.Value)
	x.Workload, x.WorkloadKind = string(s.Metric[LabelWorkload]), string(s.Metric[LabelWorkloadKind])
}

// over is fn over expr evaluated at every step of the window.
func (a *analysis) over(fn, expr string) string {
	return fmt.Sprintf("%s((%s)[%s:%s])", fn, expr, a.w.subqueryRangeStr(), a.w.stepStr())
}

func allocationKey(m model.Metric) AllocationKey {
	return AllocationKey{
		Node: string(m[schema.LabelNode]), Namespace: string(m[schema.LabelNamespace]),
		Pod: string(m[schema.LabelPod]), Container: string(m[schema.LabelContainer]),
		UUID: string(m[schema.LabelUUID]), GPUInstance: string(m[schema.LabelGPUInstance]),
	}
}

func gpuKey(m model.Metric) GPUKey {
	return GPUKey{Node: string(m[schema.LabelNode]), UUID: string(m[schema.LabelUUID])}
}

func (a *analysis) allocation(m model.Metric) *Allocation {
	k := allocationKey(m)
	x, ok := a.allocs[k]
	if !ok {
		x = &Allocation{AllocationKey: k}
		a.allocs[k] = x
	}
	return x
}

func (a *analysis) alloc(set func(*Allocation, float64)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.allocation(s.Metric), float64(s.Value)) }
}

// allocAttributes reads the labels that are not part of the key. More than
// one series per key means the sharing mode or profile changed within the
// window; the last one seen cannot be told apart by an instant query, so
// the lexically greatest is kept (deterministic) and a note says so.
func (a *analysis) allocAttributes(s *model.Sample) {
	x := a.allocation(s.Metric)
	sharing := string(s.Metric[schema.LabelSharing])
	if x.Sharing != "" {
		if x.Sharing == sharing {
			return
		}
		a.sharingChanged++
		if sharing < x.Sharing {
			return
		}
	}
	x.Sharing = sharing
	x.Share = float64(s.Value)
	x.Model = string(s.Metric[schema.LabelModel])
	x.MIGProfile = string(s.Metric[schema.LabelMIGProfile])
}

func (a *analysis) gpuFor(m model.Metric) *GPU {
	k := gpuKey(m)
	g, ok := a.gpus[k]
	if !ok {
		g = &GPU{GPUKey: k}
		a.gpus[k] = g
	}
	return g
}

func (a *analysis) gpu(set func(*GPU, *model.Sample)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.gpuFor(s.Metric), s) }
}

func (a *analysis) gpuValue(set func(*GPU, float64)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.gpuFor(s.Metric), float64(s.Value)) }
}

func (a *analysis) gpuSharing(s *model.Sample) {
	if a.gpuSharingSteps == nil {
		a.gpuSharingSteps = map[GPUKey]map[string]int{}
	}
	k := gpuKey(s.Metric)
	if a.gpuSharingSteps[k] == nil {
		a.gpuSharingSteps[k] = map[string]int{}
	}
	a.gpuSharingSteps[k][string(s.Metric[schema.LabelSharing])] += int(s.Value)
}

// finish derives hours and coverage, drops rows that only exist because a
// usage series outlived its allocation, sorts, and writes the notes.
func (a *analysis) finish() {
	expected := float64(a.res.ExpectedSteps)
	for _, x := range a.allocs {
		if x.Steps == 0 {
			// Usage without an allocation series is not an allocation;
			// the GPU-level figures still count it.
			continue
		}
		x.HeldHours = a.w.hours(float64(x.Steps))
		x.Coverage = float64(x.Steps) / expected
		x.UtilizationCoverage = min(1, float64(x.UtilizationSteps)/float64(x.Steps))
		a.res.Allocations = append(a.res.Allocations, *x)
	}
	for k, g := range a.gpus {
		g.ReportedHours = a.w.hours(float64(g.Steps))
		g.UnallocatedHours = max(0, g.ReportedHours-g.AllocatedHours)
		g.Coverage = float64(g.Steps) / expected
		best := -1
		for mode, n := range a.gpuSharingSteps[k] {
			if n > best || (n == best && mode < g.Sharing) {
				g.Sharing, best = mode, n
			}
		}
		a.res.GPUs = append(a.res.GPUs, *g)
	}
	slices.SortFunc(a.res.Allocations, func(x, y Allocation) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Pod, y.Pod), cmp.Compare(x.Container, y.Container),
			cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID), cmp.Compare(x.GPUInstance, y.GPUInstance))
	})
	a.res.Workloads = a.workloads()
	a.res.PodOwners = a.podOwnersResolved()
	slices.SortFunc(a.res.GPUs, func(x, y GPU) int {
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID))
	})
	a.res.Notes = a.notes()
}
