package pipeline

import (
	"context"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals/dcgm"
)

// TestNamedSchemaFits: with --schema dcgm-exporter named rather than
// detected, the store without FB_USED (gpu-monitoring-tools#138) still
// reads its GPU, from GPU_UTIL.
func TestNamedSchemaFits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "findings", "testdata", "realscrapes", "busy-no-pod.prom"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	end := start.Add(2 * time.Hour)
	db := pipelinetest.Scraped(t, data, start.Add(-2*time.Hour), end, time.Minute)
	a, err := Run(ctx, Options{Source: db, Schema: dcgm.Schema{}, Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Current.GPUs) != 1 || a.Current.GPUs[0].ReportedHours < 1.9 {
		t.Errorf("GPUs %+v, want the one GPU for 2 h", a.Current.GPUs)
	}
}
