package query

import (
	"context"
	"reflect"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// AnalyzeScans and AnalyzePasses are Analyze with one query set or the
// other, for TestScenarioPassesMatchScans (package query_test, which may
// import the simulator). The scans are asked of the store's PromQL engine
// and the passes read from raw samples (analyzer/scan), so that the test
// holds both the query sets and the two paths to each other.
func AnalyzeScans(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window) (*fleet.Result, error) {
	return analyze(ctx, promqlOnly(src), sch, w, (*analysis).scanQueries)
}

func AnalyzePasses(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window) (*fleet.Result, error) {
	return analyze(ctx, src, sch, w, (*analysis).passQueries)
}

// ResultDiff lists where got differs from want (resultDiff), the query
// counts aside.
func ResultDiff(want, got *fleet.Result) []string {
	g := *got
	g.QueryCount = want.QueryCount
	return resultDiff("Result", reflect.ValueOf(*want), reflect.ValueOf(g))
}
