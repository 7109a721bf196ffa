package fleet

// HAMiTenant is one container on one GPU shared by HAMi, over a window:
// what it holds (its HAMi resources) and what it used (as HAMi-core
// measured it), in base units.
type HAMiTenant struct {
	// Cluster is as in AllocationKey: a store of several clusters holds
	// the same pod names, nodes and even GPU UUIDs (a cloned image) in
	// each, so a tenant is only known with its cluster (SetCluster).
	Cluster                                         string `json:",omitempty"`
	Namespace, Pod, Container, Node, GPUUUID, Model string
	// CoresPct is nvidia.com/gpucores (0: unlimited); MemoryMiB the
	// memory limit HAMi-core enforces (gpumem, or gpumem-percentage
	// converted); DeviceBytes the GPU's memory as HAMi's scheduler counts
	// it.
	CoresPct, MemoryMiB int64
	DeviceBytes         float64
	// MemP99 and MemPeak are the memory used, bytes; UtilP95 the SM
	// utilisation of the device, 0..1.
	MemP99, MemPeak, UtilP95 float64
	// Coverage is the share of the window's steps with a reading.
	Coverage float64
}

// HeldShare is the tenant's allocation-basis share of its GPU.
func (t HAMiTenant) HeldShare() float64 {
	return max(float64(t.CoresPct)/100, float64(t.MemoryMiB)*(1<<20)/t.DeviceBytes)
}
