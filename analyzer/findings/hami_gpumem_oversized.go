package findings

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/recommend"
)

// gpumemOversized: a tenant's nvidia.com/gpumem at least twice its p99
// memory used keeps memory from the GPU's other tenants; the new gpumem
// is its peak with headroom.
func gpumemOversized(t HAMiTenant) *Finding {
	limit := float64(t.MemoryMiB) * (1 << 20)
	if limit <= 0 || t.MemP99 > hamiMemOversized*limit {
		return nil
	}
	want := gpumemFor(t.MemPeak)
	if want >= t.MemoryMiB {
		return nil
	}
	f := hamiBase(t, KindHAMiGPUMemOversized, Warning)
	f.Summary = fmt.Sprintf("%s/%s holds nvidia.com/gpumem %s on %s and used at most %s (p99 %s): lower it to %s",
		t.Namespace, t.Pod, gib(limit), t.GPUUUID, gib(t.MemPeak), gib(t.MemP99), gib(float64(want)*(1<<20)))
	f.Recommendation = recommend.HAMiResources(hamiWorkloadOf(t), t.MemoryMiB, t.CoresPct, want, 0, t.DeviceBytes,
		fmt.Sprintf("its peak %s with %.0f%% headroom", gib(t.MemPeak), 100*(hamiHeadroom-1)))
	return &f
}
