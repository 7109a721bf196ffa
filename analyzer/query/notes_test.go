package query

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// TestAmpereMIGNote: a slice of an A100 without utilization is said to be
// unknown for the reason it is (no GPM before Hopper); an H100 slice
// without it is not counted there, its data is just missing.
func TestAmpereMIGNote(t *testing.T) {
	f := newFleet(t)
	const a100 = "NVIDIA A100-SXM4-40GB"
	f.series(t, gpuLabels("gpulens_gpu_info", "node-1", "GPU-a", a100), 1, 240, constant(1))
	f.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ml", "slice-a", "mig", "1", "3g.20gb"), 1, 240, constant(3.0/7))
	f.series(t, gpuLabels("gpulens_gpu_info", "node-1", "GPU-h", h100), 1, 240, constant(1))
	f.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-h", h100, "ml", "slice-h", "mig", "1", "3g.40gb"), 1, 240, constant(3.0/7))
	res, err := Analyze(context.Background(), f.commit(t), schema.Native{}, window)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "1 MIG slices of Ampere GPUs (A100, A30) have no utilization") {
		t.Errorf("notes %q lack the Ampere slice", notes)
	}
}
