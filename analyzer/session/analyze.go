package session

import (
	"context"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/query"
)

// maxSamplesFlag names the setting that raises the sample budget, in the
// errors of an analysis that cannot be split under it.
const maxSamplesFlag = "--query.max-samples"

// Analyze analyses the window and the one before it; timeline asks for
// that many points of utilization over time (0: none). The schema it used
// is kept for the session's later use cases.
func (s *Session) Analyze(ctx context.Context, timeline int) (*pipeline.Analysis, error) {
	s.obs.Begin("analyzing")
	defer s.obs.End()
	a, err := pipeline.Run(ctx, pipeline.Options{
		Source: s.src, Schema: s.schema, Start: s.window.Start, End: s.window.End, Step: s.window.Step,
		Inventory: s.inv, Findings: &s.thresholds, Prices: s.prices, TimelinePoints: timeline, Progress: s.obs.Progress,
		Sharding: query.Sharding{MaxSamples: s.cfg.MaxSamples, Flag: maxSamplesFlag, Progress: s.obs.Shards},
	})
	if err != nil {
		return nil, err
	}
	if s.schema == nil {
		s.schema = a.Schema
	}
	a.Notes = append(a.Notes, s.clusterNotes...)
	return a, nil
}
