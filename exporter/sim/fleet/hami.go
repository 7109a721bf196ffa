package fleet

import (
	"maps"
	"slices"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/signals/hami"
	"github.com/gpulens/gpulens/signals/native"
)

// HAMiSink adds, beside a node's exporter series, what Project-HAMi's
// scheduler and vGPU monitor would export for the node's GPUs shared with
// mode hami, in the scenario's metric era (sim.HAMiInstall), and passes
// every series on to inner unchanged. It reads what it needs from the
// native series that go through it: which pods hold which GPU
// (gpulens_container_gpu_allocation_ratio), their memory and utilisation
// (of their allocation there: times the allocation, of the device, as
// HAMi-core sums its processes' SM utilisation),
// and the GPU's memory; the limits come from the scenario's pods.
//
// What it reproduces (HAMi at 4707fb02, docs/research/hami.md):
//   - the scheduler's per-container series (hami_vgpu_memory_allocated_bytes,
//     hami_vgpu_core_allocated_ratio; legacy vGPUMemoryAllocated,
//     vGPUCoreAllocated), labelled by container_index, not name;
//   - its per-device series (limits: Totalmem in bytes, Totalcore 100;
//     sums allocated; the containers sharing);
//   - the monitor's per-container series (memory used and limit in bytes,
//     SM utilisation in percent, summed over the container's processes);
//   - the constant label zone="vGPU" on all of them.
//
// The host series (hami_host_gpu_*) are not emitted: gpulens reads the
// physical GPU from its exporter. Nor is a pod's
// hami.io/vgpu-devices-allocated annotation stored anywhere: the
// inventory carries no annotations; Annotation writes its value.
type HAMiSink struct {
	inner, out Sink
	node       string
	era        hami.Era
	limits     map[string]sim.HAMiLimits // by namespace/pod
	gpus       map[string]*hamiGPU       // by UUID
	totals     map[string]float64        // each GPU's memory, by UUID
	scaling    map[string]float64        // deviceMemoryScaling, by GPU index
}

type hamiGPU struct {
	index, model string
	tenants      map[string]*hamiTenant // namespace/pod/container
}

type hamiTenant struct {
	namespace, pod, container string
	limits                    sim.HAMiLimits
	mem, util, alloc          float64
}

// NewHAMiSink wraps inner for node of sc. HAMi's series go to out, its
// scrape targets' sink; nil sends them to inner.
func NewHAMiSink(inner, out Sink, sc *sim.Scenario, node string) *HAMiSink {
	s := &HAMiSink{inner: inner, out: out, node: node, era: sc.HAMi.Era(), limits: map[string]sim.HAMiLimits{}, gpus: map[string]*hamiGPU{}, totals: map[string]float64{},
		scaling: map[string]float64{}}
	if s.out == nil {
		s.out = inner
	}
	for _, n := range sc.Nodes {
		if n.Name != node {
			continue
		}
		hamiGPUs := map[int]bool{}
		for _, sh := range n.Sharing {
			if sh.Mode == sim.ModeHAMi {
				for _, g := range sh.GPUs {
					hamiGPUs[g] = true
					s.scaling[strconv.Itoa(g)] = sh.MemoryScaling
				}
			}
		}
		for _, p := range n.Pods {
			if hamiGPUs[p.GPU] {
				s.limits[p.Namespace+"/"+p.Name] = p.HAMi
			}
		}
	}
	return s
}

// Append implements Sink.
func (s *HAMiSink) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	switch name {
	case native.ContainerGPUAllocationRatio, native.ContainerGPUMemoryUsedBytes, native.ContainerGPUUtilizationRatio:
		ns, pod := label(lbls, "namespace"), label(lbls, "pod")
		if lim, ok := s.limits[ns+"/"+pod]; ok {
			g := s.gpu(lbls)
			key := ns + "/" + pod + "/" + label(lbls, "container")
			t := g.tenants[key]
			if t == nil {
				t = &hamiTenant{namespace: ns, pod: pod, container: label(lbls, "container"), limits: lim}
				g.tenants[key] = t
			}
			switch name {
			case native.ContainerGPUAllocationRatio:
				t.alloc = v
			case native.ContainerGPUMemoryUsedBytes:
				t.mem = v
			case native.ContainerGPUUtilizationRatio:
				t.util = v
			}
		}
	case native.GPUMemoryTotalBytes:
		s.totals[label(lbls, "uuid")] = v
	}
	return s.inner.Append(ts, name, lbls, v)
}

func (s *HAMiSink) gpu(lbls []*dto.LabelPair) *hamiGPU {
	uuid := label(lbls, "uuid")
	g := s.gpus[uuid]
	if g == nil {
		g = &hamiGPU{index: label(lbls, "gpu"), model: label(lbls, "model"), tenants: map[string]*hamiTenant{}}
		s.gpus[uuid] = g
	}
	return g
}

// EndStep implements Sink: HAMi's series of the step, then the inner
// sink's end.
func (s *HAMiSink) EndStep(ts time.Time) error {
	for _, uuid := range slices.Sorted(maps.Keys(s.gpus)) {
		if err := s.emitGPU(ts, uuid, s.gpus[uuid]); err != nil {
			return err
		}
		// A tenant that stops reporting has left: HAMi lists scheduled
		// pods only.
		clear(s.gpus[uuid].tenants)
	}
	if s.out != s.inner {
		if err := s.out.EndStep(ts); err != nil {
			return err
		}
	}
	return s.inner.EndStep(ts)
}

// Close implements Sink.
func (s *HAMiSink) Close() error {
	if s.out != s.inner {
		if err := s.out.Close(); err != nil {
			return err
		}
	}
	return s.inner.Close()
}

// emitGPU writes one GPU's HAMi series at ts.
func (s *HAMiSink) emitGPU(ts time.Time, uuid string, g *hamiGPU) error {
	total := s.totals[uuid]
	if total == 0 || len(g.tenants) == 0 {
		return nil
	}
	// HAMi accounts memory in MiB (the scheduler's Totalmem, the
	// annotation's Usedmem). Its device plugin registers the device's
	// memory times deviceMemoryScaling, truncated
	// (pkg/device-plugin/nvidiadevice/nvinternal/plugin/register.go:148-151
	// at 4707fb02): Totalmem, the gpumem-percentage base
	// (pkg/device/nvidia/device.go:780-782) and the device limit series
	// are that figure, not the GPU's.
	totalMiB := int64(total) >> 20
	if sc := s.scaling[g.index]; sc != 0 && sc != 1 {
		totalMiB = int64(float64(totalMiB) * sc)
	}
	vals := map[string]string{
		"node": s.node, "nodeid": s.node, "nodename": s.node,
		"device_uuid": uuid, "deviceuuid": uuid, "device_index": g.index, "deviceidx": g.index,
		"device_type": "NVIDIA-" + g.model, "devicetype": "NVIDIA-" + g.model,
		"device_cores": "100", "devicecores": "100",
		// One device per container, the first of its pod.
		"vdevice_index": "0", "vdeviceid": "0", "container_index": "0", "containeridx": "0",
	}
	emit := func(key string, v float64) error {
		name, names, value := hami.Emitted(key, v, s.era)
		lbls := make([]*dto.LabelPair, 0, len(names)+1)
		for _, n := range names {
			lbls = append(lbls, pair(n, vals[n]))
		}
		lbls = append(lbls, pair("zone", "vGPU"))
		return s.out.Append(ts, name, lbls, value)
	}
	var memAlloc, coresAlloc float64
	for _, key := range slices.Sorted(maps.Keys(g.tenants)) {
		t := g.tenants[key]
		mem := float64(t.limits.MemoryMiB(uint64(totalMiB)<<20) << 20)
		cores := float64(t.limits.Cores) / 100
		memAlloc += mem
		coresAlloc += cores
		for _, n := range []string{"namespace", "podnamespace"} {
			vals[n] = t.namespace
		}
		for _, n := range []string{"pod", "podname"} {
			vals[n] = t.pod
		}
		for _, n := range []string{"container", "ctrname"} {
			vals[n] = t.container
		}
		if err := emitAll(emit, hami.ContainerMemoryAllocated, mem, hami.ContainerCoresAllocated, cores,
			hami.ContainerMemoryLimit, mem, hami.ContainerMemoryUsed, t.mem, hami.ContainerUtilization, t.util*t.alloc); err != nil {
			return err
		}
	}
	return emitAll(emit, hami.DeviceMemory, float64(totalMiB<<20), hami.DeviceCores, 1.0,
		hami.DeviceMemoryAllocated, memAlloc, hami.DeviceCoresAllocated, coresAlloc, hami.DeviceShared, float64(len(g.tenants)))
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// Annotation is the hami.io/vgpu-devices-allocated value HAMi's
// scheduler writes for a one-container pod given limits on the GPU uuid
// of total bytes.
func Annotation(uuid string, limits sim.HAMiLimits, total uint64) string {
	return hami.FormatDevicesAllocated([][]hami.Device{{{UUID: uuid, Type: "NVIDIA",
		MemoryMiB: limits.MemoryMiB(total), Cores: int64(limits.Cores)}}})
}
