package query

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/signals/native"

	"github.com/prometheus/prometheus/model/labels"
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
	res, err := Analyze(context.Background(), f.commit(t), native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "1 MIG slices of Ampere GPUs (A100, A30) have no utilization") {
		t.Errorf("notes %q lack the Ampere slice", notes)
	}
}

// TestAmpereMIGFromDCGM: with dcgm-exporter scraped beside gpulens, an
// A100 slice's utilization is its GPU instance's DCGM_FI_PROF_GR_ENGINE_ACTIVE,
// and the notes say where it came from instead of calling it unknown.
func TestAmpereMIGFromDCGM(t *testing.T) {
	f := newFleet(t)
	const a100 = "NVIDIA A100-SXM4-40GB"
	f.series(t, gpuLabels("gpulens_gpu_info", "node-1", "GPU-a", a100), 1, 240, constant(1))
	f.series(t, gpuLabels("gpulens_mig_compute_slices", "node-1", "GPU-a", a100, "gpu_instance", "1", "mig_profile", "3g.20gb"), 1, 240, constant(3))
	f.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ml", "slice-a", "mig", "1", "3g.20gb"), 1, 240, constant(3.0/7))
	f.series(t, labels.FromStrings("__name__", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu", "0", "UUID", "GPU-a", "modelName", a100, "Hostname", "node-1",
		"GPU_I_ID", "1", "GPU_I_PROFILE", "3g.20gb", "namespace", "ml", "pod", "slice-a", "container", "main"), 1, 240, constant(0.7))
	res, err := Analyze(context.Background(), f.commit(t), native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	if strings.Contains(notes, "have no utilization") || !strings.Contains(notes, "1 MIG slices of Ampere GPUs (A100, A30) have utilization from dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE") {
		t.Errorf("notes %q do not say where the slice's utilization came from", notes)
	}
	if len(res.Allocations) != 1 || res.Allocations[0].UtilizationSteps != 240 || res.Allocations[0].AvgUtilization != 0.7 {
		t.Errorf("allocations %+v, want the slice at dcgm-exporter's 0.7 at every step", res.Allocations)
	}
	if len(res.GPUs) != 1 || res.GPUs[0].UtilizationSteps != 240 || res.GPUs[0].AvgUtilization < 0.3-1e-9 || res.GPUs[0].AvgUtilization > 0.3+1e-9 {
		t.Errorf("GPUs %+v, want 0.7 x 3/7 of the GPU", res.GPUs)
	}
}
