package recommend

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// ActionHAMiResources changes a container's HAMi resources
// (nvidia.com/gpumem, nvidia.com/gpucores) on the GPU it shares.
const ActionHAMiResources Action = "set-hami-resources"

// HAMiShare is the share of its GPU a HAMi container is charged for
// (fleet.HAMiTenant.HeldShare, the ledger's and the analysis's rule): the
// larger of its cores share (gpucores / 100) and its memory share (gpumem
// over the device's memory).
func HAMiShare(coresPct int64, memMiB int64, deviceBytes float64) float64 {
	return fleet.HAMiTenant{CoresPct: coresPct, MemoryMiB: memMiB, DeviceBytes: deviceBytes}.HeldShare()
}

// HAMiResources is the recommendation to set w's HAMi resources to
// memMiB and coresPct (0 leaves a resource as it is) from the current
// ones, on a GPU of deviceBytes; its shares are HAMiShare's.
func HAMiResources(w workload.Ref, curMemMiB, curCores, memMiB, coresPct int64, deviceBytes float64, why string) *Recommendation {
	newMem, newCores := curMemMiB, curCores
	limits := map[vocab.Resource]int64{}
	if memMiB > 0 {
		newMem = memMiB
		limits[vocab.ResourceHAMiMemory] = memMiB
	}
	if coresPct > 0 {
		newCores = coresPct
		limits[vocab.ResourceHAMiCores] = coresPct
	}
	r := &Recommendation{
		Action:           ActionHAMiResources,
		Workload:         w,
		From:             string(vocab.ResourceGPU),
		To:               string(vocab.ResourceGPU),
		CurrentShare:     HAMiShare(curCores, curMemMiB, deviceBytes),
		RecommendedShare: HAMiShare(newCores, newMem, deviceBytes),
		Allocation:       vocab.AllocationPathDevicePlugin,
		Summary: fmt.Sprintf("set %s to nvidia.com/gpumem %d (MiB) and nvidia.com/gpucores %d: %s",
			w, newMem, newCores, why),
		Notes: []string{"HAMi reads the limits when the container starts: the patch restarts the pods. A nvidia.com/gpumem-percentage limit, if set, is to be removed for gpumem to apply."},
	}
	r.Reliability = r.RecommendedShare > r.CurrentShare
	r.patchOr(w, PatchChange{Limits: limits})
	return r
}
