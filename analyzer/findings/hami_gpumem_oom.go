package findings

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/recommend"
)

// gpumemOOMRisk: a tenant whose peak reached 90% of its nvidia.com/gpumem
// is about to get HAMi-core's out-of-memory error (the limit is enforced
// at allocation); the new gpumem is its peak with headroom, a
// reliability change that may cost more.
func gpumemOOMRisk(t HAMiTenant) *Finding {
	limit := float64(t.MemoryMiB) * (1 << 20)
	if limit <= 0 || t.MemPeak < hamiMemOOM*limit {
		return nil
	}
	want := max(gpumemFor(t.MemPeak), t.MemoryMiB+1024)
	f := hamiBase(t, KindHAMiGPUMemOOMRisk, Critical)
	f.Summary = fmt.Sprintf("%s/%s used up to %s of its nvidia.com/gpumem %s on %s (%s): raise it to %s before HAMi refuses an allocation",
		t.Namespace, t.Pod, gib(t.MemPeak), gib(limit), t.GPUUUID, pct(t.MemPeak/limit), gib(float64(want)*(1<<20)))
	f.Recommendation = recommend.HAMiResources(hamiWorkloadOf(t), t.MemoryMiB, t.CoresPct, want, 0, t.DeviceBytes,
		fmt.Sprintf("its peak %s with %.0f%% headroom", gib(t.MemPeak), 100*(hamiHeadroom-1)))
	return &f
}
