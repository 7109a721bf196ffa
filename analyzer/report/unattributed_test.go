package report

import (
	"math"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/price"
)

// TestBusyGPUWithoutPodIsNotWaste: NVIDIA/gpu-monitoring-tools#138, a GPU
// at 44% whose series all have pod="" (analyzer/findings/testdata/
// realscrapes, provenance there), for a day (issue 42, case 4). Its
// finding says it is in use, not free capacity; the report must agree:
// its 24 GPU-h are unattributed, not unallocated, and not in the waste.
func TestBusyGPUWithoutPodIsNotWaste(t *testing.T) {
	r := scrapeDay(t, "../findings/testdata/realscrapes/busy-no-pod.prom", price.DefaultPrices())
	c := r.Cluster
	if c.GPUs != 1 || math.Abs(c.CapacityGPUHours-24) > 1e-9 {
		t.Fatalf("%d GPUs, %v GPU-h; want 1 GPU for 24 h", c.GPUs, c.CapacityGPUHours)
	}
	if c.UnallocatedGPUHours != 0 || math.Abs(c.UnattributedGPUHours-24) > 1e-9 || c.UnallocatedCost != 0 || c.EstimatedWaste != 0 {
		t.Errorf("unallocated %v GPU-h ($%v), unattributed %v GPU-h, waste $%v; want 0, 24 and no waste",
			c.UnallocatedGPUHours, c.UnallocatedCost, c.UnattributedGPUHours, c.EstimatedWaste)
	}
	if math.Abs(c.AvgUtilization-0.44) > 1e-9 {
		t.Errorf("average utilization %v, want 0.44", c.AvgUtilization)
	}
	var md strings.Builder
	if err := Render(&md, r, "markdown"); err != nil {
		t.Fatal(err)
	}
	// Issue 42 case 5 on the same real scrape: a 2020 exporter wrote no
	// modelName, so no price applies; the cost is unknown, never $0.
	if c.CapacityCostKnown || !strings.Contains(md.String(), "unknown (no price for a GPU without a model label") || strings.Contains(md.String(), "| Cost of the fleet | $0") {
		t.Errorf("an unpriced GPU's cost must read as unknown:\n%s", md.String())
	}
	if !strings.Contains(md.String(), "In use, tenant not in the data") {
		t.Errorf("the markdown report does not say the GPU is in use by a tenant the data does not name:\n%s", md.String())
	}
}
