package findings

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// TestUnnamedUseOf: when an unallocated GPU is in use by a tenant the data
// cannot name. Issue 42 case 3: a GPU holding 21 GB at 0% utilisation
// with no pod label is a model loaded between requests, not free
// capacity. No public scrape of that case was found (testdata/realscrapes/
// README.md); the figures are the issue's.
func TestUnnamedUseOf(t *testing.T) {
	cfg := criteria.DefaultConfig() // idle below 5%, 30 samples at least
	const gb = 1e9
	day := func(g fleet.GPU) fleet.GPU {
		g.ReportedHours, g.UtilizationSteps, g.MemoryUsedSteps = 24, 1440, 1440
		return g
	}
	tests := []struct {
		name      string
		g         fleet.GPU
		load, mem float64
	}{
		{"21 GB at 0%, never allocated", day(fleet.GPU{UnallocatedHours: 24, MemoryUsedP99Bytes: 21 * gb, MemoryUsedLastBytes: 21 * gb}), 0, 21 * gb},
		{"a driver's own memory is no tenant", day(fleet.GPU{UnallocatedHours: 24, MemoryUsedP99Bytes: 0.5 * gb, MemoryUsedLastBytes: 0.5 * gb}), 0, 0},
		{"memory freed by the end", day(fleet.GPU{UnallocatedHours: 24, MemoryUsedP99Bytes: 21 * gb, MemoryUsedLastBytes: 0}), 0, 0},
		// Half the day allocated at 100%: an average of 70% leaves 40% for
		// the unallocated half, which no allocation explains.
		{"busy while free", day(fleet.GPU{AllocatedHours: 12, UnallocatedHours: 12, AvgUtilization: 0.7}), 0.4, 0},
		// The same 21 GB on a GPU allocated half the day may be its
		// tenant's: memory does not count there.
		{"memory beside an allocation", day(fleet.GPU{AllocatedHours: 12, UnallocatedHours: 12, AvgUtilization: 0.5, MemoryUsedP99Bytes: 21 * gb, MemoryUsedLastBytes: 21 * gb}), 0, 0},
		{"idle and empty", day(fleet.GPU{UnallocatedHours: 24, AvgUtilization: 0.01}), 0, 0},
		{"too few samples", fleet.GPU{ReportedHours: 0.1, UnallocatedHours: 0.1, AvgUtilization: 0.9, UtilizationSteps: 6, MemoryUsedSteps: 6, MemoryUsedP99Bytes: 21 * gb, MemoryUsedLastBytes: 21 * gb}, 0, 0},
	}
	for _, tt := range tests {
		u := UnnamedUseOf(tt.g, cfg)
		if diff := u.Load - tt.load; diff > 1e-9 || diff < -1e-9 || u.MemoryBytes != tt.mem {
			t.Errorf("%s: %+v, want load %v, memory %v", tt.name, u, tt.load, tt.mem)
		}
		if u.InUse() != (tt.load > 0 || tt.mem > 0) {
			t.Errorf("%s: InUse %v", tt.name, u.InUse())
		}
	}
}
