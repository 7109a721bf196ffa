package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"

	"github.com/gpulens/gpulens/internal/mig"
)

// system describes one value of Node.System: the go-nvml device config the
// mock server is built from plus the physical behaviour the mock does not
// model (power, clocks, PCI topology).
type system struct {
	name   string
	config gpus.Config
	// Driver identity as the matching go-nvml dgx* package reports it.
	driverVersion string
	nvmlVersion   string
	cudaVersion   int

	idleWatts, tdpWatts float64
	idleSMClockMHz      uint32
	maxSMClockMHz       uint32
	memClockMHz         uint32
	idleTempC, maxTempC float64
	// busIDs are the PCI buses of the GPUs of the reference chassis; GPUs
	// past the table get synthesized buses.
	busIDs []uint32
	// migProfiles lists the model's MIG profiles; empty means no MIG.
	migProfiles []migProfile
	gpm         bool
}

// migProfile is one MIG GPU-instance profile. Slices are compute slices,
// memSlices memory slices, of the model's totals in internal/mig.
type migProfile struct {
	name      string
	profileID int
	slices    int
	memSlices int
	maxCount  int
	gpuSlices int // the GPU's compute slices
}

const defaultGPUsPerNode = 8

// maxGPUsPerNode bounds Node.GPUs: no shipping chassis has more.
const maxGPUsPerNode = 16

// l4Config is the NVIDIA L4: go-nvml ships no inference GPU configs.
var l4Config = gpus.Config{
	Name:         "NVIDIA L4",
	Architecture: nvml.DEVICE_ARCH_ADA,
	Brand:        nvml.BRAND_NVIDIA,
	MemoryMB:     23034,
	CudaMajor:    8,
	CudaMinor:    9,
	PciDeviceId:  0x27B810DE,
}

// migLayout is the MIG profiles of a model from the shared catalog, with
// the NVML profile IDs go-nvml's mock servers know them by. The media
// extension (+me) profiles are left out: the mocks do not model media
// engines.
func migLayout(model string) []migProfile {
	m, ok := mig.Lookup(model)
	if !ok {
		panic("sim: no MIG geometry for " + model)
	}
	var out []migProfile
	for _, p := range m.Profiles {
		if p.MediaExtension() {
			continue
		}
		out = append(out, migProfile{name: p.Name, profileID: nvmlProfileID(p), slices: p.ComputeSlices,
			memSlices: p.MemorySlices, maxCount: p.Instances, gpuSlices: p.GPUComputeSlices})
	}
	return out
}

// nvmlProfileID is NVML's GPU instance profile for a slice count; the
// 1-slice profile with more than one memory slice is REV2.
func nvmlProfileID(p mig.Profile) int {
	switch {
	case p.ComputeSlices == 1 && p.MemorySlices > 1:
		return nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2
	case p.ComputeSlices == 1:
		return nvml.GPU_INSTANCE_PROFILE_1_SLICE
	case p.ComputeSlices == 2:
		return nvml.GPU_INSTANCE_PROFILE_2_SLICE
	case p.ComputeSlices == 3:
		return nvml.GPU_INSTANCE_PROFILE_3_SLICE
	case p.ComputeSlices == 4:
		return nvml.GPU_INSTANCE_PROFILE_4_SLICE
	case p.ComputeSlices == 6:
		return nvml.GPU_INSTANCE_PROFILE_6_SLICE
	default:
		return nvml.GPU_INSTANCE_PROFILE_7_SLICE
	}
}

// dgxBuses are the GPU buses of DGX H100/H200/B200 baseboards.
var dgxBuses = []uint32{0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf}

func withName(c gpus.Config, name string) gpus.Config {
	c.Name = name
	return c
}

var systems = map[string]*system{
	"dgxa100": {
		// go-nvml calls this model "Mock NVIDIA A100-SXM4-40GB"; the
		// exporter must see the real product name.
		config:        withName(gpus.A100_SXM4_40GB, "NVIDIA A100-SXM4-40GB"),
		driverVersion: "550.54.15", nvmlVersion: "12.550.54.15", cudaVersion: 12040,
		idleWatts: 55, tdpWatts: 400, idleSMClockMHz: 210, maxSMClockMHz: 1410, memClockMHz: 1215,
		idleTempC: 30, maxTempC: 72,
		busIDs:      []uint32{0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd},
		migProfiles: migLayout("A100-40GB"),
	},
	"dgxa100-80gb": {
		config:        gpus.A100_SXM4_80GB,
		driverVersion: "550.54.15", nvmlVersion: "12.550.54.15", cudaVersion: 12040,
		idleWatts: 60, tdpWatts: 400, idleSMClockMHz: 210, maxSMClockMHz: 1410, memClockMHz: 1593,
		idleTempC: 30, maxTempC: 74,
		busIDs:      []uint32{0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd},
		migProfiles: migLayout("A100-80GB"),
	},
	"dgxh100": {
		config:        gpus.H100_SXM5_80GB,
		driverVersion: "550.54.15", nvmlVersion: "12.550.54.15", cudaVersion: 12040,
		idleWatts: 70, tdpWatts: 700, idleSMClockMHz: 345, maxSMClockMHz: 1980, memClockMHz: 2619,
		idleTempC: 31, maxTempC: 78,
		busIDs:      dgxBuses,
		migProfiles: migLayout("H100-80GB"),
		gpm:         true,
	},
	"dgxh200": {
		config:        gpus.H200_SXM5_141GB,
		driverVersion: "550.54.15", nvmlVersion: "12.550.54.15", cudaVersion: 12040,
		idleWatts: 75, tdpWatts: 700, idleSMClockMHz: 345, maxSMClockMHz: 1980, memClockMHz: 3201,
		idleTempC: 31, maxTempC: 79,
		busIDs:      dgxBuses,
		migProfiles: migLayout("H200-141GB"),
		gpm:         true,
	},
	"dgxb200": {
		config:        gpus.B200_SXM5_180GB,
		driverVersion: "560.28.03", nvmlVersion: "12.560.28.03", cudaVersion: 12060,
		idleWatts: 120, tdpWatts: 1000, idleSMClockMHz: 420, maxSMClockMHz: 1965, memClockMHz: 3996,
		idleTempC: 32, maxTempC: 80,
		busIDs:      dgxBuses,
		migProfiles: migLayout("B200-180GB"),
		gpm:         true,
	},
	"l4": {
		config:        l4Config,
		driverVersion: "550.54.15", nvmlVersion: "12.550.54.15", cudaVersion: 12040,
		idleWatts: 16, tdpWatts: 72, idleSMClockMHz: 210, maxSMClockMHz: 2040, memClockMHz: 6251,
		idleTempC: 28, maxTempC: 70,
		// A typical 2U inference server: one GPU per root port.
		busIDs: []uint32{0x01, 0x21, 0x41, 0x61, 0x81, 0xa1, 0xc1, 0xe1},
	},
}

func init() {
	for name, s := range systems {
		s.name = name
	}
}

// systemNames lists the valid Node.System values for error messages.
func systemNames() string {
	names := make([]string, 0, len(systems))
	for n := range systems {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (s *system) migCapable() bool { return len(s.migProfiles) > 0 }

func (s *system) profile(name string) (migProfile, bool) {
	for _, p := range s.migProfiles {
		if p.name == name {
			return p, true
		}
	}
	return migProfile{}, false
}

func (s *system) profileNames() string {
	names := make([]string, len(s.migProfiles))
	for i, p := range s.migProfiles {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// totalBytes is the framebuffer size NVML reports as Memory.Total.
func (s *system) totalBytes() uint64 { return s.config.MemoryMB << 20 }

// reservedBytes is what the driver keeps for itself (Memory_v2.Reserved):
// about 0.8% of the framebuffer on current drivers.
func (s *system) reservedBytes() uint64 { return (s.config.MemoryMB / 128) << 20 }

// availableBytes is what processes can allocate on a whole GPU.
func (s *system) availableBytes() uint64 {
	return s.totalBytes() - s.reservedBytes() - driverOverheadBytes
}

// instanceBytes is a MIG instance's memory as NVML reports it. go-nvml's
// profile table carries the real (not the marketing) sizes.
func (s *system) instanceBytes(p migProfile) uint64 {
	if info, ok := s.config.MIGProfiles.GpuInstanceProfiles[p.profileID]; ok {
		return info.MemorySizeMB << 20
	}
	return s.totalBytes() * uint64(p.memSlices) / 8
}

func (s *system) instanceInfo(p migProfile) nvml.GpuInstanceProfileInfo {
	return s.config.MIGProfiles.GpuInstanceProfiles[p.profileID]
}

// busID is the PCI bus of GPU index i.
func (s *system) busID(i int) uint32 {
	if i < len(s.busIDs) {
		return s.busIDs[i]
	}
	return uint32(0x100-len(s.busIDs)+i) & 0xff
}

// driverOverheadBytes is the context memory the driver accounts to a device
// (or MIG instance) beyond its processes' own allocations while any process
// runs on it.
const driverOverheadBytes = 4 << 20

// migStarts are the allowed placements of a GPU instance, in memory
// eighths, by (compute slices, memory slices): NVML's placement model on
// A100, H100, H200 and B200. A 3g instance takes half the memory, and the
// last memory slice has no compute slice of its own for a 1g.
func migStarts(slices, memSlices int) []int {
	switch {
	case slices == 1 && memSlices == 1:
		return []int{0, 1, 2, 3, 4, 5, 6}
	case slices == 1 && memSlices == 2:
		return []int{0, 2, 4, 6}
	case slices == 2:
		return []int{0, 2, 4}
	case slices == 3:
		return []int{0, 4}
	default: // 4g and 7g
		return []int{0}
	}
}

// migGIID maps a placement to the GPU instance ID NVML assigns, following
// nvidia-smi's numbering on A100/H100: 7g is 0, 4g 1, 3g 1-2, 2g 3-5, 1g
// 7-13. IDs are unique among instances that can coexist.
func migGIID(slices, start int) int {
	switch slices {
	case 7:
		return 0
	case 4:
		return 1
	case 3:
		return 1 + start/4
	case 2:
		return 3 + start/2
	default:
		return 7 + start
	}
}

// placedInstance is a MIG instance after placement.
type placedInstance struct {
	profile migProfile
	start   int // in memory eighths
	giID    int
}

// placeMIG finds placements for the whole geometry, largest instances
// first, trying every placement (geometries have at most 7 instances).
// Instances keep the geometry's order in the result; ok is false when the
// geometry cannot be placed.
func placeMIG(geometry []migProfile) ([]placedInstance, bool) {
	order := make([]int, len(geometry))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ga, gb := geometry[order[a]], geometry[order[b]]
		if ga.memSlices != gb.memSlices {
			return ga.memSlices > gb.memSlices
		}
		return ga.slices > gb.slices
	})
	out := make([]placedInstance, len(geometry))
	var used [8]bool
	var place func(k int) bool
	place = func(k int) bool {
		if k == len(order) {
			return true
		}
		p := geometry[order[k]]
		for _, start := range migStarts(p.slices, p.memSlices) {
			if start+p.memSlices > len(used) || anyUsed(used[start:start+p.memSlices]) {
				continue
			}
			setUsed(used[start:start+p.memSlices], true)
			out[order[k]] = placedInstance{profile: p, start: start, giID: migGIID(p.slices, start)}
			if place(k + 1) {
				return true
			}
			setUsed(used[start:start+p.memSlices], false)
		}
		return false
	}
	if !place(0) {
		return nil, false
	}
	return out, true
}

func anyUsed(s []bool) bool {
	for _, u := range s {
		if u {
			return true
		}
	}
	return false
}

func setUsed(s []bool, v bool) {
	for i := range s {
		s[i] = v
	}
}

func formatBytes(b uint64) string { return ByteSize(b).String() }

func errUnknown(what, got, want string) string {
	return fmt.Sprintf("unknown %s %q (want %s)", what, got, want)
}
