package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/prometheus/common/model"
)

// DefaultMaxSamples is the sample budget of one query when Sharding gives
// none: under the 50M of the embedded engine and of Prometheus's
// --query.max-samples default, with room for the cost model's error.
const DefaultMaxSamples = 40_000_000

// shardConcurrency is how many shards run at once. Queries inside a shard
// run queryConcurrency at a time, so at most shardConcurrency ×
// queryConcurrency queries are in flight, each within the budget: the
// analysis's peak memory is bounded by the budget, not by the fleet.
const shardConcurrency = 2

// Cost model. A query's peak samples (what --query.max-samples counts)
// is its matrices: the series it reads times the window's steps, times
// the matrices alive at once. perSeriesStep is that multiplier per GPU or
// allocation the probe counts and per step, the schema's
// (signals.Traits.PointsPerSeriesStep, measured on the engine's own
// statistics: TestCostModelHolds). The multipliers leave about a third
// over the measured peak, on top of the budget's own room under the
// server's limit: a uniform 3 would shard a week of 1,000 GPUs that fits
// unsharded (30M of 50M), and a sharded run is the slower one (its
// namespace shards repeat the workload scans).
func perSeriesStep(sch signals.Schema) float64 { return sch.Traits().PointsPerSeriesStep }

// perAllocationStep is the namespace queries' multiplier per allocation
// step (planNamespaces): their heaviest, "workload utilization p95",
// holds 2 points per allocation and step (its allocation and utilization
// series).
const perAllocationStep = 3

// ErrBudget is returned when one node, or one namespace, alone needs more
// samples per query than the budget: sharding cannot split it further.
var ErrBudget = errors.New("over the sample budget of one query")

// Sharding says how to keep each query within a server's sample limit.
type Sharding struct {
	// MaxSamples is the budget of one query, in samples (points held at
	// once); zero means DefaultMaxSamples. Set it to the server's limit
	// (Prometheus --query.max-samples, VictoriaMetrics
	// -search.maxSamplesPerQuery) or the embedded engine's.
	MaxSamples int
	// MaxNodes and MaxNamespaces, when positive, cap the nodes and
	// namespaces of one shard whatever the budget: a test's way of
	// forcing small shards.
	MaxNodes, MaxNamespaces int
	// MaxPods, when positive, splits a namespace with more pods than
	// that into ranges of its pods, as one over the budget is split.
	MaxPods int
	// Progress, when set, is told after each shard how many are done.
	Progress func(done, total int)
	// Flag names the setting that raises MaxSamples, for ErrBudget's
	// message (the CLI's flag); empty means "Sharding.MaxSamples".
	Flag string
	// TimelinePoints, when positive, also folds each namespace's use over
	// time, in about that many buckets, into Result.Timeline, from the
	// passes' own values (timelineFold, a view of shareFold): no read of
	// its own.
	TimelinePoints int
	// Lanes also folds each allocation's use at every step into
	// Result.Usage, for the consolidation plan, from the passes' own
	// values (laneFold, a view of shareFold): no read of its own. It also
	// folds each GPU's and allocation's hours for the hourly
	// ledger (hourFold, fleet.AllocationHours), as small a fold.
	Lanes bool
}

func (s Sharding) flag() string { return cmp.Or(s.Flag, "Sharding.MaxSamples") }

func (s Sharding) budget() int {
	if s.MaxSamples > 0 {
		return s.MaxSamples
	}
	return DefaultMaxSamples
}

// shardLabels are the raw labels a schema's series carry their node and
// their tenant's namespace in, first non-empty wins, as the schemas read
// them: dcgm-exporter's norm lets hostname override Hostname, and both
// schemas read a relabelled tenant (honorLabels: false) from
// exported_namespace (signals/native/relabel.go). kube-state-metrics' series keep
// their own namespace label, as ownerQueries read it.
//
// tenantExact says a namespace matcher on every selector of the
// namespace queries changes nothing but which workloads they return
// (signals.Traits.TenantExact); where it is false the namespace queries
// run unsharded.
func shardLabels(sch signals.Schema) (node, namespace []string, tenantExact bool) {
	// The pod is read as the namespace is (podLabels).
	t := sch.Traits()
	return t.HostLabels, []string{signals.Exported(signals.LabelNamespace), signals.LabelNamespace}, t.TenantExact
}

// podLabels are the raw labels of a tenant's pod, first non-empty wins.
var podLabels = []string{signals.Exported(signals.LabelPod), signals.LabelPod}

// namespaceQuery says a query's answer is keyed by workload or pod owner:
// its per-step figures do not compose across nodes, since a workload's
// pods span nodes, but they do across namespaces, which no workload spans.
func namespaceQuery(name string, nsQueries []namedQuery) bool {
	return slices.ContainsFunc(nsQueries, func(q namedQuery) bool { return q.name == name })
}

// unit is one node or namespace with its estimated samples per query.
type unit struct {
	name   string
	weight float64
}

// plan cuts units, sorted by name, into adjacent ranges each within
// budget and holding at most maxUnits units. The first range is open
// below and the last above, so values the probe did not see still belong
// to a shard.
func plan(units []unit, budget float64, maxUnits int, what, flag string) ([]keyRange, error) {
	slices.SortFunc(units, func(x, y unit) int { return cmp.Compare(x.name, y.name) })
	var out []keyRange
	cur := keyRange{}
	var sum float64
	n := 0
	for _, u := range units {
		if u.weight > budget {
			return nil, fmt.Errorf("%s %q alone needs about %.0f samples per query, %w of %d: raise %s", what, u.name, u.weight, ErrBudget, int(budget), flag)
		}
		if n > 0 && (sum+u.weight > budget || (maxUnits > 0 && n >= maxUnits)) {
			cur.hi, cur.hasHi = u.name, true
			out = append(out, cur)
			cur = keyRange{lo: u.name, hasLo: true}
			sum, n = 0, 0
		}
		sum += u.weight
		n++
	}
	return append(out, cur), nil
}

// AnalyzeSharded is Analyze with every query kept within sh's budget: the
// analysis of every series of src (AnalyzeScoped with the zero Scope).
func AnalyzeSharded(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, sh Sharding) (*fleet.Result, error) {
	return AnalyzeScoped(ctx, src, Scope{}, sch, w, sh)
}

// AnalyzeScoped is the analysis of sc's series of src (one cluster's, by
// Cluster) with every query kept within sh's budget. A probe finds the
// fleet's GPUs and allocations per node; when the whole fleet fits, the
// query set runs as Analyze runs it. Otherwise the GPU- and
// allocation-level queries run once per range of nodes, and the workload
// and owner queries once per range of tenant namespaces, sized from the
// allocations the node shards found: each shard reads sc narrowed to its
// range. Each shard's answers are applied to one analysis, whose rows no
// two shards share.
func AnalyzeScoped(ctx context.Context, src source.Source, sc Scope, sch signals.Schema, w fleet.Window, sh Sharding) (*fleet.Result, error) {
	w, err := w.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis window: %w", err)
	}
	// The passes read each signal at every step of the window: a source
	// that cannot is refused here, before the probe, by name.
	if _, err := rangeQuerier(src); err != nil {
		return nil, err
	}
	a := newAnalysis(sch, w)
	a.shares = newShareFold(w, sh)
	if err := a.missingSignals(ctx, src, sch); err != nil {
		return nil, err
	}
	budget := float64(sh.budget())
	steps := float64(w.ExpectedSteps())

	nodes, err := a.probe(ctx, src, sc, sch)
	if err != nil {
		return nil, err
	}
	var total float64
	for i := range nodes {
		nodes[i].weight *= steps * perSeriesStep(sch)
		total += nodes[i].weight
	}
	if total <= budget && sh.MaxNodes <= 0 && sh.MaxNamespaces <= 0 && sh.MaxPods <= 0 {
		a.res.Shards = 1
		if err := a.run(ctx, src, sc, a.passQueries(sch), w, nil); err != nil {
			return nil, err
		}
		a.finish()
		return a.res, nil
	}

	// The node shards run the passes. The namespace shards run the
	// workload scans: a pass aggregates a workload's pods in Go at every
	// step, across nodes that different node shards read, so its workload
	// figures are partial and are dropped before the namespace shards run,
	// whereas a scan's are whole inside one namespace shard.
	all := a.passQueries(sch)
	nodeLabels, nsLabels, tenantExact := shardLabels(sch)
	nsQs := slices.Concat(a.workloadQueries(sch), a.ownerQueries(sch, true))
	var nodeQs []namedQuery
	for _, q := range all {
		if !namespaceQuery(q.name, nsQs) {
			nodeQs = append(nodeQs, q)
		}
	}
	nodeRanges, err := plan(nodes, budget, sh.MaxNodes, "node", sh.flag())
	if err != nil {
		return nil, err
	}
	done, shards := 0, len(nodeRanges)+1
	release := releaseOf(src)
	var mu sync.Mutex
	tick := func() {
		mu.Lock()
		done++
		if sh.Progress != nil {
			sh.Progress(done, shards)
		}
		mu.Unlock()
	}
	err = runShards(ctx, nodeRanges, func(ctx context.Context, r keyRange) error {
		shard := sc.within(func(metric string) []restriction {
			if metric == "up" || strings.HasPrefix(metric, "kube_") {
				return nil
			}
			return []restriction{{raw: nodeLabels, r: r}}
		})
		err := a.run(ctx, src, shard, nodeQs, w, &mu)
		release()
		tick()
		return err
	})
	if err != nil {
		return nil, err
	}

	mu.Lock()
	clear(a.workloadSteps)
	mu.Unlock()

	// The node shards found every allocation at full resolution: the
	// namespace shards are sized from their steps.
	nsShards := []nsShard{{}}
	if tenantExact {
		if nsShards, err = a.planNamespaces(budget, sh); err != nil {
			return nil, err
		}
	}
	mu.Lock()
	shards = len(nodeRanges) + len(nsShards)
	mu.Unlock()
	err = runShards(ctx, nsShards, func(ctx context.Context, r nsShard) error {
		shard := sc.within(func(metric string) []restriction {
			switch {
			case metric == "up":
				return nil
			case strings.HasPrefix(metric, "kube_"):
				// Owner series name their object in their own label
				// (pod, replicaset, job_name): only the namespace holds.
				return []restriction{{raw: []string{signals.LabelNamespace}, r: r.ns}}
			}
			return []restriction{{raw: nsLabels, r: r.ns}, {raw: podLabels, r: r.pods}}
		})
		err := a.run(ctx, src, shard, nsQs, w, &mu)
		release()
		tick()
		return err
	})
	if err != nil {
		return nil, err
	}
	a.res.Shards = shards
	a.finish()
	return a.res, nil
}

// releaseOf gives back, once a shard is read, the process's resident
// pages of the store's files that the shard read (source.RawStore.
// Release): a shard's series are not read again, and without it the
// process holds every chunk of the window by its end (2.4 GiB of a
// 10,000-GPU week, beside the analysis's own memory).
func releaseOf(src source.Source) func() {
	if rr, ok := src.(source.RawReader); ok {
		if st, ok := rr.RawSamples(); ok && st.Release != nil {
			return st.Release
		}
	}
	return func() {}
}

// runShards runs each range, shardConcurrency at a time; the first error
// cancels the rest and is returned.
func runShards[R any](ctx context.Context, ranges []R, run func(context.Context, R) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, shardConcurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, r := range ranges {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := run(ctx, r); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// probeSteps is how many instants of the window the probe looks at.
const probeSteps = 30

// probe counts, per node, the most GPUs and allocations seen at once over
// the window, at a coarse step: two instant queries whose cost is about
// 1/300 of one analysis query's at a week of minutes. A node that exists
// only between the probe's steps is missed here, and still analysed by
// the shard whose range holds its name.
func (a *analysis) probe(ctx context.Context, src source.Source, sc Scope, sch signals.Schema) ([]unit, error) {
	step := max(a.w.Step, (a.w.Duration() / probeSteps).Truncate(time.Second))
	count := func(expr string) string {
		return signals.Subquery(signals.MaxOverTime, signals.CountBy([]string{signals.LabelNode}, expr), a.w.SubqueryRange(), promDuration(step))
	}
	perNode := map[string]float64{}
	for _, q := range []string{count(sch.GPU()), count(sch.Allocation())} {
		vec, raw, err := instantQuery(ctx, src, sc, "shard probe", q, a.w.End)
		if err != nil {
			return nil, fmt.Errorf("analysis query \"shard probe\": %w", err)
		}
		if raw {
			a.res.RawQueries++
		}
		a.res.QueryCount++
		for _, s := range vec {
			if !math.IsNaN(float64(s.Value)) {
				perNode[string(s.Metric[signals.LabelNode])] += float64(s.Value)
			}
		}
	}
	units := make([]unit, 0, len(perNode))
	for n, v := range perNode {
		units = append(units, unit{n, v})
	}
	return units, nil
}

// run evaluates qs over sc's series and applies their answers; mu, when
// set, serialises the applying with the other shards'.
func (a *analysis) run(ctx context.Context, src source.Source, sc Scope, qs []namedQuery, w fleet.Window, mu *sync.Mutex) error {
	return runQueries(ctx, src, sc, qs, w, func(q namedQuery, vec model.Vector, pass passAnswer, raw bool) {
		if mu != nil {
			mu.Lock()
			defer mu.Unlock()
		}
		a.res.QueryCount++
		if raw {
			a.res.RawQueries++
		}
		if q.series != nil {
			a.res.Passes++
			if raw {
				a.res.RawPasses++
			}
		}
		if q.series != nil {
			q.series(pass.series)
			return
		}
		for _, s := range vec {
			if math.IsNaN(float64(s.Value)) {
				continue
			}
			q.apply(s)
		}
	})
}
