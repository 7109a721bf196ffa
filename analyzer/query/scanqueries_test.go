package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// queryPlan is a query set: passQueries, the analysis's, or scanQueries,
// the oracle the tests hold it to; both give the same Result.
type queryPlan func(*analysis, signals.Schema) []namedQuery

// analyze runs one query set over the whole fleet, unsharded, so that
// tests can hold the sets to each other. Unlike AnalyzeScoped it takes a
// source without range queries, which scanQueries never asks for.
func analyze(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, plan queryPlan) (*fleet.Result, error) {
	w, err := w.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis window: %w", err)
	}
	a := newAnalysis(sch, w)
	a.res.Shards = 1
	if err := a.run(ctx, src, Scope{}, plan(a, sch), w, nil); err != nil {
		return nil, err
	}
	a.finish()
	return a.res, nil
}

func by(labels []string) string { return signals.By(labels...) }

// scanQueries is the query set that evaluates a subquery over the window
// for each figure, so it reads a signal's samples once per figure. It is
// no longer a query set the analysis runs (every production source,
// source.Embedded and source.Remote, answers range queries, and
// AnalyzeScoped requires them): it is kept here, with what only it uses,
// as the independent oracle TestPassesMatchScans holds passQueries to,
// every figure and aggregation the engine's own rather than stats.go's.
// Allocation-level figures are keyed by
// signals.AllocationKeyLabels and GPU-level ones by signals.GPUKey, aggregated
// inside the engine before the subquery so that a label that changes
// within the window (a measurement method, a sharing mode) cannot split
// one allocation into two.
func (a *analysis) scanQueries(sch signals.Schema) []namedQuery {
	over, quantile := a.over, a.quantile
	alloc := maxBy(signals.AllocationKeyLabels, sch.Allocation())
	util := maxBy(signals.AllocationKeyLabels, sch.Utilization())
	mem := maxBy(signals.AllocationKeyLabels, sch.MemoryUsed())
	gpu := maxBy(signals.GPUKey, sch.GPU())
	gpuUtil := maxBy(signals.GPUKey, sch.GPUUtilization())
	gpuMem := maxBy(signals.GPUKey, sch.GPUMemoryUsed())

	return append([]namedQuery{
		// withWorkload outside the subquery labels each allocation's row
		// once, not at every step.
		{name: "allocation steps", expr: withWorkload(over(signals.CountOverTime, alloc)), apply: a.allocSteps},
		// time() is each step's own instant: the largest is the last
		// step the allocation was seen at.
		{name: "allocation last step", expr: over(signals.MaxOverTime, signals.StepTime(alloc)), apply: a.alloc(func(x *fleet.Allocation, v float64) {
			x.SinceLastSeen = sinceLastStep(a.w, int64(math.Round(v*1000)))
		})},
		{name: "allocated GPU steps", expr: over(signals.SumOverTime, alloc), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.AllocatedGPUHours = hours(a.w, v) })},
		{name: "allocation attributes", expr: over(signals.LastOverTime, sch.Allocation()), apply: a.allocAttributes},
		{name: "allocation attribute steps", expr: over(signals.CountOverTime, sch.Allocation()), apply: a.allocModeSteps},
		{name: "utilization average", expr: over(signals.AvgOverTime, util), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.AvgUtilization = v })},
		{name: "utilization p95", expr: quantile(0.95, util), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.P95Utilization = v })},
		{name: "utilization steps", expr: over(signals.CountOverTime, util), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.UtilizationSteps = int(v) })},
		{name: "memory peak", expr: a.maxOverTime(signals.AllocationKeyLabels, sch.MemoryUsed()), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.PeakMemoryBytes = v })},
		{name: "memory p99", expr: quantile(0.99, mem), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.P99MemoryBytes = v })},
		{name: "memory steps", expr: over(signals.CountOverTime, mem), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.MemorySteps = int(v) })},
		{name: "memory last", expr: over(signals.LastOverTime, mem), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.LastMemoryBytes = v })},
		// deriv() is a least-squares fit over the whole window, so a
		// sawtooth of allocations and frees does not read as growth.
		{name: "memory growth", expr: over(signals.Deriv, mem), apply: a.alloc(func(x *fleet.Allocation, v float64) { x.MemoryGrowthBytesPerHour = v * 3600 })},

		{name: "gpu steps", expr: over(signals.CountOverTime, maxBy(signals.GPULabels, sch.GPU())), apply: a.gpu(func(g *fleet.GPU, s *model.Sample) {
			g.Steps += int(s.Value)
			if g.Model == "" {
				g.Model = string(s.Metric[signals.LabelModel])
			}
		})},
		{name: "gpu last step", expr: over(signals.MaxOverTime, signals.StepTime(gpu)), apply: a.gpuValue(func(g *fleet.GPU, v float64) {
			g.SinceLastSeen = sinceLastStep(a.w, int64(math.Round(v*1000)))
		})},
		{name: "gpu allocated steps", expr: over(signals.CountOverTime, signals.AndOn(gpu, signals.GPUKey, presence(signals.GPUKey, sch.Allocation()))), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.AllocatedHours = hours(a.w, v) })},
		{name: "gpu allocated GPU steps", expr: over(signals.SumOverTime, signals.SumBy(signals.GPUKey, sch.Allocation())), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.AllocatedGPUHours = hours(a.w, v) })},
		{name: "gpu co-tenants", expr: over(signals.MaxOverTime, signals.CountBy(signals.GPUKey, alloc)), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.CoTenants = int(v) })},
		{name: "gpu sharing", expr: over(signals.CountOverTime, signals.CountBy(append(slices.Clone(signals.GPUKey), signals.LabelSharing), sch.Allocation())), apply: a.gpuSharing},
		{name: "gpu utilization average", expr: over(signals.AvgOverTime, gpuUtil), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.AvgUtilization = v })},
		{name: "gpu utilization steps", expr: over(signals.CountOverTime, gpuUtil), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.UtilizationSteps = int(v) })},
		{name: "gpu memory total", expr: a.maxOverTime(signals.GPUKey, sch.GPUMemoryTotal()), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryTotalBytes = v })},
		{name: "gpu energy", expr: maxBy(signals.GPUKey, sch.GPUEnergy(rangeStr(a.w), stepStr(a.w))), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.EnergyJoules = v })},
		{name: "gpu memory used p99", expr: quantile(0.99, gpuMem), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryUsedP99Bytes = v })},
		{name: "gpu memory used peak", expr: a.maxOverTime(signals.GPUKey, sch.GPUMemoryUsed()), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryUsedPeakBytes = v })},
		{name: "gpu memory used steps", expr: over(signals.CountOverTime, gpuMem), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryUsedSteps = int(v) })},
		{name: "gpu memory used last", expr: over(signals.LastOverTime, gpuMem), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryUsedLastBytes = v })},
		{name: "gpu memory used growth", expr: over(signals.Deriv, gpuMem), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryUsedGrowthBytesPerHour = v * 3600 })},
		// The tenants' memory is summed per step, before the quantile:
		// tenants that take turns never add up.
		{name: "gpu tenants memory p99", expr: quantile(0.99, signals.SumBy(signals.GPUKey, mem)), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.TenantsMemoryP99Bytes = v })},
	}, slices.Concat(a.workloadQueries(sch), a.ownerQueries(sch, true), a.healthQueries(sch), a.scanAttributionQueries(sch), a.hostQueries(sch), a.claimQueries(sch), a.restartQueries(sch))...)
}

// allocSteps records an allocation's steps and the workload the engine
// inferred for its pod.
func (a *analysis) allocSteps(s *model.Sample) {
	x := a.allocation(s.Metric)
	x.Steps = int(s.Value)
	x.Workload, x.WorkloadKind = string(s.Metric[LabelWorkload]), string(s.Metric[LabelWorkloadKind])
}

// allocModeSteps reads how many steps each labelling held.
func (a *analysis) allocModeSteps(s *model.Sample) { a.allocModeOf(s.Metric).steps += int(s.Value) }

func (a *analysis) gpuSharing(s *model.Sample) {
	if a.gpuSharingSteps == nil {
		a.gpuSharingSteps = map[fleet.GPUKey]map[vocab.Sharing]int{}
	}
	k := gpuKey(s.Metric)
	if a.gpuSharingSteps[k] == nil {
		a.gpuSharingSteps[k] = map[vocab.Sharing]int{}
	}
	a.gpuSharingSteps[k][vocab.Sharing(s.Metric[signals.LabelSharing])] += int(s.Value)
}

// healthQueries are the GPU health queries; each schema issues the same
// number, so that query counts compare across schemas.
func (a *analysis) healthQueries(sch signals.Schema) []namedQuery {
	h := sch.Health(a.window())
	qs := []namedQuery{
		{name: "gpu down steps", expr: a.over(signals.SumOverTime, h.Down), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.DownSteps = int(v) })},
		{name: "gpu xid errors", expr: h.XIDEvents, apply: a.gpu(xidApply)},
		{name: "gpu xid raised", expr: a.xidHolders(sch, h), apply: a.xidHolder},
		{name: "gpu thermal throttle", expr: a.over(signals.AvgOverTime, h.Thermal), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.ThermalThrottleRatio = v })},
		{name: "gpu throttle steps", expr: a.over(signals.CountOverTime, h.Thermal), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.ThrottleSteps = int(v) })},
	}
	return slices.DeleteFunc(qs, func(q namedQuery) bool { return h.Down == "" || (q.name == "gpu xid raised" && h.XIDRaised == "") })
}

// xidHolders is, for the scans, every application XID of the window with
// each allocation that held its GPU at that step: one series per event and
// holder (and one per event without one) with the allocation's key, the
// code in xid and the step in at, from count_values at each step of the
// window's subquery.
func (a *analysis) xidHolders(sch signals.Schema, h signals.Health) string {
	return signals.XIDHolders(a.window(), allocationPresence(sch), h.XIDRaised, labelAt)
}

// xidHolder reads one of xidHolders' series.
func (a *analysis) xidHolder(s *model.Sample) {
	at, err := strconv.ParseFloat(string(s.Metric[labelAt]), 64)
	code, ok := xidCode(string(s.Metric["xid"]))
	if err != nil || !ok {
		return
	}
	e := a.xidAt(gpuKey(s.Metric), model.Time(math.Round(at*1000)), code)
	if k := allocationKey(s.Metric); k.Pod != "" {
		e.holders = append(e.holders, fleet.XIDHolder{Namespace: k.Namespace, Pod: k.Pod, Container: k.Container, GPUInstance: k.GPUInstance})
	}
}

// scanAttributionQueries is each GPU's attribution code as one instant
// query of the schema's subquery (signals.GPUAttribution), the sustain
// rule evaluated by the engine: what attributionQueries' pass of a
// schema's per-step code (sustainedMax) is held to.
func (a *analysis) scanAttributionQueries(sch signals.Schema) []namedQuery {
	return []namedQuery{{name: "gpu attribution", expr: sch.GPUAttribution(a.window()), apply: a.gpuValue(setAttribution)}}
}
