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
	// CoresPct is nvidia.com/gpucores, percent of the GPU's SMs HAMi-core
	// lets the container use (0: unlimited); MemoryMiB the
	// memory limit HAMi-core enforces (gpumem, or gpumem-percentage
	// converted); DeviceBytes the GPU's memory as HAMi's scheduler counts
	// it: the device plugin registers the physical memory times
	// deviceMemoryScaling, so above 1 it is a scheduling figure larger
	// than the GPU. PhysicalBytes is the GPU's memory as its exporter
	// reads it from the device (0: the exporter gave none).
	CoresPct, MemoryMiB int64
	// DeviceCoresPct is the GPU's cores as HAMi's scheduler counts them
	// (Totalcore: 100 times deviceCoreScaling, register.go:176-177 at
	// Project-HAMi/HAMi 4707fb02), a scheduling figure as DeviceBytes is;
	// 0: not read, taken as 100.
	DeviceCoresPct             int64
	DeviceBytes, PhysicalBytes float64
	// MemP99 and MemPeak are the memory used, bytes; UtilP95 the SM
	// utilisation of the device, 0..1.
	MemP99, MemPeak, UtilP95 float64
	// Coverage is the share of the window's steps with a reading.
	Coverage float64
}

// MemoryBytes is the GPU's memory as the device has it: the exporter's,
// else HAMi's registered size. What the tenants' limits are compared
// with: HAMi's size past the physical one (deviceMemoryScaling above 1)
// is memory the scheduler promises and the GPU does not have.
func (t HAMiTenant) MemoryBytes() float64 {
	if t.PhysicalBytes > 0 {
		return t.PhysicalBytes
	}
	return t.DeviceBytes
}

// HeldShare is the tenant's allocation-basis share of its GPU: the
// larger of its cores share (gpucores over the device's cores) and its
// memory share (gpumem over the device's memory, where HAMi gave the
// device's). Both are HAMi's registered sizes, as the scheduler shares
// them out and as signals/hami's forms (the dashboards' money) divide by
// them: with deviceCoreScaling 2, gpucores 57 holds 57/200 of the GPU.
func (t HAMiTenant) HeldShare() float64 {
	devCores := float64(t.DeviceCoresPct)
	if devCores <= 0 {
		devCores = 100
	}
	if t.DeviceBytes <= 0 {
		return max(0, float64(t.CoresPct)/devCores)
	}
	return max(0, float64(t.CoresPct)/devCores, float64(t.MemoryMiB)*(1<<20)/t.DeviceBytes)
}

// UsedShare is what the tenant used of its GPU, the usage basis's: the
// larger of its SM utilisation and its memory used, each of the device.
// The analysis keeps HAMi's p95 of the utilisation and p99 of the memory,
// not averages: the usage basis charges a HAMi tenant for its busy hours.
func (t HAMiTenant) UsedShare() float64 {
	used := t.UtilP95
	if t.DeviceBytes > 0 {
		used = max(used, t.MemP99/t.DeviceBytes)
	}
	return max(0, used)
}

// Utilization is UsedShare over HeldShare, the tenant's use of what it
// holds, as an Allocation's AvgUtilization is of its share; 0 for a tenant
// that holds nothing.
func (t HAMiTenant) Utilization() float64 {
	if held := t.HeldShare(); held > 0 {
		return t.UsedShare() / held
	}
	return 0
}

// ApplyHAMi gives each allocation of r that is one of r.HAMi's tenants
// the tenant's share and use (its Sharing stays the exporter's, which
// the plan packs by). The exporters see a HAMi GPU time-sliced,
// each tenant holding a replica (a tenth of the GPU at HAMi's default
// split); HAMi's limits say what it really holds, and every figure of
// the analysis's allocations (the report's costs, waste and unallocated
// capacity, the ledger's charges) must read the same share. The held time
// stays the exporter's, hour by hour; the share and the use are HAMi's
// window figures in every hour. Findings are detected before: they read
// the exporter's view, and HAMi's own (findings.DetectHAMi) beside it.
func (r *Result) ApplyHAMi() {
	type key struct{ cluster, uuid, ns, pod, ctr string }
	tenants := map[key]HAMiTenant{}
	for _, t := range r.HAMi {
		tenants[key{t.Cluster, t.GPUUUID, t.Namespace, t.Pod, t.Container}] = t
	}
	if len(tenants) == 0 {
		return
	}
	for i := range r.Allocations {
		x := &r.Allocations[i]
		t, ok := tenants[key{x.Cluster, x.UUID, x.Namespace, x.Pod, x.Container}]
		if !ok {
			continue
		}
		share, util := t.HeldShare(), t.Utilization()
		x.Share = share
		x.AllocatedGPUHours = share * x.HeldHours
		x.AvgUtilization, x.UtilizationSteps = util, 0
		if t.Coverage > 0 {
			x.UtilizationSteps = max(1, int(t.Coverage*float64(r.ExpectedSteps)))
		}
		if h := x.Hours; h != nil {
			for j := range h.Held {
				h.GPUHours[j] = share * h.Held[j]
				h.Measured[j], h.Used[j] = 0, 0
				if t.Coverage > 0 {
					h.Measured[j], h.Used[j] = h.Held[j], h.Held[j]*util
				}
			}
		}
	}
}
