package findings

import (
	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// heldMemoryBytes is how much device memory a GPU must hold, no pod seen
// on it, to be in use: more than a driver's and an idle context's own
// (the same line signals/dcgm draws between unmapped and idle tenants).
const heldMemoryBytes = 1 << 30

// UnnamedUse is how a GPU that sat unallocated was in use all the same:
// by a tenant the data cannot name (an exporter that maps no pod to the
// GPU's resource, a process outside Kubernetes). Such time is not free
// capacity: no finding may advise letting it go, and the report does not
// count it as unallocated waste.
type UnnamedUse struct {
	// Load is the least average utilization the GPU had while no pod was
	// seen on it, when above idle; 0 otherwise.
	Load float64
	// MemoryBytes is the device memory it held at its p99, when it was
	// never allocated in the window and held more than a driver's own at
	// its p99 and at its last sample; 0 otherwise.
	MemoryBytes float64
}

// InUse says the GPU was used with no pod seen on it.
func (u UnnamedUse) InUse() bool { return u.Load > 0 || u.MemoryBytes > 0 }

// UnnamedUseOf is g's use without a pod, under the thresholds cfg.
//
// Load: g's average over the window is at most its allocated fraction
// (at full load) plus the rest at the load while free, so an average
// above the allocated fraction is load no allocation explains. Memory:
// memory held by a GPU no pod held in the whole window is a tenant's just
// as load is (a 21 GB model loaded at 0% utilisation between requests);
// on a GPU allocated part of the time, the memory cannot be told from its
// tenants', so only load counts there.
func UnnamedUseOf(g fleet.GPU, cfg criteria.Config) UnnamedUse {
	var u UnnamedUse
	if g.UtilizationSteps >= cfg.MinSamples && g.UnallocatedHours > 0 && g.ReportedHours > 0 {
		freeRatio := g.UnallocatedHours / g.ReportedHours
		if free := (g.AvgUtilization - (1 - freeRatio)) / freeRatio; free > cfg.Idle.MaxAvgUtilization {
			u.Load = free
		}
	}
	if g.AllocatedHours == 0 && g.MemoryUsedSteps >= cfg.MinSamples &&
		g.MemoryUsedP99Bytes > heldMemoryBytes && g.MemoryUsedLastBytes > heldMemoryBytes {
		u.MemoryBytes = g.MemoryUsedP99Bytes
	}
	return u
}
