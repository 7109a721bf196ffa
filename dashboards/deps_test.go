package dashboards

import (
	"testing"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestLinksNoAnalysis: the dashboards are generated from the exporters'
// signals (signals/) and the findings' criteria, not from the analysis:
// no Prometheus engine or TSDB for string building.
func TestLinksNoAnalysis(t *testing.T) {
	testenv.ForbidDeps(t, ".",
		"github.com/gpulens/gpulens/analyzer/findings",
		"github.com/gpulens/gpulens/analyzer/inventory",
		"github.com/gpulens/gpulens/analyzer/query",
		"github.com/gpulens/gpulens/analyzer/recommend",
		"github.com/gpulens/gpulens/analyzer/source",
		"k8s.io/client-go",
		"github.com/prometheus/prometheus",
	)
}
