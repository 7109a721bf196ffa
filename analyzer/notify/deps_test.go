package notify

import (
	"testing"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestLinksNoAnalysis: the Alertmanager client is a client. Turning
// findings into alerts is serve's work; the client links neither the
// analysis, nor the cluster's client, nor the query engine.
func TestLinksNoAnalysis(t *testing.T) {
	testenv.ForbidDeps(t, ".",
		"github.com/gpulens/gpulens/alerts",
		"github.com/gpulens/gpulens/analyzer/findings",
		"github.com/gpulens/gpulens/analyzer/inventory",
		"github.com/gpulens/gpulens/analyzer/query",
		"github.com/gpulens/gpulens/analyzer/source",
		"github.com/gpulens/gpulens/analyzer/series",
		"k8s.io/client-go",
		"github.com/prometheus/prometheus",
	)
}
