package criteria

import (
	"testing"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestIsALeaf: the rule files and the dashboards read the thresholds and
// kinds from here, so this package must not link the analysis.
func TestIsALeaf(t *testing.T) {
	testenv.ForbidDeps(t, ".",
		"github.com/gpulens/gpulens/analyzer/findings",
		"github.com/gpulens/gpulens/analyzer/inventory",
		"github.com/gpulens/gpulens/analyzer/query",
		"github.com/gpulens/gpulens/analyzer/recommend",
		"github.com/gpulens/gpulens/signals",
		"github.com/gpulens/gpulens/analyzer/source",
		"k8s.io/client-go",
		"github.com/prometheus/prometheus",
	)
}
