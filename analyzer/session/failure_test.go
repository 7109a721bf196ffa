package session

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
)

// TestClassify: each failure a script tells apart by the exit code, and
// the message that names the flag behind a bad input, written by hand.
func TestClassify(t *testing.T) {
	engine := errors.New("query processing would load too many samples into memory in query execution")
	for _, tc := range []struct {
		name    string
		err     error
		dataDir bool
		want    Failure
		msg     string
	}{
		{"no source", &InputError{Input: InputSource, Err: ErrNoSource}, false, BadInput,
			"no metrics source: give --prometheus-url URL or --data-dir DIR"},
		{"two sources", &InputError{Input: InputSource, Err: ErrTwoSources}, false, BadInput,
			"--prometheus-url and --data-dir are exclusive: give one"},
		{"schema", &InputError{Input: InputSchema, Err: errors.New(`"dgcm" is not a schema`)}, false, BadInput,
			`--schema: "dgcm" is not a schema`},
		{"data dir", &DataDirError{Err: errors.New("/x: not a TSDB")}, true, BadData, "--data-dir: /x: not a TSDB"},
		{"budget", fmt.Errorf("allocation pass: %w", query.ErrBudget), false, BadData,
			"allocation pass: over the sample budget of one query"},
		{"no data", fmt.Errorf("cluster a: %w", pipeline.ErrNoData), false, NoData, "cluster a: no GPU data in the window"},
		{"no pool", plan.ErrNoPool, false, NoData, plan.ErrNoPool.Error()},
		{"replay", plan.ErrReplay, false, Failed, "the plan failed its replay; no plan is printed"},
		{"unreachable", &source.RemoteError{Source: "http://p:9090", Op: "query", Msg: "connection refused"}, false, Unreachable, ""},
		{"no cluster", ErrNoCluster, false, NoCluster, "no cluster access"},
		{"engine limit in a directory", engine, true, BadData, engine.Error() + " (raise --query.max-samples, or shorten --since)"},
		{"engine limit remote", engine, false, Failed, engine.Error()},
		{"anything else", errors.New("boom"), false, Failed, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Classify(tc.err, tc.dataDir)
			if got != tc.want {
				t.Errorf("Classify = %d, want %d", got, tc.want)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err.Error(), tc.msg)
			}
			var de *DataDirError
			if tc.want != BadInput && !errors.As(tc.err, &de) && !errors.Is(err, tc.err) {
				// A bad input and a data directory are shown by the flag
				// and their cause; every other error is kept for errors.Is.
				t.Errorf("the error shown no longer wraps %v", tc.err)
			}
		})
	}
}
