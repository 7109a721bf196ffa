package query

import (
	"cmp"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/prometheus/common/model"
)

// Labels the query set adds to allocation series: the workload a pod
// belongs to, inferred inside the engine from the pod's name
// (signals.WithWorkload), so that the per-workload figures (a union of
// pods' time, percentiles over all their samples) are aggregated by the
// engine at each step and the query count stays constant in the number of
// pods.
const (
	LabelWorkload     = signals.LabelWorkload
	LabelWorkloadKind = signals.LabelWorkloadKind
)

// withWorkload is signals.WithWorkload.
func withWorkload(expr string) string { return signals.WithWorkload(expr) }

// workloadLabels are the labels of WorkloadKey as the engine groups them.
var workloadLabels = []string{signals.LabelNamespace, LabelWorkloadKind, LabelWorkload, signals.LabelContainer, signals.LabelModel, signals.LabelMIGProfile}

func workloadKeyOf(m model.Metric) fleet.WorkloadKey {
	return fleet.WorkloadKey{Ref: workload.Ref{Kind: string(m[LabelWorkloadKind]), Namespace: string(m[signals.LabelNamespace]), Name: string(m[LabelWorkload]), Container: string(m[signals.LabelContainer])}, Model: string(m[signals.LabelModel]), MIGProfile: string(m[signals.LabelMIGProfile])}
}

// workloadPerStep holds what only a per-step aggregation can tell: the
// union of the pods' time, and percentiles over the busiest allocation at
// each step.
type workloadPerStep struct {
	steps          int
	p95Utilization float64
	p99Memory      float64
}

// workloadQueries are the per-step workload figures. Everything else about
// a workload (its allocation steps, GPU-hours, pooled average, sample
// counts, peak) is a sum or maximum over its allocations' figures, which
// workloads() composes exactly, so it costs no query of its own.
func (a *analysis) workloadQueries(sch signals.Schema) []namedQuery {
	perStep := func(agg, expr string) string { return signals.Agg(agg, workloadLabels, withWorkload(expr)) }
	quantile := a.quantile
	return []namedQuery{
		{name: "workload steps", expr: a.over(signals.CountOverTime, perStep("group", allocationPresence(sch))), apply: a.workloadValue(func(x *workloadPerStep, v float64) { x.steps = int(v) })},
		{name: "workload utilization p95", expr: quantile(0.95, perStep("max", sch.Utilization())), apply: a.workloadValue(func(x *workloadPerStep, v float64) { x.p95Utilization = v })},
		{name: "workload memory p99", expr: quantile(0.99, perStep("max", sch.MemoryUsed())), apply: a.workloadValue(func(x *workloadPerStep, v float64) { x.p99Memory = v })},
	}
}

func (a *analysis) workloadValue(set func(*workloadPerStep, float64)) func(*model.Sample) {
	return func(s *model.Sample) {
		k := workloadKeyOf(s.Metric)
		x, ok := a.workloadSteps[k]
		if !ok {
			x = &workloadPerStep{}
			a.workloadSteps[k] = x
		}
		set(x, float64(s.Value))
	}
}

// workloads groups the allocations (already finished) by WorkloadKey.
func (a *analysis) workloads() []fleet.Workload {
	byKey := map[fleet.WorkloadKey]*fleet.Workload{}
	longest := map[fleet.WorkloadKey]int{}
	// instances is the one GPU instance a workload's allocations share,
	// "-" once they differ.
	instances := map[fleet.WorkloadKey]string{}
	utilSums := map[fleet.WorkloadKey]float64{}
	for _, x := range a.res.Allocations {
		k := fleet.WorkloadKey{Ref: workload.Ref{Kind: x.WorkloadKind, Namespace: x.Namespace, Name: x.Workload, Container: x.Container}, Model: x.Model, MIGProfile: x.MIGProfile}
		if k.Name == "" {
			k.Kind, k.Name = "Pod", x.Pod
		}
		w, ok := byKey[k]
		if !ok {
			w = &fleet.Workload{WorkloadKey: k}
			byKey[k] = w
		}
		if x.Steps > longest[k] {
			longest[k], w.Sharing, w.Share, w.AllocationPath = x.Steps, x.Sharing, x.Share, x.AllocationPath
		}
		if x.Claim != (fleet.ClaimRef{}) && !slices.Contains(w.Claims, x.Claim) {
			w.Claims = append(w.Claims, x.Claim)
		}
		if prev, seen := instances[k]; !seen {
			instances[k] = x.GPUInstance
		} else if prev != x.GPUInstance {
			instances[k] = "-"
		}
		if !slices.Contains(w.Pods, x.Pod) {
			w.Pods = append(w.Pods, x.Pod)
		}
		if g := allocationGPU(x); !slices.Contains(w.GPUs, g) {
			w.GPUs = append(w.GPUs, g)
		}
		w.AllocationSteps += x.Steps
		w.AllocatedGPUHours += x.AllocatedGPUHours
		w.UtilizationSteps += x.UtilizationSteps
		utilSums[k] += x.AvgUtilization * float64(x.UtilizationSteps)
		w.MemorySteps += x.MemorySteps
		w.PeakMemoryBytes = max(w.PeakMemoryBytes, x.PeakMemoryBytes)
	}
	expected := float64(a.res.ExpectedSteps)
	out := make([]fleet.Workload, 0, len(byKey))
	for k, w := range byKey {
		if ps, ok := a.workloadSteps[k]; ok {
			w.Steps, w.P95Utilization, w.P99MemoryBytes = ps.steps, ps.p95Utilization, ps.p99Memory
		}
		// The union cannot be shorter than its longest allocation; a
		// missing per-step answer (the usage series lacked a label the
		// allocation had) falls back to that bound rather than to zero.
		w.Steps = max(w.Steps, longest[k], 1)
		if gi := instances[k]; gi != "-" && len(w.GPUs) == 1 {
			w.GPUInstance = gi
		}
		w.HeldHours = hours(a.w, float64(w.Steps))
		w.Coverage = float64(w.Steps) / expected
		w.Replicas = float64(w.AllocationSteps) / float64(w.Steps)
		if w.UtilizationSteps > 0 {
			w.AvgUtilization = utilSums[k] / float64(w.UtilizationSteps)
		}
		if w.AllocationSteps > 0 {
			w.UtilizationCoverage = min(1, float64(w.UtilizationSteps)/float64(w.AllocationSteps))
		}
		slices.Sort(w.Pods)
		slices.SortFunc(w.Claims, func(x, y fleet.ClaimRef) int {
			return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
		})
		slices.SortFunc(w.GPUs, func(x, y fleet.GPUKey) int { return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID)) })
		out = append(out, *w)
	}
	slices.SortFunc(out, func(x, y fleet.Workload) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Container, y.Container), cmp.Compare(x.Model, y.Model), cmp.Compare(x.MIGProfile, y.MIGProfile))
	})
	return out
}

// allocationPresence is the schema's allocations where only which series
// exist at each step matters: its AllocationPresence where it has a
// cheaper expression for that, else its Allocation.
func allocationPresence(sch signals.Schema) string {
	if p, ok := sch.(interface{ AllocationPresence() string }); ok {
		return p.AllocationPresence()
	}
	return sch.Allocation()
}
