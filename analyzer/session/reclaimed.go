package session

import (
	"context"
	"fmt"
	"math"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/signals"
)

// Reclaimed is what gpulens reclaim did in the session's window, read
// from its own series in the store (signals.ReclaimActions and the
// rest), for the report's "Reclaim (dry run)" section; nil where the
// store holds none of them (the reclaimer did not run, which is not a
// reclaimer that reclaimed nothing). A store that cannot answer is said
// in the section's note: the report's figures do not depend on it. The
// series are summed over every cluster of the store.
//
// It is its own read, after the analysis's, which Report makes for every
// caller (gpulens report, serve, the demo): a report sends the analysis's
// queries and these only (TestReportReadsTheWindowOnce).
func (s *Session) Reclaimed(ctx context.Context) *report.ReclaimPreview {
	rng := promdur.Format(s.window.End.Sub(s.window.Start))
	read := func(q string) (float64, bool, error) {
		v, err := s.src.Query(ctx, q, s.window.End)
		if err != nil || len(v) == 0 {
			return 0, false, err
		}
		return float64(v[0].Value), true, nil
	}
	unread := func(err error) *report.ReclaimPreview {
		return &report.ReclaimPreview{ReclaimedNote: fmt.Sprintf("What gpulens reclaim did in the window is unknown: its series could not be read: %v.", err)}
	}
	n, ok, err := read(signals.ReclaimRan(rng))
	switch {
	case err != nil:
		return unread(err)
	case !ok || n == 0:
		return nil
	}
	var w report.ReclaimedWindow
	for _, f := range []struct {
		q   string
		set func(float64)
	}{
		// increase() extrapolates to the window's edges: a count of
		// workloads is the nearest whole one.
		{signals.ReclaimActions(rng, signals.ReclaimResultSuccess), func(v float64) { w.Workloads = int(math.Round(v)) }},
		{signals.ReclaimActions(rng, signals.ReclaimResultDryRun), func(v float64) { w.DryRunWorkloads = int(math.Round(v)) }},
		{signals.ReclaimGPUHours(rng), func(v float64) { w.GPUHours = v }},
		{signals.ReclaimUSD(rng), func(v float64) { w.USD = v }},
	} {
		v, _, err := read(f.q)
		if err != nil {
			return unread(err)
		}
		f.set(v)
	}
	return &report.ReclaimPreview{Reclaimed: &w}
}
