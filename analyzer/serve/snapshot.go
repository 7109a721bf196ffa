package serve

import (
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/report"
)

// Result is one analysis, as the caller's Analyze returns it.
type Result struct {
	Findings []findings.Finding
	Report   *report.Report
	// Queries is how many PromQL queries the analysis issued.
	Queries int
	// Stale are the nodes whose data stops before the window's end
	// (fleet.Result.Stale), and AllStale says every node's does: their
	// findings are not judged on current data, and the service keeps
	// the ones it served before for them (keepStale).
	Stale    []fleet.NodeRef
	AllStale bool
}

// snapshot is everything served from one successful analysis, built
// before it is published and never changed after.
type snapshot struct {
	at       time.Time
	window   report.Window
	set      *metrics.Set
	report   []byte
	findings []byte
	// advice are the findings served, for the next analysis to keep those
	// of the nodes whose data stopped.
	advice []findings.Finding
}
