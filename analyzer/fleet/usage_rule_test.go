package fleet

import (
	"math"
	"testing"
)

// TestUsedGPUHours: the usage rule the ledger and the report share,
// worked by hand.
func TestUsedGPUHours(t *testing.T) {
	cases := []struct {
		name     string
		x        Allocation
		used     float64
		measured bool
	}{
		{"window only: 10 GPU-h at 40%", Allocation{AllocatedGPUHours: 10, AvgUtilization: 0.4, UtilizationSteps: 5}, 4, true},
		{"window only, above the share: capped", Allocation{AllocatedGPUHours: 10, AvgUtilization: 1.7, UtilizationSteps: 5}, 10, true},
		{"no reading", Allocation{AllocatedGPUHours: 10, AvgUtilization: 0.4}, 0, false},
		// A busy hour (150% of the share, capped to 1 GPU-h) and an idle one
		// (0): 1 GPU-h used, where the window's average (75%) gives 1.5.
		{"busy hour, idle hour", Allocation{AllocatedGPUHours: 2, AvgUtilization: 0.75, UtilizationSteps: 120, Hours: &AllocationHours{
			First: 3, Held: []float64{1, 1}, GPUHours: []float64{1, 1}, Measured: []float64{1, 1}, Used: []float64{1.5, 0}}}, 1, true},
		// Hour 1 has no reading: it takes the window's, (0.3 + 0) / 1 = 0.3
		// of its 0.5 GPU-h; hour 0 used 0.3 of 0.5 (0.3 / 1 h measured × 0.5).
		{"an hour without a reading takes the window's", Allocation{AllocatedGPUHours: 1, UtilizationSteps: 60, Hours: &AllocationHours{
			Held: []float64{1, 1}, GPUHours: []float64{0.5, 0.5}, Measured: []float64{1, 0}, Used: []float64{0.3, 0}}}, 0.5*0.3 + 0.5*0.3, true},
		{"hours, none measured", Allocation{AllocatedGPUHours: 1, Hours: &AllocationHours{
			Held: []float64{1}, GPUHours: []float64{1}, Measured: []float64{0}, Used: []float64{0}}}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			used, measured := c.x.UsedGPUHours()
			if measured != c.measured || math.Abs(used-c.used) > 1e-12 {
				t.Errorf("UsedGPUHours = %v, %v; want %v, %v", used, measured, c.used, c.measured)
			}
		})
	}
}
