package reclaim

import (
	"context"
	"strings"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/vocab"
)

// FromSession is serve's analysis, as the reclaimer reads it: open is
// called once per cycle, with the window ending now (idle.for long).
func FromSession(open func(ctx context.Context) (*session.Session, error), cluster string) func(context.Context) Analysis {
	return func(ctx context.Context) Analysis {
		s, err := open(ctx)
		if err != nil {
			return Analysis{Err: err}
		}
		defer s.Close()
		a, err := s.Analyze(ctx, 0)
		if err != nil {
			return Analysis{Err: err}
		}
		out := FromPipeline(a, cluster)
		// An unread reading of idle is a failed analysis, not an idle one.
		if out.MemoryActivity, err = s.MemoryActivity(ctx); err != nil {
			return Analysis{Err: err}
		}
		return out
	}
}

// ClusterNotRead is the part an analysis without the cluster's own view
// lacks: the workloads' owners are guessed.
const ClusterNotRead = "the cluster was not read: workloads' owners are unconfirmed"

// FromPipeline reads one analysis: its findings, its stale nodes (as
// serve's keepStale does) and what makes it partial.
func FromPipeline(a *pipeline.Analysis, cluster string) Analysis {
	w := a.Current.Window
	out := Analysis{End: w.End, Window: w.End.Sub(w.Start), Cluster: cluster, Stale: map[string]bool{}}
	if a.Findings != nil {
		out.Findings = a.Findings.Findings
		for _, s := range a.Findings.Skipped {
			// Only the kinds the reclaimer reads: another kind's skip
			// (an untainted-node check without node access) is no gap in
			// the idle verdicts.
			if strings.HasPrefix(s, vocab.KindIdleAllocation) || strings.HasPrefix(s, vocab.KindUnderusedGPU) {
				out.Partial = append(out.Partial, "not checked: "+s)
			}
		}
	} else {
		out.Partial = append(out.Partial, "no findings")
	}
	// The cluster's own view is what ties a pod to its Deployment: a
	// part of it unread (RBAC denied pods or ReplicaSets) leaves owners
	// guessed from pod names, and a guess is not acted on.
	switch inv := a.InventoryOf(cluster); {
	case inv == nil || !inv.Available:
		out.Partial = append(out.Partial, ClusterNotRead)
	default:
		for _, s := range inv.Skipped {
			out.Partial = append(out.Partial, "not read from the cluster: "+s)
		}
	}
	for _, n := range a.Current.Stale() {
		if n.Cluster == cluster {
			out.Stale[n.Node] = true
		}
	}
	return out
}
