package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/signals"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/query"
)

// PlanOptions narrow and shape a plan.
type PlanOptions struct {
	// Models keeps these GPU models' pools (catalog key or product name);
	// empty keeps all.
	Models []string
	// MaxReplicas caps time-slicing replicas per GPU; 0 takes the
	// thresholds' recommend.max_replicas.
	MaxReplicas int
	// NodeGPUs is the GPUs of a node, for pools whose node shape the
	// metrics do not tell (no node label); 0 reads it from the metrics.
	NodeGPUs int
	// AsIs plans today's fleet; without it the plan is of the fleet after
	// the week's advice: what recommend releases is not planned
	// (plan.ApplyAdvice).
	AsIs bool
	// advice are the findings of the analysis the plan is made from,
	// where the caller has them (Report); nil has Plan analyse the
	// window for them.
	advice []findings.Finding
	// from is the read that analysed the window and folded its use
	// (readOptions.lanes), where the caller has one (Report): the plan is
	// made from it, not from a second read.
	from *read
}

// Plan reads every workload's use at every step of the window and plans
// each pool on it. Its errors wrap plan.ErrNoData (nothing to plan) and
// plan.ErrReplay (the layout failed its replay).
func (s *Session) Plan(ctx context.Context, o PlanOptions) (*plan.Plan, error) {
	if o.MaxReplicas != 0 && (o.MaxReplicas < 2 || o.MaxReplicas > 48) {
		return nil, &InputError{Input: InputReplica, Err: fmt.Errorf("%d, want 2..48 (48 is the device plugin's limit)", o.MaxReplicas)}
	}
	if o.NodeGPUs < 0 {
		return nil, &InputError{Input: InputNodeGPUs, Err: fmt.Errorf("%d, want a positive GPU count", o.NodeGPUs)}
	}
	if !o.AsIs && o.advice == nil {
		// The advice is the analysis's findings: the analysis that gives
		// them also folds the use the plan is made from, so the window is
		// read once for both, as a report reads it; the window before it,
		// which only a change needs, is not read.
		if s.schemaErr != nil {
			return nil, schemaError(s.schemaErr, plan.ErrNoData, "plan")
		}
		rd, err := s.analyze(ctx, readOptions{lanes: true, currentOnly: true})
		if err != nil {
			return nil, planError(err)
		}
		o.advice, o.from = rd.Findings.Findings, rd
	}
	s.obs.Begin("planning")
	defer s.obs.End()
	k := s.scopeOf(o.from)
	clusters, err := k.clusterValues(ctx, "plan")
	if err != nil {
		return nil, err
	}
	if clusters != nil {
		return s.planClusters(ctx, k, o, clusters)
	}
	s.obs.Progress(0, 2)
	data, err := s.fetch(ctx, k, "", query.Scope{}, s.inv)
	if err != nil {
		return nil, err
	}
	s.obs.Progress(1, 2)
	if data.Pools, err = selectPools(data.Pools, o.Models); err != nil {
		return nil, err
	}
	p, err := s.makePlan(data, o, "", s.inv)
	if err != nil {
		return nil, err
	}
	s.obs.Progress(2, 2)
	p.Notes = append(p.Notes, s.notesWithout(s.unclustered())...)
	return p, nil
}

// planClusters plans each cluster of a shared store apart, each from its
// own series (query.Cluster) and with its own inventory: a workload
// moves only among its own cluster's nodes, so the plan of each cluster
// is the one its own Prometheus would give. One cluster at a time bounds
// the memory by the largest cluster. A cluster with nothing to plan is
// said in the notes; only a fleet with nothing to plan is an error.
func (s *Session) planClusters(ctx context.Context, k *scope, o PlanOptions, clusters []string) (*plan.Plan, error) {
	var (
		parts   []plan.Clustered
		notes   []string
		have    []string
		matched = map[string]bool{}
		noPlan  error
	)
	s.obs.Progress(0, len(clusters))
	for i, c := range clusters {
		name := fleet.ClusterName(c)
		inv := s.fleet.Of(c, len(clusters))
		data, err := s.fetch(ctx, k, c, query.Cluster(s.cfg.ClusterLabel, c), inv)
		if err == nil {
			for _, p := range data.Pools {
				have = append(have, p.Model.Key)
			}
			var found []string
			data.Pools, found = matchPools(data.Pools, o.Models)
			for _, m := range found {
				matched[m] = true
			}
			if len(o.Models) > 0 && len(data.Pools) == 0 {
				s.obs.Progress(i+1, len(clusters))
				continue
			}
		}
		var p *plan.Plan
		if err == nil {
			p, err = s.makePlan(data, o, c, inv)
		}
		switch {
		case errors.Is(err, plan.ErrNoData) || errors.Is(err, plan.ErrNoPool):
			notes = append(notes, name+": nothing to plan: "+err.Error())
			if noPlan == nil {
				noPlan = fmt.Errorf("%s: %w", name, err)
			}
		case err != nil:
			return nil, fmt.Errorf("%s: %w", name, err)
		default:
			for _, sk := range inv.Skipped {
				if !inv.Available {
					p.Notes = append(p.Notes, "not read from the cluster: "+sk)
				}
			}
			parts = append(parts, plan.Clustered{Cluster: c, Plan: p})
		}
		s.obs.Progress(i+1, len(clusters))
	}
	for _, m := range o.Models {
		if !matched[m] {
			slices.Sort(have)
			return nil, &InputError{Input: InputModel, Err: fmt.Errorf("no GPUs of model %q in the window in any cluster (models there: %s; models the catalog does not know are not planned)",
				m, strings.Join(slices.Compact(have), ", "))}
		}
	}
	if len(parts) == 0 && noPlan != nil {
		return nil, noPlan
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no cluster has GPUs to plan", plan.ErrNoPool)
	}
	p := plan.MergeClusters(parts)
	p.Notes = append(p.Notes, notes...)
	p.Notes = append(p.Notes, s.absentClusters(clusters)...)
	return p, nil
}

// makePlan plans data's pools, their nodes' shape read from inv where it
// is available: cluster's fleet after the advice (o.advice), or today's
// with o.AsIs.
func (s *Session) makePlan(data *plan.Data, o PlanOptions, cluster string, inv *inventory.Inventory) (*plan.Plan, error) {
	var released []string
	if !o.AsIs {
		released = plan.ApplyAdvice(data, adviceOf(o.advice, cluster))
	}
	if inv.Available {
		plan.ShapeFromNodes(data.Pools, inv.Nodes)
	}
	for _, p := range data.Pools {
		if o.NodeGPUs > 0 && p.GPUsPerNode == 0 {
			p.GPUsPerNode, p.Nodes = o.NodeGPUs, (p.GPUsToday+o.NodeGPUs-1)/o.NodeGPUs
		}
	}
	t := s.thresholds
	pol := plan.DefaultPolicy()
	pol.MemoryMargin, pol.ComputeTarget, pol.MaxReplicas = t.Recommend.MemoryMargin, t.Recommend.ComputeTarget, t.Recommend.MaxReplicas
	if o.MaxReplicas != 0 {
		pol.MaxReplicas = o.MaxReplicas
	}
	p, err := plan.Make(data, pol, s.prices)
	if err != nil {
		return nil, err
	}
	p.AsIs, p.Released = o.AsIs, released
	if !inv.Available {
		p.Notes = append(p.Notes, "no cluster access: workloads are inferred from pod names")
	}
	return p, nil
}

// adviceOf are the recommendations of cluster's findings ("" where the
// store holds one cluster).
func adviceOf(fs []findings.Finding, cluster string) []*recommend.Recommendation {
	var out []*recommend.Recommendation
	for _, f := range fs {
		if f.Recommendation != nil && f.Cluster == cluster {
			out = append(out, f.Recommendation)
		}
	}
	return out
}

// planError is the error of the analysis a plan after the advice is made
// from: a window without GPU series is nothing to plan (plan.ErrNoData, as
// Plan's errors say), and still the analysis's no data.
func planError(err error) error {
	if errors.Is(err, pipeline.ErrNoData) && !errors.Is(err, plan.ErrNoData) {
		return fmt.Errorf("%w: %w", plan.ErrNoData, err)
	}
	return err
}

// scope is what a plan or a quota advice reads the store with, passed to
// each of its steps: the schema, and the cluster label's values over the
// window. Both come from the read the use case made, where it made one
// (Report, Plan after the advice); else the session's schema, and the
// values read where first needed and kept here for the steps after: the
// session keeps no values, so no use case depends on what another
// happened to read before it.
type scope struct {
	s            *Session
	from         *read
	schema       signals.Schema
	clusters     []string
	clustersRead bool // clusters holds the values, read
}

func (s *Session) scopeOf(from *read) *scope {
	k := &scope{s: s, from: from, schema: s.schema}
	if from != nil {
		k.schema, k.clusters, k.clustersRead = from.Schema, from.clusters, from.clustersRead
	}
	return k
}

// schemaFor is the scope's schema, or the session's failed detection
// where a step needs it; what names the use case in the error of a window
// without GPU series.
func (k *scope) schemaFor(what string) (signals.Schema, error) {
	if k.schema == nil {
		return nil, schemaError(k.s.schemaErr, plan.ErrNoData, what)
	}
	return k.schema, nil
}

// clusterValues are the cluster label values of a store of several
// clusters (or of one cluster named by the label), sorted; nil for a
// store without the label, or when no label is given. They are read
// once per use case, or not at all where its analysis read them: reading
// them reads every sample of a series per GPU.
func (k *scope) clusterValues(ctx context.Context, what string) ([]string, error) {
	s := k.s
	if s.cfg.ClusterLabel == "" {
		return nil, nil
	}
	if !k.clustersRead {
		sch, err := k.schemaFor(what)
		if err != nil {
			return nil, err
		}
		if k.clusters, err = query.ClusterValues(ctx, s.src, sch, s.window, s.cfg.ClusterLabel); err != nil {
			return nil, err
		}
		k.clustersRead = true
	}
	cs := k.clusters
	if len(cs) == 0 || len(cs) == 1 && cs[0] == "" {
		return nil, nil
	}
	return slices.Clone(cs), nil
}

// unclustered is why a use case over a store read as one cluster joins
// what several contexts read with the primary's inventory only.
func (s *Session) unclustered() string {
	if s.cfg.ClusterLabel == "" {
		return "no cluster label was given (--cluster-label)"
	}
	return fmt.Sprintf("the store's series carry no %q label", s.cfg.ClusterLabel)
}

// schemaError is the session's detection's error for a use case: Detect's bare
// error, "no metrics of any schema", wraps noData (the window is empty,
// or the wrong one).
func schemaError(err, noData error, what string) error {
	if errors.Unwrap(err) == nil {
		return fmt.Errorf("%w: no GPU series to %s from: %v", noData, what, err)
	}
	return err
}

// fetch is every workload's use at every step of the session's window in
// cluster (the store's series in scope sc; "" and the zero Scope where
// the store holds one cluster), its pods' workloads named by inv: the use
// from k's read where the use case made one that folded it (Report, Plan
// after the advice), else an analysis of the current window that folds it
// (query.Sharding.Lanes), sharded within the sample budget as every
// analysis is. Either way the window is read once, by the analysis.
func (s *Session) fetch(ctx context.Context, k *scope, cluster string, sc query.Scope, inv *inventory.Inventory) (*plan.Data, error) {
	var res *fleet.Result
	if k.from != nil {
		res = k.from.Usage(cluster)
	}
	if res == nil {
		sch, err := k.schemaFor("plan")
		if err != nil {
			return nil, err
		}
		if res, err = query.AnalyzeScoped(ctx, s.src, sc, sch, s.window, s.sharding(true)); err != nil {
			return nil, err
		}
	}
	t := s.thresholds
	d, err := plan.FromAnalysis(res, plan.Options{
		Workload:        inv.Workload,
		TrainingMinLoad: t.Training.MinLoad, TrainingMinHours: t.Training.MinHours,
		GrowthHorizon: time.Duration(t.OOMRisk.GrowthHorizonHours * float64(time.Hour)),
	})
	// The lanes hold what the plan needs: the per-step arrays go.
	res.Usage = nil
	return d, err
}

// matchPools keeps the pools models names (all where it names none), and
// says which of models matched one.
func matchPools(pools []*plan.Pool, models []string) (out []*plan.Pool, matched []string) {
	if len(models) == 0 {
		return pools, nil
	}
	for _, m := range models {
		k := slices.IndexFunc(pools, func(p *plan.Pool) bool {
			return strings.EqualFold(p.Model.Key, m) || strings.EqualFold(p.Product, m)
		})
		if k < 0 {
			continue
		}
		matched = append(matched, m)
		if !slices.Contains(out, pools[k]) {
			out = append(out, pools[k])
		}
	}
	return out, matched
}

// selectPools keeps the pools models names; a name that matches none is
// an input error naming the models there are.
func selectPools(pools []*plan.Pool, models []string) ([]*plan.Pool, error) {
	if len(models) == 0 {
		return pools, nil
	}
	var out []*plan.Pool
	var have []string
	for _, p := range pools {
		have = append(have, p.Model.Key)
	}
	for _, m := range models {
		k := slices.IndexFunc(pools, func(p *plan.Pool) bool {
			return strings.EqualFold(p.Model.Key, m) || strings.EqualFold(p.Product, m)
		})
		if k < 0 {
			return nil, &InputError{Input: InputModel, Err: fmt.Errorf("no GPUs of model %q in the window (models there: %s; models the catalog does not know are not planned)", m, strings.Join(have, ", "))}
		}
		if !slices.Contains(out, pools[k]) {
			out = append(out, pools[k])
		}
	}
	return out, nil
}
