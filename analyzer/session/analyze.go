package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/signals"
)

// maxSamplesFlag names the setting that raises the sample budget, in the
// errors of an analysis that cannot be split under it.
const maxSamplesFlag = "--query.max-samples"

// Analyze analyses the window and the one before it; timeline asks for
// that many points of utilization over time (0: none).
func (s *Session) Analyze(ctx context.Context, timeline int) (*pipeline.Analysis, error) {
	rd, err := s.analyze(ctx, readOptions{timeline: timeline})
	if err != nil {
		return nil, err
	}
	return rd.Analysis, nil
}

// read is one read of the window, which the use case that made it passes
// on to its later steps (PlanOptions.from): the analysis, and the cluster
// label's values over the current window that the analysis read, so that
// the plan made from it does not read them again: they read every sample
// of a series per GPU.
type read struct {
	*pipeline.Analysis
	// clusters are the values (query.ClusterValues); clustersRead is false where
	// the analysis read none (no --cluster-label).
	clusters     []string
	clustersRead bool
}

// readOptions are what one read of the window folds beside the analysis.
type readOptions struct {
	timeline int
	// lanes folds every allocation's use at every step, for a plan made
	// from the same read (Report, Plan): the caller passes the analysis
	// on (PlanOptions.from), so the window is read once for both.
	lanes bool
	// currentOnly reads the current window only
	// (pipeline.Options.CurrentOnly), for a plan's findings.
	currentOnly bool
}

func (s *Session) analyze(ctx context.Context, o readOptions) (*read, error) {
	timeline := o.timeline
	s.obs.Begin("analyzing")
	defer s.obs.End()
	rd := &read{}
	clusterValues := func(ctx context.Context, sch signals.Schema) ([]string, error) {
		cs, err := query.ClusterValues(ctx, s.src, sch, s.window, s.cfg.ClusterLabel)
		rd.clusters, rd.clustersRead = slices.Clone(cs), err == nil
		return cs, err
	}
	a, err := pipeline.Run(ctx, pipeline.Options{
		Source: s.src, Schema: s.schema, Detected: s.detected, DetectErr: s.schemaErr, DCGMFields: s.dcgmFields, Start: s.window.Start, End: s.window.End, Step: s.window.Step,
		Inventory: s.inv, Findings: &s.thresholds, Prices: s.prices, TimelinePoints: timeline, Lanes: o.lanes, CurrentOnly: o.currentOnly, Progress: s.obs.Progress,
		Sharding:     s.sharding(false),
		ClusterLabel: s.cfg.ClusterLabel, Fleet: s.fleet, CurrentClusters: clusterValues,
	})
	if err != nil {
		return nil, err
	}
	rd.Analysis = a
	// Which path read the data: raw samples evaluated here (analyzer/scan),
	// or the store's PromQL engine (a store without remote read, or an
	// expression the scan does not evaluate).
	path := "raw samples"
	switch {
	case a.Current.RawPasses == 0:
		path = "PromQL"
	case a.Current.RawPasses < a.Current.Passes:
		path = "raw samples and PromQL"
	}
	s.cfg.Logger.Info("analysis read", "source", a.Source, "path", path, "passes", a.Current.Passes,
		"raw passes", a.Current.RawPasses, "queries", a.Current.QueryCount)
	s.warnStale(a.Current)
	if a.Clusters == nil {
		// One cluster's series: what several contexts read is joined
		// with the primary's inventory, and the notes say why.
		why := "no cluster label was given (--cluster-label)"
		if s.cfg.ClusterLabel != "" {
			why = fmt.Sprintf("the store's series carry no %q label", s.cfg.ClusterLabel)
		}
		a.Notes = append(a.Notes, s.notesWithout(why)...)
	} else {
		a.Notes = append(a.Notes, s.absentClusters(a.Clusters)...)
	}
	s.priceNotes(a)
	return rd, nil
}

// sharding is every analysis's: within the sample budget, its shards
// told to the observer; lanes folds the allocations' use for a plan.
func (s *Session) sharding(lanes bool) query.Sharding {
	return query.Sharding{MaxSamples: s.cfg.MaxSamples, Flag: maxSamplesFlag, Progress: s.obs.Shards, Lanes: lanes}
}

// notesWithout are the cluster notes of a use case that cannot join each
// cluster with its own inventory, for the reason why.
func (s *Session) notesWithout(why string) []string {
	if s.primaryNote == "" {
		return slices.Clone(s.clusterNotes)
	}
	return append([]string{s.primaryNote + ": " + why}, s.clusterNotes...)
}

// absentClusters name the clusters read through a context whose label
// value no series in the store carries: a CONTEXT=CLUSTER mapping that
// does not match the store's values leaves that cluster out of every
// figure, which must not pass unsaid.
func (s *Session) absentClusters(inStore []string) []string {
	var notes []string
	for _, m := range s.members {
		if !slices.Contains(inStore, m.Cluster) {
			notes = append(notes, fmt.Sprintf("%s has no series in the store with %s=%q (the store has %s): map its context with CONTEXT=CLUSTER",
				m, s.cfg.ClusterLabel, m.Cluster, strings.Join(inStore, ", ")))
		}
	}
	return notes
}
