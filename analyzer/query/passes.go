package query

import (
	"math"
	"math/bits"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/util/kahansum"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// passQueries is the query set that reads each signal once. A subquery
// over the window per figure (scanQueries, kept in the tests as the
// passes' oracle) reads utilization three times (average, p95, steps),
// memory five; here each
// signal with several figures is one pass: its expression evaluated once
// at every step of the window (a range query at exactly the subquery's
// steps), and every figure computed from those values in Go (stats.go,
// the engine's own arithmetic), as are the per-step aggregations across
// series (max by an allocation, sum by a GPU, max by a workload) the
// subqueries asked the engine for. Signals with one figure stay instant
// queries: a pass would only add the transfer of its points.
func (a *analysis) passQueries(sch signals.Schema) []namedQuery {
	a.pass = passState{gpuPods: map[fleet.PodRef]bool{}, allocated: map[fleet.GPUKey]bitset{}, reported: map[fleet.GPUKey]bitset{}}
	h := sch.Health(a.window())
	var qs []namedQuery
	if h.Down != "" && h.XIDRaised != "" {
		// Before the allocations, whose pass looks each XID's step up in
		// its allocations' steps (xidHeld); answers are applied in order.
		qs = append(qs, namedQuery{name: "gpu xid raised", expr: h.XIDRaised, series: a.xidRaisedPass})
	}
	qs = append(qs, []namedQuery{
		{name: "allocations", expr: sch.Allocation(), series: a.allocationPass},
		{name: "utilization", expr: sch.Utilization(), series: a.utilizationPass},
		{name: "memory", expr: sch.MemoryUsed(), series: a.memoryPass},
		{name: "gpus", expr: sch.GPU(), series: a.gpuPass},
		{name: "gpu utilization", expr: sch.GPUUtilization(), series: a.gpuUtilizationPass},
		{name: "gpu memory total", expr: a.maxOverTime(signals.GPUKey, sch.GPUMemoryTotal()), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.MemoryTotalBytes = v })},
		{name: "gpu energy", expr: maxBy(signals.GPUKey, sch.GPUEnergy(rangeStr(a.w), stepStr(a.w))), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.EnergyJoules = v })},
		{name: "gpu memory used", expr: sch.GPUMemoryUsed(), series: a.gpuMemoryPass},
	}...)
	if h.Down != "" {
		qs = append(qs,
			namedQuery{name: "gpu down steps", expr: a.over(signals.SumOverTime, h.Down), apply: a.gpuValue(func(g *fleet.GPU, v float64) { g.DownSteps = int(v) })},
			namedQuery{name: "gpu xid errors", expr: h.XIDEvents, apply: a.gpu(xidApply)},
			namedQuery{name: "gpu thermal", expr: h.Thermal, series: a.thermalPass},
		)
	}
	qs = append(qs, a.attributionQueries(sch)...)
	qs = append(qs, a.hostQueries(sch)...)
	qs = append(qs, a.claimQueries(sch)...)
	qs = append(qs, a.restartQueries(sch)...)
	return append(qs, a.ownerQueries(sch, false)...)
}

// passState is what one pass leaves for another or for finish.
type passState struct {
	// gpuPods are the pods with an allocation in the window, whose owners
	// are kept.
	gpuPods map[fleet.PodRef]bool
	// allocated and reported are, per GPU, the steps with an allocation
	// and the steps its exporter reported it, for AllocatedHours.
	allocated, reported map[fleet.GPUKey]bitset
}

// allocationPass: every figure of the allocation signal.
func (a *analysis) allocationPass(ans []stepSeries) {
	for _, s := range ans {
		a.pass.gpuPods[fleet.PodRef{Namespace: string(s.metric[signals.LabelNamespace]), Name: string(s.metric[signals.LabelPod])}] = true
		// last_over_time and count_over_time per series, labels not of the
		// key included.
		if v := lastOverTime(s.v); !math.IsNaN(v) {
			a.allocAttributes(&model.Sample{Metric: s.metric, Value: model.SampleValue(v)})
		}
		a.allocModeOf(s.metric).steps += present(s.v)
	}
	allocs := groupBy(a, ans, allocationKey, aggMax)
	for _, g := range allocs {
		x := a.allocationOf(g.key)
		a.shares.keep(x, g.v)
		x.Steps = present(g.v)
		x.SinceLastSeen = sinceLastStep(a.w, int64(a.stepTime(lastStep(g.v))))
		x.Workload, x.WorkloadKind = inferWorkload(g.key.Pod)
		setUnlessNaN(sumOverTime(g.v), func(v float64) { x.AllocatedGPUHours = hours(a.w, v) })
		a.xidHeld(g.key, g.v)
	}
	for _, g := range groupBy(a, ans, gpuKey, aggSum) {
		setUnlessNaN(sumOverTime(g.v), func(v float64) { a.gpuOf(g.key).AllocatedGPUHours = hours(a.w, v) })
		a.pass.allocated[g.key] = a.pass.allocated[g.key].or(stepsOf(g.v))
	}
	// The co-tenants are the allocations present at a step, at most.
	for _, g := range countGroups(a, allocs, func(k fleet.AllocationKey) fleet.GPUKey { return fleet.GPUKey{Node: k.Node, UUID: k.UUID} }) {
		a.gpuOf(g.key).CoTenants = g.peak
	}
	type sharingKey struct {
		gpu     fleet.GPUKey
		sharing vocab.Sharing
	}
	for _, g := range countBy(a, ans, func(m model.Metric) sharingKey { return sharingKey{gpuKey(m), vocab.Sharing(m[signals.LabelSharing])} }) {
		if a.gpuSharingSteps == nil {
			a.gpuSharingSteps = map[fleet.GPUKey]map[vocab.Sharing]int{}
		}
		if a.gpuSharingSteps[g.key.gpu] == nil {
			a.gpuSharingSteps[g.key.gpu] = map[vocab.Sharing]int{}
		}
		a.gpuSharingSteps[g.key.gpu][g.key.sharing] += g.steps
	}
	for _, g := range countBy(a, ans, workloadKeyOfSeries) {
		a.workloadOf(g.key).steps = g.steps
	}
}

// utilizationPass: each allocation's average, p95 and steps, and each
// workload's p95 over its busiest allocation at each step.
func (a *analysis) utilizationPass(ans []stepSeries) {
	for _, g := range groupBy(a, ans, allocationKey, aggMax) {
		x := a.allocationOf(g.key)
		a.shares.util(x, g.v)
		setUnlessNaN(avgOverTime(g.v), func(v float64) { x.AvgUtilization = v })
		setUnlessNaN(quantileOverTime(0.95, g.v), func(v float64) { x.P95Utilization = v })
		x.UtilizationSteps = present(g.v)
	}
	for _, g := range groupBy(a, ans, workloadKeyOfSeries, aggMax) {
		setUnlessNaN(quantileOverTime(0.95, g.v), func(v float64) { a.workloadOf(g.key).p95Utilization = v })
	}
}

// memoryPass: each allocation's peak, p99, steps, last and growth, the
// tenants' memory summed per GPU and step, and each workload's p99.
func (a *analysis) memoryPass(ans []stepSeries) {
	allocs := groupBy(a, ans, allocationKey, aggMax)
	for _, g := range allocs {
		a.shares.mem(g.key, g.v)
		x := a.allocationOf(g.key)
		setUnlessNaN(maxOverTime(g.v), func(v float64) { x.PeakMemoryBytes = v })
		setUnlessNaN(quantileOverTime(0.99, g.v), func(v float64) { x.P99MemoryBytes = v })
		x.MemorySteps = present(g.v)
		setUnlessNaN(lastOverTime(g.v), func(v float64) { x.LastMemoryBytes = v })
		if v, ok := deriv(g.v, a.w.Step.Milliseconds()); ok {
			setUnlessNaN(v, func(v float64) { x.MemoryGrowthBytesPerHour = v * 3600 })
		}
	}
	for _, g := range groupGroups(a, allocs, func(k fleet.AllocationKey) fleet.GPUKey { return fleet.GPUKey{Node: k.Node, UUID: k.UUID} }, aggSum) {
		setUnlessNaN(quantileOverTime(0.99, g.v), func(v float64) { a.gpuOf(g.key).TenantsMemoryP99Bytes = v })
	}
	for _, g := range groupBy(a, ans, workloadKeyOfSeries, aggMax) {
		setUnlessNaN(quantileOverTime(0.99, g.v), func(v float64) { a.workloadOf(g.key).p99Memory = v })
	}
}

// gpuPass: the steps each GPU reported, the last of them, and its model.
func (a *analysis) gpuPass(ans []stepSeries) {
	type modelKey struct {
		gpu   fleet.GPUKey
		model string
	}
	for _, g := range groupBy(a, ans, func(m model.Metric) modelKey { return modelKey{gpuKey(m), string(m[signals.LabelModel])} }, aggMax) {
		x := a.gpuOf(g.key.gpu)
		// A GPU whose model label changed is several groups: it was last
		// seen at the latest of them.
		since := sinceLastStep(a.w, int64(a.stepTime(lastStep(g.v))))
		if x.Steps == 0 || since < x.SinceLastSeen {
			x.SinceLastSeen = since
		}
		x.Steps += present(g.v)
		a.shares.gpu(x, g.v)
		if x.Model == "" {
			x.Model = g.key.model
		}
		a.pass.reported[g.key.gpu] = a.pass.reported[g.key.gpu].or(stepsOf(g.v))
	}
}

func (a *analysis) gpuUtilizationPass(ans []stepSeries) {
	for _, g := range groupBy(a, ans, gpuKey, aggMax) {
		x := a.gpuOf(g.key)
		setUnlessNaN(avgOverTime(g.v), func(v float64) { x.AvgUtilization = v })
		x.UtilizationSteps = present(g.v)
	}
}

func (a *analysis) gpuMemoryPass(ans []stepSeries) {
	for _, g := range groupBy(a, ans, gpuKey, aggMax) {
		a.shares.device(g.key, g.v, a.holdsMIG)
		x := a.gpuOf(g.key)
		setUnlessNaN(quantileOverTime(0.99, g.v), func(v float64) { x.MemoryUsedP99Bytes = v })
		setUnlessNaN(maxOverTime(g.v), func(v float64) { x.MemoryUsedPeakBytes = v })
		x.MemoryUsedSteps = present(g.v)
		setUnlessNaN(lastOverTime(g.v), func(v float64) { x.MemoryUsedLastBytes = v })
		if v, ok := deriv(g.v, a.w.Step.Milliseconds()); ok {
			setUnlessNaN(v, func(v float64) { x.MemoryUsedGrowthBytesPerHour = v * 3600 })
		}
	}
}

// thermalPass reads the schema's thermal series as they are, one per GPU.
func (a *analysis) thermalPass(ans []stepSeries) {
	for _, s := range ans {
		x := a.gpuFor(s.metric)
		setUnlessNaN(avgOverTime(s.v), func(v float64) { x.ThermalThrottleRatio = v })
		x.ThrottleSteps = present(s.v)
	}
}

// finishPasses joins what needed two signals, and keeps the owners of the
// GPU pods only. It does nothing after scanQueries (the tests' oracle).
func (a *analysis) finishPasses() {
	if a.pass.gpuPods == nil {
		return
	}
	for k, reported := range a.pass.reported {
		if n := reported.and(a.pass.allocated[k]); n > 0 {
			a.gpuOf(k).AllocatedHours = hours(a.w, float64(n))
		}
	}
	for pod := range a.podOwners {
		if !a.pass.gpuPods[pod] {
			delete(a.podOwners, pod)
		}
	}
}

func (a *analysis) workloadOf(k fleet.WorkloadKey) *workloadPerStep {
	x, ok := a.workloadSteps[k]
	if !ok {
		x = &workloadPerStep{}
		a.workloadSteps[k] = x
	}
	return x
}

// setUnlessNaN sets a figure as Analyze does an instant query's answer:
// a NaN answer leaves it unset.
func setUnlessNaN(v float64, set func(float64)) {
	if !math.IsNaN(v) {
		set(v)
	}
}

// workloadKeyOfSeries is the key withWorkload and "max by (workload
// labels)" give a series.
func workloadKeyOfSeries(m model.Metric) fleet.WorkloadKey {
	name, kind := inferWorkload(string(m[signals.LabelPod]))
	return fleet.WorkloadKey{Ref: workload.Ref{Kind: kind, Namespace: string(m[signals.LabelNamespace]), Name: name, Container: string(m[signals.LabelContainer])}, Model: string(m[signals.LabelModel]), MIGProfile: string(m[signals.LabelMIGProfile])}
}

// inferWorkload is withWorkload's label_replace chain on a pod name
// (vocab.WorkloadOf).
func inferWorkload(pod string) (name, kind string) { return vocab.WorkloadOf(pod) }

// aggregation is how groupBy combines the series of a group at a step, as
// PromQL's max and sum (Kahan) by do; countBy and countGroups count them.
type aggregation int

const (
	aggMax aggregation = iota
	aggSum
)

// group is one output series of an aggregation "by key": its value at
// every step of the window, absent where no member has one.
type group[K comparable] struct {
	key K
	v   []float64
}

// counted is one output series of "count by key", as the passes use it:
// at how many steps it has a value (its count_over_time) and its largest
// value (its max_over_time), without its values.
type counted[K comparable] struct {
	key         K
	steps, peak int
}

// members gathers the step arrays of each key, the keys in the order of
// their first member.
func members[T any, K comparable](items []T, key func(T) K, steps func(T) []float64) ([]K, [][][]float64) {
	index := map[K]int{}
	var keys []K
	var out [][][]float64
	for _, it := range items {
		k := key(it)
		i, ok := index[k]
		if !ok {
			i = len(keys)
			index[k] = i
			keys = append(keys, k)
			out = append(out, nil)
		}
		out[i] = append(out[i], steps(it))
	}
	return keys, out
}

func seriesKey[K comparable](key func(model.Metric) K) func(stepSeries) K {
	return func(s stepSeries) K { return key(s.metric) }
}

func seriesSteps(s stepSeries) []float64 { return s.v }

func groupSteps[K comparable](g group[K]) []float64 { return g.v }

// groupBy aggregates the series of ans by key at every step, the groups
// in the order of their first series.
func groupBy[K comparable](a *analysis, ans []stepSeries, key func(model.Metric) K, agg aggregation) []group[K] {
	keys, ms := members(ans, seriesKey(key), seriesSteps)
	return combineMembers(a, keys, ms, agg)
}

// groupGroups aggregates groups again, by a coarser key.
func groupGroups[K1, K2 comparable](a *analysis, groups []group[K1], key func(K1) K2, agg aggregation) []group[K2] {
	keys, ms := members(groups, func(g group[K1]) K2 { return key(g.key) }, groupSteps[K1])
	return combineMembers(a, keys, ms, agg)
}

func combineMembers[K comparable](a *analysis, keys []K, ms [][][]float64, agg aggregation) []group[K] {
	c := a.combiner()
	out := make([]group[K], len(keys))
	for i, k := range keys {
		out[i] = group[K]{key: k, v: c.combine(ms[i], agg)}
	}
	return out
}

// countBy is "count by key" of the series of ans, as counted.
func countBy[K comparable](a *analysis, ans []stepSeries, key func(model.Metric) K) []counted[K] {
	keys, ms := members(ans, seriesKey(key), seriesSteps)
	return countMembers(a, keys, ms)
}

// countGroups is "count by key" of groups, by a coarser key, as counted.
func countGroups[K1, K2 comparable](a *analysis, groups []group[K1], key func(K1) K2) []counted[K2] {
	keys, ms := members(groups, func(g group[K1]) K2 { return key(g.key) }, groupSteps[K1])
	return countMembers(a, keys, ms)
}

// countMembers counts each key's members step by step, in one combiner.
func countMembers[K comparable](a *analysis, keys []K, ms [][][]float64) []counted[K] {
	c := a.combiner()
	out := make([]counted[K], len(keys))
	for i, k := range keys {
		out[i] = counted[K]{key: k}
		out[i].steps, out[i].peak = c.count(ms[i])
	}
	return out
}

// combiner aggregates series step by step, on the window's steps. Its
// buffers, one value per step, are made once and cleared for each group:
// fresh ones for each of a thousand groups cost more than the aggregation.
type combiner struct {
	n      int
	comp   []float64
	counts []int32
}

func (a *analysis) combiner() *combiner {
	return &combiner{n: a.res.ExpectedSteps}
}

// combine is max or sum by at every step of series. A group of one is
// that series' own array.
func (c *combiner) combine(series [][]float64, agg aggregation) []float64 {
	if len(series) == 1 {
		return series[0]
	}
	out := make([]float64, c.n)
	copy(out, series[0])
	if agg == aggSum {
		if c.comp == nil {
			c.comp = make([]float64, c.n)
		} else {
			clear(c.comp)
		}
	}
	comp := c.comp
	for _, v := range series[1:] {
		for i, f := range v[:len(out)] {
			switch {
			case scan.IsAbsent(f):
			case scan.IsAbsent(out[i]):
				out[i] = f
			case agg == aggMax:
				if out[i] < f || math.IsNaN(out[i]) {
					out[i] = f
				}
			default:
				out[i], comp[i] = kahansum.Inc(f, out[i], comp[i])
			}
		}
	}
	if agg == aggSum {
		for i, f := range out {
			if !scan.IsAbsent(f) {
				out[i] = f + comp[i]
			}
		}
	}
	return out
}

// count is count by at every step of series, reduced to the number of
// steps with a value and the largest count.
func (c *combiner) count(series [][]float64) (steps, peak int) {
	if c.counts == nil {
		c.counts = make([]int32, c.n)
	} else {
		clear(c.counts)
	}
	for _, v := range series {
		for i, f := range v[:min(len(v), c.n)] {
			if scan.IsAbsent(f) {
				continue
			}
			if c.counts[i]++; c.counts[i] == 1 {
				steps++
			}
			peak = max(peak, int(c.counts[i]))
		}
	}
	return steps, peak
}

// bitset is a set of step indexes.
type bitset []uint64

// stepsOf is the set of steps at which v has a value.
func stepsOf(v []float64) bitset {
	b := make(bitset, (len(v)+63)/64)
	for i, f := range v {
		if !scan.IsAbsent(f) {
			b[i/64] |= 1 << (i % 64)
		}
	}
	return b
}

// or is the union of b and c; b may be nil.
func (b bitset) or(c bitset) bitset {
	if b == nil {
		return c
	}
	for i := range c {
		b[i] |= c[i]
	}
	return b
}

// and is the number of steps in both b and c.
func (b bitset) and(c bitset) int {
	n := 0
	for i := range min(len(b), len(c)) {
		n += bits.OnesCount64(b[i] & c[i])
	}
	return n
}
