package alerts

import (
	"testing"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestLinksNoEngine: the rules are YAML made from the exporters' signals
// (signals/) and the findings' thresholds (analyzer/criteria); a rule
// generator that linked the analysis would pull in the Prometheus engine
// and TSDB, hundreds of packages, for string building.
func TestLinksNoEngine(t *testing.T) {
	testenv.ForbidDeps(t, ".",
		"github.com/gpulens/gpulens/analyzer/findings",
		"github.com/gpulens/gpulens/analyzer/query",
		"github.com/gpulens/gpulens/analyzer/recommend",
		"github.com/gpulens/gpulens/analyzer/source",
		"github.com/prometheus/prometheus/promql",
		"github.com/prometheus/prometheus/tsdb",
		"k8s.io/client-go",
	)
}
