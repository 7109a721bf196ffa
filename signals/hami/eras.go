package hami

import "slices"

// Era is a naming era of HAMi's series.
type Era int

// The eras. Sources (docs/research/hami.md quotes each):
//   - Project-HAMi/HAMi PR #1644 (commit 6609804f, merged 2026-03-18)
//     renamed every metric to hami_* and every label to snake_case, and
//     added --legacy-metrics (default false) to the scheduler and the vGPU
//     monitor, which then emit the legacy names beside the new ones.
//   - The legacy names and labels: cmd/vGPUmonitor/metrics.go:84-143 and
//     cmd/scheduler/metrics.go:67-182 at 2b083f13 (6609804f's parent).
//   - The current names and labels: cmd/vGPUmonitor/metrics.go:58-122 and
//     cmd/scheduler/metrics.go:107-146,325-334 at 4707fb02 (2026-08-21);
//     the legacy descriptors kept behind the flag at lines 139-177 and
//     160-199,340-349 of the same files.
//
// The rename changed no value: every quantity has one unit in both eras
// (the same sendMetric call feeds the old and the new descriptor). The
// *_ratio names of cores and utilisation still carry 0..100 percentages:
// scheduler Usedcores/Totalcore (metrics.go:58-63, 377-378), NVML's
// utilisation percent (vGPUmonitor/metrics.go:66, "ratio (0-100)"), and
// HAMi's own dashboards/README.md:66-76 ("reported on a 0-100 scale").
const (
	// EraLegacy is HAMi before PR #1644 (2.8 and older), or a later one
	// run with --legacy-metrics, which emits both eras.
	EraLegacy Era = iota
	// EraCurrent is HAMi from PR #1644 on: hami_* names, snake_case labels.
	EraCurrent
)

func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraCurrent:
		return "current"
	}
	return "unknown era"
}

// ParseEra reads an era's name as String writes it.
func ParseEra(s string) (Era, bool) {
	switch s {
	case "legacy":
		return EraLegacy, true
	case "current":
		return EraCurrent, true
	}
	return 0, false
}

// Components: which HAMi process exports a series.
const (
	// Scheduler is hami-scheduler's metrics endpoint: what it allocated.
	Scheduler = "scheduler"
	// Monitor is the device plugin's vGPU monitor (hami-device-plugin's
	// vgpu-monitor container): what each container's HAMi-core measured.
	Monitor = "vgpu-monitor"
)

// Scopes: what one series of a metric is about.
const (
	ScopeDevice = "device"
	// ScopeContainer is one container on one device, named by namespace,
	// pod and container (the monitor's).
	ScopeContainer = "container"
	// ScopeContainerIndex is one container on one device, named by
	// namespace, pod and the container's index in the pod's annotation:
	// the scheduler's series carry no container name.
	ScopeContainerIndex = "container-index"
)

// Units, as Metric.Unit states them: what every spelling is normalised to.
const (
	UnitBytes = "bytes"
	UnitRatio = "ratio"
	UnitCount = "count"
)

// Keys of the quantities gpulens reads.
const (
	// ContainerMemoryUsed is the device memory a container's processes
	// hold, as HAMi-core counts it (the sum of its processes' usage).
	ContainerMemoryUsed = "container_memory_used"
	// ContainerMemoryLimit is the memory limit HAMi-core enforces.
	ContainerMemoryLimit = "container_memory_limit"
	// ContainerUtilization is the container's SM utilisation of the
	// device, summed over its processes: it can exceed 1 (HAMi#555).
	ContainerUtilization = "container_utilization"
	// ContainerMemoryAllocated and ContainerCoresAllocated are what the
	// scheduler gave the container: nvidia.com/gpumem (or
	// gpumem-percentage, converted to MiB) and nvidia.com/gpucores.
	ContainerMemoryAllocated = "container_memory_allocated"
	ContainerCoresAllocated  = "container_cores_allocated"
	// DeviceMemory and DeviceCores are the device's schedulable totals
	// (Totalmem, after deviceMemoryScaling; Totalcore, 100 on NVIDIA).
	DeviceMemory = "device_memory"
	DeviceCores  = "device_cores"
	// DeviceMemoryAllocated and DeviceCoresAllocated are the sums the
	// scheduler allocated on the device; DeviceShared the containers.
	DeviceMemoryAllocated = "device_memory_allocated"
	DeviceCoresAllocated  = "device_cores_allocated"
	DeviceShared          = "device_shared"
	// HostMemoryUsed and HostUtilization are the physical GPU's, as the
	// monitor reads them from NVML.
	HostMemoryUsed  = "host_memory_used"
	HostUtilization = "host_utilization"
)

// A Spelling is a metric's name and labels in one era.
type Spelling struct {
	Name string
	// Labels are the series' own labels, in HAMi's order (the zone="vGPU"
	// constant label aside).
	Labels []string
}

// A Metric is one quantity under both eras' names.
type Metric struct {
	Key       string
	Component string
	Scope     string
	Unit      string
	// Scale times a value (in either era: the rename kept the values) is
	// the value in Unit: 0.01 for HAMi's 0..100 percentages.
	Scale float64
	// Spellings are indexed by Era.
	Spellings [2]Spelling
}

// Label sets, by era: [legacy, current].
var (
	monitorContainer = [2][]string{
		{"podnamespace", "podname", "ctrname", "vdeviceid", "deviceuuid"},
		{"namespace", "pod", "container", "vdevice_index", "device_uuid"},
	}
	schedulerContainer = [2][]string{
		{"podnamespace", "nodename", "podname", "containeridx", "deviceuuid"},
		{"namespace", "node", "pod", "container_index", "device_uuid"},
	}
	schedulerDevice = [2][]string{
		{"nodeid", "deviceuuid", "deviceidx", "devicetype"},
		{"node", "device_uuid", "device_index", "device_type"},
	}
	// The monitor's host series: before #1644 without a node label
	// (vGPUmonitor/metrics.go:84-94 at 2b083f13); with --legacy-metrics
	// after it, nodeid is added (lines 139-147 at 4707fb02).
	monitorHost = [2][]string{
		{"deviceidx", "deviceuuid", "devicetype"},
		{"node", "device_index", "device_uuid", "device_type"},
	}
)

func m(key, comp, scope, unit string, scale float64, labels [2][]string, legacy, current string) Metric {
	return Metric{Key: key, Component: comp, Scope: scope, Unit: unit, Scale: scale,
		Spellings: [2]Spelling{{legacy, labels[EraLegacy]}, {current, labels[EraCurrent]}}}
}

const percent = 0.01

// metrics is every HAMi quantity gpulens reads, in both eras.
var metrics = []Metric{
	m(ContainerMemoryUsed, Monitor, ScopeContainer, UnitBytes, 1, monitorContainer, "vGPU_device_memory_usage_in_bytes", "hami_vgpu_memory_used_bytes"),
	m(ContainerMemoryLimit, Monitor, ScopeContainer, UnitBytes, 1, monitorContainer, "vGPU_device_memory_limit_in_bytes", "hami_vgpu_memory_limit_bytes"),
	m(ContainerUtilization, Monitor, ScopeContainer, UnitRatio, percent, monitorContainer, "Device_utilization_desc_of_container", "hami_container_device_utilization_ratio"),
	m(ContainerMemoryAllocated, Scheduler, ScopeContainerIndex, UnitBytes, 1, schedulerContainer, "vGPUMemoryAllocated", "hami_vgpu_memory_allocated_bytes"),
	m(ContainerCoresAllocated, Scheduler, ScopeContainerIndex, UnitRatio, percent, schedulerContainer, "vGPUCoreAllocated", "hami_vgpu_core_allocated_ratio"),
	m(DeviceMemory, Scheduler, ScopeDevice, UnitBytes, 1, schedulerDevice, "GPUDeviceMemoryLimit", "hami_gpu_memory_limit_bytes"),
	m(DeviceCores, Scheduler, ScopeDevice, UnitRatio, percent, schedulerDevice, "GPUDeviceCoreLimit", "hami_gpu_core_limit_ratio"),
	m(DeviceMemoryAllocated, Scheduler, ScopeDevice, UnitBytes, 1, [2][]string{
		{"nodeid", "deviceuuid", "deviceidx", "devicecores", "devicetype"},
		{"node", "device_uuid", "device_index", "device_cores", "device_type"}}, "GPUDeviceMemoryAllocated", "hami_gpu_memory_allocated_bytes"),
	m(DeviceCoresAllocated, Scheduler, ScopeDevice, UnitRatio, percent, schedulerDevice, "GPUDeviceCoreAllocated", "hami_gpu_core_allocated_ratio"),
	m(DeviceShared, Scheduler, ScopeDevice, UnitCount, 1, schedulerDevice, "GPUDeviceSharedNum", "hami_gpu_shared_count"),
	m(HostMemoryUsed, Monitor, ScopeDevice, UnitBytes, 1, monitorHost, "HostGPUMemoryUsage", "hami_host_gpu_memory_used_bytes"),
	m(HostUtilization, Monitor, ScopeDevice, UnitRatio, percent, monitorHost, "HostCoreUtilization", "hami_host_gpu_utilization_ratio"),
}

// Metrics lists every quantity gpulens reads, in both eras.
func Metrics() []Metric { return slices.Clone(metrics) }

// Lookup is the metric of key.
func Lookup(key string) (Metric, bool) {
	for _, mt := range metrics {
		if mt.Key == key {
			return mt, true
		}
	}
	return Metric{}, false
}

// MetricOf is the metric a name of either era spells, and its era.
func MetricOf(name string) (Metric, Era, bool) {
	for _, mt := range metrics {
		for e, sp := range mt.Spellings {
			if sp.Name == name {
				return mt, Era(e), true
			}
		}
	}
	return Metric{}, 0, false
}

// Emitted is what HAMi of era e writes for key at v, given in the base
// unit: its name, its label names, and the value in HAMi's unit. The
// emulator's one point of translation.
func Emitted(key string, v float64, e Era) (name string, labels []string, value float64) {
	mt, ok := Lookup(key)
	if !ok {
		panic("hami: unknown metric " + key)
	}
	sp := mt.Spellings[e]
	if mt.Scale == percent {
		return sp.Name, sp.Labels, v * 100
	}
	return sp.Name, sp.Labels, v / mt.Scale
}
