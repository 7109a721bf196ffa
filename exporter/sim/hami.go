package sim

import "github.com/gpulens/gpulens/signals/hami"

// HAMiInstall is how HAMi's scheduler and vGPU monitor export metrics.
type HAMiInstall struct {
	// Metrics is HAMi's metric era: current (hami_* names, HAMi PR #1644
	// on; the default) or legacy (before it, or --legacy-metrics).
	Metrics string `yaml:"metrics"`
}

// Era is the install's metric era.
func (h HAMiInstall) Era() hami.Era {
	if e, ok := hami.ParseEra(h.Metrics); ok {
		return e
	}
	return hami.EraCurrent
}

// HAMiLimits are a pod's HAMi resources on its GPU.
type HAMiLimits struct {
	// Cores is nvidia.com/gpucores, percent of the GPU's SMs (1..100);
	// 0 leaves the container unlimited and HAMi accounts it 0 cores.
	Cores int `yaml:"cores"`
	// Memory is nvidia.com/gpumem (HAMi's unit is MiB; written here as a
	// byte size, e.g. 20GiB); MemoryPercentage is
	// nvidia.com/gpumem-percentage. With neither, the container is given
	// the whole GPU's memory (HAMi's defaultMemory 0).
	Memory           ByteSize `yaml:"memory"`
	MemoryPercentage int      `yaml:"memoryPercentage"`
}

// DefaultHAMiSplit is HAMi's default deviceSplitCount: how many
// containers one GPU takes (charts/hami/values.yaml, devicePlugin).
const DefaultHAMiSplit = 10

// MemoryMiB is the pod's gpumem as HAMi's scheduler grants it, in MiB,
// on a GPU of total bytes: gpumem, else the percentage of the GPU, else
// all of it.
func (l HAMiLimits) MemoryMiB(total uint64) int64 {
	switch {
	case l.Memory > 0:
		return int64(uint64(l.Memory) >> 20)
	case l.MemoryPercentage > 0:
		return int64(total>>20) * int64(l.MemoryPercentage) / 100
	}
	return int64(total >> 20)
}

// SharesWithHAMi says whether any of the node's GPUs is shared with mode
// hami: only such a node has HAMi's series beside its exporter's
// (fleet.NewHAMiSink).
func (n *Node) SharesWithHAMi() bool {
	for _, sh := range n.Sharing {
		if sh.Mode == ModeHAMi {
			return true
		}
	}
	return false
}
