package findings

import (
	"fmt"
	"math"

	"github.com/gpulens/gpulens/analyzer/recommend"
)

// gpucoresIdle: a tenant whose p95 utilisation is at most half its
// nvidia.com/gpucores holds SMs it does not use; the new gpucores is its
// p95 with headroom.
func gpucoresIdle(t HAMiTenant) *Finding {
	share := float64(t.CoresPct) / 100
	if t.CoresPct <= 0 || t.UtilP95 > hamiCoresIdle*share {
		return nil
	}
	want := max(5, int64(math.Ceil(t.UtilP95*hamiHeadroom*100)))
	if want >= t.CoresPct {
		return nil
	}
	f := hamiBase(t, KindHAMiGPUCoresIdle, Warning)
	f.Summary = fmt.Sprintf("%s/%s holds nvidia.com/gpucores %d on %s and used %s at p95: lower it to %d",
		t.Namespace, t.Pod, t.CoresPct, t.GPUUUID, pct(t.UtilP95), want)
	f.Recommendation = recommend.HAMiResources(hamiWorkloadOf(t), t.MemoryMiB, t.CoresPct, 0, want, t.DeviceBytes, "its p95 utilisation with headroom")
	return &f
}

// gpucoresPinned: a tenant whose p95 utilisation is at its
// nvidia.com/gpucores is throttled by HAMi-core; the new gpucores gives
// it half as much again, at most the whole GPU.
func gpucoresPinned(t HAMiTenant) *Finding {
	share := float64(t.CoresPct) / 100
	if t.CoresPct <= 0 || t.CoresPct >= 100 || t.UtilP95 < hamiCoresPinned*share {
		return nil
	}
	want := min(100, int64(math.Ceil(float64(t.CoresPct)*1.5)))
	f := hamiBase(t, KindHAMiGPUCoresPinned, Warning)
	f.Summary = fmt.Sprintf("%s/%s ran at %s, its nvidia.com/gpucores %d, at p95 on %s: HAMi throttles it; raise it to %d",
		t.Namespace, t.Pod, pct(t.UtilP95), t.CoresPct, t.GPUUUID, want)
	f.Recommendation = recommend.HAMiResources(hamiWorkloadOf(t), t.MemoryMiB, t.CoresPct, 0, want, t.DeviceBytes, "room above the load it is throttled at")
	return &f
}
