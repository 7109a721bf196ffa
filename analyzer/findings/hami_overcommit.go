package findings

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/recommend"
)

// overcommitted: the tenants of one GPU whose nvidia.com/gpumem or
// nvidia.com/gpucores sum past the device (HAMi's deviceMemoryScaling
// above 1, or limits set by hand) were promised more than it has. The
// memory is the device's (HAMiTenant.MemoryBytes), not HAMi's registered
// size: with deviceMemoryScaling 1.5 an 80 GiB GPU registers as 120 GiB,
// and limits summing to 96 GiB fit the figure, not the GPU. The
// recommendation scales the largest tenant's limits by the device over
// the sum, as all would be; the others' are in its notes.
func overcommitted(tenants []HAMiTenant) []Finding {
	byGPU := map[string][]HAMiTenant{}
	for _, t := range tenants {
		byGPU[t.GPUUUID] = append(byGPU[t.GPUUUID], t)
	}
	var out []Finding
	for _, uuid := range sortedKeys(byGPU) {
		ts := byGPU[uuid]
		var mem, cores float64
		for _, t := range ts {
			mem += float64(t.MemoryMiB) * (1 << 20)
			cores += float64(t.CoresPct) / 100
		}
		dev := ts[0].MemoryBytes()
		if len(ts) < 2 || (mem <= dev && cores <= 1) {
			continue
		}
		memScale, coreScale := math.Min(1, dev/mem), math.Min(1, 1/cores)
		big := slices.MaxFunc(ts, func(a, b HAMiTenant) int {
			return int(a.HeldShare()*1e9) - int(b.HeldShare()*1e9)
		})
		scaled := func(t HAMiTenant) (int64, int64) {
			return int64(math.Floor(float64(t.MemoryMiB)*memScale/1024)) * 1024, int64(math.Floor(float64(t.CoresPct) * coreScale))
		}
		f := hamiBase(big, KindHAMiOvercommit, Warning)
		f.Evidence["gpumem_sum_bytes"], f.Evidence["gpucores_sum_ratio"], f.Evidence["tenants"] = mem, cores, float64(len(ts))
		f.Evidence["device_memory_physical_bytes"] = dev
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Namespace + "/" + t.Pod
		}
		of := gib(dev)
		if big.DeviceBytes > dev {
			of += fmt.Sprintf(" (HAMi registers it as %s: deviceMemoryScaling)", gib(big.DeviceBytes))
		}
		f.Summary = fmt.Sprintf("the %d HAMi tenants of %s on %s (%s) hold nvidia.com/gpumem %s of %s and nvidia.com/gpucores %.0f of 100: scale their limits to fit",
			len(ts), uuid, big.Node, strings.Join(names, ", "), gib(mem), of, 100*cores)
		m, c := scaled(big)
		// Shares stay of HAMi's registered size, as held_share prices them.
		r := recommend.HAMiResources(hamiWorkloadOf(big), big.MemoryMiB, big.CoresPct, m, c, big.DeviceBytes, "its share of the device, with every tenant's scaled alike")
		for _, t := range ts {
			if t.Namespace != big.Namespace || t.Pod != big.Pod || t.Container != big.Container {
				om, oc := scaled(t)
				r.Notes = append(r.Notes, fmt.Sprintf("%s/%s: nvidia.com/gpumem %d, nvidia.com/gpucores %d", t.Namespace, t.Pod, om, oc))
			}
		}
		f.Recommendation = r
		out = append(out, f)
	}
	return out
}
