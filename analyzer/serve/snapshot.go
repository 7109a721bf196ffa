package serve

import (
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/report"
)

// Result is one analysis, as the caller's Analyze returns it.
type Result struct {
	Findings []findings.Finding
	Report   *report.Report
	// Queries is how many PromQL queries the analysis issued.
	Queries int
}

// snapshot is everything served from one successful analysis, built
// before it is published and never changed after.
type snapshot struct {
	at       time.Time
	window   report.Window
	set      *metrics.Set
	report   []byte
	findings []byte
}
