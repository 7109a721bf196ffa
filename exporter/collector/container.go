package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"
)

// containerLabels identify a container's hold on a physical GPU or one of
// its MIG instances. gpu_instance and mig_profile are empty outside MIG.
var containerLabels = []string{"node", "namespace", "pod", "container", "gpu", "uuid", "model", "sharing", "gpu_instance", "mig_profile"}

func containerDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, containerLabels...), extra...), nil)
}

var (
	descContainerAlloc = containerDesc(native.ContainerGPUAllocationRatio,
		"Share of the physical GPU the container holds: 1 for a whole GPU, 1/replicas for a time-sliced or MPS replica, its compute slices of the GPU's total (7; 4 on A30) for a MIG instance.")
	descContainerUtil = containerDesc(native.ContainerGPUUtilizationRatio,
		"How busy the container keeps its allocation. 0-1 on whole GPUs and MIG instances; on time-sliced and MPS GPUs up to 1/allocation, when it uses more than its share while co-tenants idle. method: device, mig-gpm or process.",
		"method")
	descContainerMem = containerDesc(native.ContainerGPUMemoryUsedBytes,
		"GPU memory the container uses. method: device (it holds the GPU or MIG instance alone) or process (sum of its processes).",
		"method")
	// descContainerClaim joins the container series on node, namespace, pod,
	// container, uuid and gpu_instance (same values), and names the claim
	// and the device of its ResourceSlice: separate from the container
	// families, so a claim adds no label to them and none of their series
	// change for a GPU allocated through a claim.
	descContainerClaim = prometheus.NewDesc(native.ContainerGPUClaimInfo,
		"A GPU or MIG instance the container holds through a ResourceClaim (Kubernetes DRA): the claim, and the driver, pool and device of its allocation; always 1.",
		[]string{signals.LabelNode, signals.LabelNamespace, signals.LabelPod, signals.LabelContainer, signals.LabelGPU,
			signals.LabelUUID, signals.LabelGPUInstance, signals.LabelClaimNamespace, signals.LabelClaim,
			signals.LabelDriver, signals.LabelPool, signals.LabelDevice}, nil)
	descPodResourcesUp = prometheus.NewDesc(native.ExporterPodResourcesUp,
		"1 when the last refresh from the kubelet pod-resources socket succeeded; while 0 no container series are served.", nil, nil)
	descAttributionMode = prometheus.NewDesc(native.ExporterAttributionMode,
		"1 for the attribution mode in effect: process (shared GPUs measured per process) or allocation-only (no host /proc or no pod informer: shared GPUs get allocations only).",
		[]string{"mode"}, nil)
	descUnattributed = prometheus.NewDesc(native.ExporterUnattributedProcesses,
		"GPU processes on shared GPUs that belong to no container holding the GPU (host processes, pods using GPUs they did not request).", nil, nil)
)

// AttributionState is one attribution pass, as the container builder
// serves it.
type AttributionState struct {
	KubeletUp  bool
	Containers []attribution.ContainerGPU
	Stats      attribution.Stats
}

// containerBuilder emits per-container series. It only runs when the
// Sampler was given an Attribution.
type containerBuilder struct{}

func (containerBuilder) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descContainerAlloc, descContainerUtil, descContainerMem, descContainerClaim,
		descPodResourcesUp, descAttributionMode, descUnattributed} {
		ch <- d
	}
}

func (containerBuilder) build(st *State, emit func(sample)) {
	a := st.Attribution
	if a == nil {
		return
	}
	emit(gauge(descPodResourcesUp, boolFloat(a.KubeletUp)))
	for _, mode := range []string{attribution.ModeProcess, attribution.ModeAllocationOnly} {
		emit(gauge(descAttributionMode, boolFloat(a.Stats.Mode == mode), mode))
	}
	emit(gauge(descUnattributed, float64(a.Stats.UnattributedProcesses)))
	for i := range a.Containers {
		c := &a.Containers[i]
		gi := ""
		if c.GPUInstance >= 0 {
			gi = strconv.Itoa(c.GPUInstance)
		}
		lv := []string{st.Node, c.Namespace, c.Pod, c.Container, strconv.Itoa(c.GPU), c.UUID, c.Model, string(c.Sharing), gi, c.MIGProfile}
		emit(gauge(descContainerAlloc, c.Allocation, lv...))
		if gpu.Valid(c.Utilization) {
			emit(gauge(descContainerUtil, c.Utilization, append(lv[:len(lv):len(lv)], c.UtilizationMethod)...))
		}
		if gpu.Valid(c.MemoryUsedBytes) {
			emit(gauge(descContainerMem, c.MemoryUsedBytes, append(lv[:len(lv):len(lv)], c.MemoryMethod)...))
		}
		for _, cl := range c.Claims {
			emit(gauge(descContainerClaim, 1, st.Node, c.Namespace, c.Pod, c.Container, lv[4], c.UUID, gi,
				cl.Namespace, cl.Name, cl.Driver, cl.Pool, cl.Device))
		}
	}
}
