package nvml

import (
	"math"
	"strconv"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// migInstance is what is kept about one MIG device between reads, keyed by
// its UUID: a reconfiguration creates new UUIDs, so nothing stale survives.
type migInstance struct {
	gi, ci int
	// attrs and profile are read until they have been read once.
	attrs     gonvml.DeviceAttributes
	haveAttrs bool
	profile   string // from the device name, "" until known
	haveName  bool
	gpm       gpmPair
	seen      uint32 // device.gen of the last read that found it
}

// migHole reports the answers NVML gives for an unused MIG device index.
func migHole(ret gonvml.Return) bool {
	return ret == gonvml.ERROR_NOT_FOUND || ret == gonvml.ERROR_INVALID_ARGUMENT
}

// readMIG enumerates the MIG devices of a MIG-enabled GPU into insts and
// their processes into procs. parentTotal is the GPU's memory in bytes
// (NA when unknown), the reference for memory slices.
func (d *device) readMIG(h gonvml.Device, parentTotal float64) {
	c := &d.c
	n, ok := get(c, callGetMaxMigDeviceCount, h.GetMaxMigDeviceCount)
	if !ok {
		return
	}
	if d.mig == nil {
		d.mig = make(map[string]*migInstance)
	}
	for i := 0; i < n && !c.gone; i++ {
		mh, ok := getQuiet(c, callGetMigDeviceHandleByIndex, migHole, func() (gonvml.Device, gonvml.Return) {
			return h.GetMigDeviceHandleByIndex(i)
		})
		if !ok || mh == nil {
			continue
		}
		d.readInstance(h, mh, i, parentTotal)
	}
	if c.gone {
		return
	}
	for uuid, inst := range d.mig {
		if inst.seen != d.gen {
			inst.gpm.free(c)
			delete(d.mig, uuid)
		}
	}
}

func (d *device) readInstance(parent, mh gonvml.Device, index int, parentTotal float64) {
	c := &d.c
	uuid, ok := get(c, callGetUUID, mh.GetUUID)
	if !ok || uuid == "" {
		return
	}
	inst := d.mig[uuid]
	if inst == nil {
		gi, ok := get(c, callGetGpuInstanceID, mh.GetGpuInstanceId)
		if !ok {
			return
		}
		ci, ok := get(c, callGetComputeInstanceID, mh.GetComputeInstanceId)
		if !ok {
			return
		}
		inst = &migInstance{gi: gi, ci: ci}
		d.mig[uuid] = inst
	}
	inst.seen = d.gen
	if !inst.haveAttrs {
		inst.attrs, inst.haveAttrs = get(c, callGetAttributes, mh.GetAttributes)
	}
	if !inst.haveName {
		var name string
		name, inst.haveName = get(c, callGetName, mh.GetName)
		inst.profile = profileFromName(name)
	}

	out := gpu.Instance{
		Index:             index,
		UUID:              uuid,
		GPUInstanceID:     inst.gi,
		ComputeInstanceID: inst.ci,
		Profile:           inst.profile,
		MemoryUsedBytes:   gpu.NA,
		MemoryTotalBytes:  gpu.NA,
		SMActive:          gpu.NA,
		SMOccupancy:       gpu.NA,
		TensorActive:      gpu.NA,
		DRAMActive:        gpu.NA,
	}
	profileMem := gpu.NA
	if inst.haveAttrs {
		out.Slices = int(inst.attrs.ComputeInstanceSliceCount)
		if out.Slices == 0 {
			out.Slices = int(inst.attrs.GpuInstanceSliceCount)
		}
		if inst.attrs.MemorySizeMB > 0 {
			profileMem = float64(inst.attrs.MemorySizeMB) * bytesPerMiB
		}
		if out.Profile == "" && parentTotal > 0 {
			// Cached: the name is settled once the parent's size is known.
			inst.profile = profileFromAttributes(inst.attrs, parentTotal)
			out.Profile = inst.profile
		}
	} else if p, ok := parseProfile(out.Profile); ok {
		out.Slices = p.computeSlices
		profileMem = float64(p.memoryGB) * (1 << 30)
	}
	out.MemorySlices = memorySlices(profileMem, parentTotal)

	if m, ok := get(c, callGetMemoryInfo, mh.GetMemoryInfo); ok {
		out.MemoryUsedBytes = float64(m.Used)
		out.MemoryTotalBytes = float64(m.Total)
	}
	if ps, ok := get(c, callGetComputeRunningProcesses, mh.GetComputeRunningProcesses); ok {
		for _, p := range ps {
			d.procs = append(d.procs, process(p, inst.gi, inst.ci))
		}
	}
	if d.gpmMode == gpmSupported {
		r := inst.gpm.sample(c, d.lib, parent, inst.gi, true)
		out.SMActive, out.SMOccupancy, out.TensorActive, out.DRAMActive = r[0], r[1], r[2], r[3]
	}
	d.insts = append(d.insts, out)
}

// migComputeSlices is the GPU's total of MIG compute slices: the slice
// count of the largest GPU instance profile it offers. NVML has no call for
// the total, and the largest profile differs by model (7g on A100, 4g on
// A30). Profiles a GPU lacks answer NOT_SUPPORTED or INVALID_ARGUMENT,
// which is the expected answer here and not an error to count.
func migComputeSlices(h gonvml.Device) int {
	most := 0
	for p := 0; p < gonvml.GPU_INSTANCE_PROFILE_COUNT; p++ {
		if info, ret := h.GetGpuInstanceProfileInfo(p); ret == gonvml.SUCCESS {
			most = max(most, int(info.SliceCount))
		}
	}
	return most
}

// profileFromName extracts the profile from a MIG device name such as
// "NVIDIA H100 80GB HBM3 MIG 1g.10gb".
func profileFromName(name string) string {
	const sep = " MIG "
	i := strings.LastIndex(name, sep)
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(name[i+len(sep):])
}

// profileFromAttributes names a profile the way NVIDIA does ("1g.10gb",
// "1c.2g.20gb") for MIG devices whose name does not carry it. The memory
// size is the instance's share of the GPU rounded up to eighths, applied to
// the GPU's size in whole GiB, as the device plugin computes it.
func profileFromAttributes(a gonvml.DeviceAttributes, parentTotal float64) string {
	if a.GpuInstanceSliceCount == 0 {
		return ""
	}
	mem := float64(a.MemorySizeMB) * bytesPerMiB
	gb := math.Round(mem / (1 << 30))
	if parentTotal > 0 {
		share := math.Ceil(mem/parentTotal*8) / 8
		gb = math.Round(share * math.Ceil(parentTotal/(1<<30)))
	}
	var b strings.Builder
	if ci := a.ComputeInstanceSliceCount; ci != 0 && ci < a.GpuInstanceSliceCount {
		b.WriteString(strconv.FormatUint(uint64(ci), 10))
		b.WriteString("c.")
	}
	b.WriteString(strconv.FormatUint(uint64(a.GpuInstanceSliceCount), 10))
	b.WriteString("g.")
	b.WriteString(strconv.FormatFloat(gb, 'f', 0, 64))
	b.WriteString("gb")
	return b.String()
}

// profile is a parsed MIG profile name.
type profile struct {
	computeSlices int // compute-instance slices ("1c.") or else GPU-instance slices
	memoryGB      int
}

// parseProfile parses "1g.10gb", "1c.2g.20gb" or "1g.10gb+me".
func parseProfile(s string) (profile, bool) {
	var p profile
	var gi, ci int
	s, _, _ = strings.Cut(s, "+")
	for _, part := range strings.Split(s, ".") {
		var err error
		switch {
		case strings.HasSuffix(part, "gb"):
			p.memoryGB, err = strconv.Atoi(strings.TrimSuffix(part, "gb"))
		case strings.HasSuffix(part, "g"):
			gi, err = strconv.Atoi(strings.TrimSuffix(part, "g"))
		case strings.HasSuffix(part, "c"):
			ci, err = strconv.Atoi(strings.TrimSuffix(part, "c"))
		default:
			return profile{}, false
		}
		if err != nil {
			return profile{}, false
		}
	}
	if gi <= 0 || p.memoryGB <= 0 {
		return profile{}, false
	}
	p.computeSlices = gi
	if ci > 0 {
		p.computeSlices = ci
	}
	return p, true
}
