package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/plan"
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
	s.obs.Begin("planning")
	defer s.obs.End()
	s.obs.Progress(0, 2)
	data, err := s.fetch(ctx)
	if err != nil {
		return nil, err
	}
	s.obs.Progress(1, 2)
	if data.Pools, err = selectPools(data.Pools, o.Models); err != nil {
		return nil, err
	}
	if s.inv.Available {
		plan.ShapeFromNodes(data.Pools, s.inv.Nodes)
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
	s.obs.Progress(2, 2)
	if !s.inv.Available {
		p.Notes = append(p.Notes, "no cluster access: workloads are inferred from pod names")
	}
	p.Notes = append(p.Notes, s.notesWithout("the plan is not yet made per cluster")...)
	return p, nil
}

// fetch reads every workload's use at every step of the session's window.
func (s *Session) fetch(ctx context.Context) (*plan.Data, error) {
	sch, err := s.resolveSchema(ctx)
	if err != nil {
		if errors.Unwrap(err) == nil {
			// Detect's bare error is "no metrics of any schema": the
			// window is empty, or the wrong one.
			return nil, fmt.Errorf("%w: no GPU series to plan from: %v", plan.ErrNoData, err)
		}
		return nil, err
	}
	t := s.thresholds
	return plan.Fetch(ctx, s.src, sch, plan.FetchOptions{
		Window: s.window, Workload: s.inv.Workload,
		TrainingMinLoad: t.Training.MinLoad, TrainingMinHours: t.Training.MinHours,
		GrowthHorizon: time.Duration(t.OOMRisk.GrowthHorizonHours * float64(time.Hour)),
	})
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
