package sim

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// migDevice is a MIG device handle: one GPU instance with one compute
// instance spanning it, as the device plugin's MIG manager creates them.
// It shares its parent's faults.
type migDevice struct {
	nvml.Device // bare go-nvml mock answering NOT_SUPPORTED
	parent      *device
	index       int
	uuid        string
	name        string
	placed      placedInstance
	info        nvml.GpuInstanceProfileInfo
	memTotal    uint64
	pods        []*simPod

	// State at the current simulated time, guarded by NodeSim.mu.
	memUsed uint64
	memCtl  float64
	gpm     gpmVector
	gpmCum  gpmVector
	procs   []nvml.ProcessInfo
}

func newMIGDevice(parent *device, k int, inst placedInstance) *migDevice {
	s := parent.sim
	bare := &mock.Device{}
	fillUnsupported(bare)
	return &migDevice{
		Device:   bare,
		parent:   parent,
		index:    k,
		uuid:     "MIG-" + uuidOf(hash3(hash2(s.seed, domainMIG), strHash(parent.uuid), uint64(k))),
		name:     s.sys.config.Name + " MIG " + inst.profile.name,
		placed:   inst,
		info:     s.sys.instanceInfo(inst.profile),
		memTotal: s.sys.instanceBytes(inst.profile),
	}
}

// refresh recomputes the instance from its pod; ratios are of the
// instance's own slices.
func (m *migDevice) refresh(dt float64) {
	old := m.gpm
	m.procs = m.procs[:0]
	m.memUsed, m.memCtl, m.gpm = 0, 0, gpmVector{}
	for _, p := range m.pods {
		if !p.running {
			continue
		}
		m.memUsed += appendProcesses(&m.procs, p, uint32(m.placed.giID), 0)
		m.memCtl = min(m.memCtl+p.sample.MemoryController, 1)
		m.gpm = gpmVector{
			min(m.gpm[gpmSM]+p.sample.SM, 1),
			min(m.gpm[gpmOccupancy]+p.sample.SMOccupancy, 1),
			min(m.gpm[gpmTensor]+p.sample.Tensor, 1),
			min(m.gpm[gpmDRAM]+p.sample.DRAM, 1),
		}
	}
	if len(m.procs) > 0 {
		m.memUsed = min(m.memUsed+driverOverheadBytes, m.memTotal)
	}
	if dt > 0 {
		for k := range m.gpmCum {
			m.gpmCum[k] += (old[k] + m.gpm[k]) / 2 * dt
		}
	}
}

func (m *migDevice) GetUUID() (string, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return "", r
	}
	defer m.parent.leave()
	return m.uuid, nvml.SUCCESS
}

func (m *migDevice) GetName() (string, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return "", r
	}
	defer m.parent.leave()
	return m.name, nvml.SUCCESS
}

func (m *migDevice) GetGpuInstanceId() (int, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer m.parent.leave()
	return m.placed.giID, nvml.SUCCESS
}

func (m *migDevice) GetComputeInstanceId() (int, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer m.parent.leave()
	return 0, nvml.SUCCESS
}

func (m *migDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nvml.Memory{}, r
	}
	defer m.parent.leave()
	return nvml.Memory{Total: m.memTotal, Used: m.memUsed, Free: m.memTotal - m.memUsed}, nvml.SUCCESS
}

func (m *migDevice) GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nvml.Memory_v2{}, r
	}
	defer m.parent.leave()
	v := nvml.Memory_v2{Total: m.memTotal, Used: m.memUsed, Free: m.memTotal - m.memUsed}
	v.Version = nvml.STRUCT_VERSION(v, 2)
	return v, nvml.SUCCESS
}

func (m *migDevice) GetAttributes() (nvml.DeviceAttributes, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nvml.DeviceAttributes{}, r
	}
	defer m.parent.leave()
	return nvml.DeviceAttributes{
		MultiprocessorCount:       m.info.MultiprocessorCount,
		SharedCopyEngineCount:     m.info.CopyEngineCount,
		SharedDecoderCount:        m.info.DecoderCount,
		SharedEncoderCount:        m.info.EncoderCount,
		SharedJpegCount:           m.info.JpegCount,
		SharedOfaCount:            m.info.OfaCount,
		GpuInstanceSliceCount:     uint32(m.placed.profile.slices),
		ComputeInstanceSliceCount: uint32(m.placed.profile.slices),
		MemorySizeMB:              m.memTotal >> 20,
	}, nvml.SUCCESS
}

func (m *migDevice) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer m.parent.leave()
	return append([]nvml.ProcessInfo(nil), m.procs...), nvml.SUCCESS
}

func (m *migDevice) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nvml.Utilization{}, r
	}
	defer m.parent.leave()
	return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
}

func (m *migDevice) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer m.parent.leave()
	return m.parent, nvml.SUCCESS
}

func (m *migDevice) IsMigDeviceHandle() (bool, nvml.Return) {
	if r := m.parent.enter(); r != nvml.SUCCESS {
		return false, r
	}
	defer m.parent.leave()
	return true, nvml.SUCCESS
}
