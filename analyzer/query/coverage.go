package query

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// missingSignals records which of the schema's optional signals have none
// of their fields in the window (Result.Missing), and says so in a note:
// on a stock GPU Operator install dcgm-exporter emits only its default
// counters file, and a signal read from a field it leaves out is unknown,
// not zero.
// The names listed are kept (analysis.metricNames): a query over a metric
// the store does not hold is skipped (restartQueries).
func (a *analysis) missingSignals(ctx context.Context, src source.Source, sch signals.Schema) error {
	opt, ok := sch.(signals.OptionalSignals)
	if !ok {
		// For the restarts' gate alone, which a listing that fails or
		// warns must not fail: the names are the whole store's, not the
		// analysis's scope (Thanos Query warns of a store of another
		// cluster that is down, e2e TestThanosQuery), and without them
		// every query runs.
		if names, err := src.MetricNames(ctx, a.w.Start, a.w.End); err == nil {
			a.metricNames = names
		}
		return nil
	}
	names, err := src.MetricNames(ctx, a.w.Start, a.w.End)
	if err != nil {
		return fmt.Errorf("listing the metric names in the window: %w", err)
	}
	a.metricNames = names
	signals := opt.Optional()
	for _, sig := range slices.Sorted(maps.Keys(signals)) {
		fields := signals[sig]
		if slices.ContainsFunc(fields, func(f string) bool { return slices.Contains(names, f) }) {
			continue
		}
		if a.res.Missing == nil {
			a.res.Missing = map[string][]string{}
		}
		a.res.Missing[sig] = fields
		a.missingNotes = append(a.missingNotes, fmt.Sprintf("no %s series in the window (outside the GPU Operator's default counters file, dcp-metrics-included.csv): %s is unknown, not zero",
			strings.Join(fields, " or "), sig))
	}
	return nil
}
