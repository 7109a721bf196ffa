// Package mig is the one catalog of MIG geometry, shared by the exporter
// (the simulator's mock GPUs, attribution shares) and the analyzer
// (dcgm-exporter shares, right-sizing): which models have MIG, how many
// compute and memory slices a GPU has, and the profiles that fit.
//
// NVML reports an instance's own slice count at run time, and the exporter
// takes it from there; what NVML does not put on a series is the GPU's
// total, which differs by model (7 compute slices on A100 and Hopper, 4 on
// A30 and RTX PRO 6000). A model missing here has no known geometry:
// callers leave its shares to what was measured and recommend no profile.
package mig

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// Profile is one GPU instance profile of a model.
type Profile struct {
	// Name is the profile as nvidia-smi and the device plugin spell it:
	// 1g.10gb, or 1g.10gb+me with the media engines attached.
	Name string
	// Instances is how many of it fit on one GPU.
	Instances int
	// ComputeSlices and MemorySlices are what it holds of the GPU's
	// GPUComputeSlices and GPUMemorySlices.
	ComputeSlices, MemorySlices       int
	GPUComputeSlices, GPUMemorySlices int
	// MemoryBytes is the nominal size in the name, in decimal gigabytes:
	// what NVML reports is a few percent more, so a fit is conservative.
	MemoryBytes float64
}

// ComputeShare is the profile's fraction of the GPU's compute.
func (p Profile) ComputeShare() float64 {
	return float64(p.ComputeSlices) / float64(p.GPUComputeSlices)
}

// MemoryShare is the profile's fraction of the GPU's memory.
func (p Profile) MemoryShare() float64 {
	return float64(p.MemorySlices) / float64(p.GPUMemorySlices)
}

// Whole says whether the profile is the whole GPU.
func (p Profile) Whole() bool { return p.ComputeSlices == p.GPUComputeSlices }

// MediaExtension says whether the profile takes the GPU's media engines
// (+me): one per GPU, meant for video decode, never a right-sizing target.
func (p Profile) MediaExtension() bool { return strings.Contains(p.Name, "+") }

// Resource is the extended resource name under the mixed MIG strategy.
func (p Profile) Resource() vocab.Resource { return vocab.MIGResource(p.Name) }

// Model is a MIG-capable GPU model.
type Model struct {
	// Key is the catalog's name for it, also the price table's key.
	Key         string
	MemoryBytes float64
	// ComputeSlices and MemorySlices are the GPU's totals.
	ComputeSlices, MemorySlices int
	// Profiles are ordered from the smallest.
	Profiles []Profile
	// Ampere is an A100 or A30: NVML has no per-instance utilization on
	// them (GPM, the per-instance counters, came with Hopper), so a slice's
	// utilization is only known from DCGM's profiling fields.
	Ampere bool
	// Pattern matches the model's product name as NVML reports it and
	// dcgm-exporter copies into modelName, lower-cased (RE2, unanchored).
	Pattern string
}

// Profile returns the model's profile called name.
func (m Model) Profile(name string) (Profile, bool) {
	for _, p := range m.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

const gb = 1e9

// sevenSlice is the geometry of A100 and every Hopper and Blackwell data
// center GPU: 7 compute slices over 8 memory slices, with the model's
// memory sizes in the names (smallest 1g, double-memory 1g, half, full).
func sevenSlice(key, pattern string, small, quarter, half, full int) Model {
	m := Model{Key: key, MemoryBytes: float64(full) * gb, ComputeSlices: 7, MemorySlices: 8, Pattern: pattern}
	for _, p := range []struct {
		name                   string
		gbs, instances, c, mem int
	}{
		{"1g.%dgb", small, 7, 1, 1},
		{"1g.%dgb+me", small, 1, 1, 1},
		{"1g.%dgb", quarter, 4, 1, 2},
		{"2g.%dgb", quarter, 3, 2, 2},
		{"3g.%dgb", half, 2, 3, 4},
		{"4g.%dgb", half, 1, 4, 4},
		{"7g.%dgb", full, 1, 7, 8},
	} {
		m.Profiles = append(m.Profiles, m.profile(p.name, p.gbs, p.instances, p.c, p.mem))
	}
	return m
}

// fourSlice is the geometry of A30 and RTX PRO 6000: 4 compute slices over
// 4 memory slices.
func fourSlice(key, pattern string, quarter int, me bool) Model {
	m := Model{Key: key, MemoryBytes: float64(4*quarter) * gb, ComputeSlices: 4, MemorySlices: 4, Pattern: pattern}
	m.Profiles = append(m.Profiles, m.profile("1g.%dgb", quarter, 4, 1, 1))
	if me {
		m.Profiles = append(m.Profiles, m.profile("1g.%dgb+me", quarter, 1, 1, 1))
	}
	m.Profiles = append(m.Profiles, m.profile("2g.%dgb", 2*quarter, 2, 2, 2))
	if me {
		m.Profiles = append(m.Profiles, m.profile("2g.%dgb+me", 2*quarter, 1, 2, 2))
	}
	m.Profiles = append(m.Profiles, m.profile("4g.%dgb", 4*quarter, 1, 4, 4))
	return m
}

func (m Model) profile(format string, gbs, instances, compute, memory int) Profile {
	name := strings.Replace(format, "%d", strconv.Itoa(gbs), 1)
	return Profile{Name: name, Instances: instances, ComputeSlices: compute, MemorySlices: memory,
		GPUComputeSlices: m.ComputeSlices, GPUMemorySlices: m.MemorySlices, MemoryBytes: float64(gbs) * gb}
}

// catalog is tried in order, the more specific patterns first. Sources:
// NVIDIA's MIG user guide (supported profiles per product) and
// DESIGN.md's table. GH200's 96 GB HBM3 version calls itself "GH200 480GB"
// (HBM and LPDDR together). Not listed, because their geometry is not known
// here: GH200 with 144 GB of HBM3e, GB200 and any future model; they get no
// profile advice rather than a wrong one.
var catalog = []Model{
	fourSlice("A30", `\ba30\b`, 6, true),
	sevenSlice("A100-80GB", `\ba100\b.*80\s*gb`, 10, 20, 40, 80),
	sevenSlice("A100-40GB", `\ba100\b`, 5, 10, 20, 40),
	sevenSlice("H100-NVL-94GB", `\bh100\b.*nvl`, 12, 24, 47, 94),
	sevenSlice("H100-80GB", `\bh100\b`, 10, 20, 40, 80),
	sevenSlice("H800-80GB", `\bh800\b`, 10, 20, 40, 80),
	sevenSlice("H200-141GB", `\bh200\b`, 18, 35, 71, 141),
	sevenSlice("GH200-96GB", `\bgh200\b.*\b(480|96)\s*gb`, 12, 24, 48, 96),
	sevenSlice("B200-180GB", `\bb200\b`, 23, 45, 90, 180),
	fourSlice("RTX-PRO-6000", `\brtx pro 6000\b`, 24, true),
}

func init() {
	for i := range catalog {
		switch catalog[i].Key {
		case "A30", "A100-40GB", "A100-80GB":
			catalog[i].Ampere = true
		}
	}
}

var compiled = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(catalog))
	for i, m := range catalog {
		out[i] = regexp.MustCompile(m.Pattern)
	}
	return out
}()

// Lookup finds the model of an NVML product name or dcgm-exporter
// modelName ("NVIDIA A100-SXM4-80GB", "NVIDIA A30"), or of a catalog key.
func Lookup(name string) (Model, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return Model{}, false
	}
	for _, m := range catalog {
		if strings.ToLower(m.Key) == n {
			return m, true
		}
	}
	for i, re := range compiled {
		if re.MatchString(n) {
			return catalog[i], true
		}
	}
	return Model{}, false
}

// Models lists the catalog in its order, the order Lookup tries.
func Models() []Model { return append([]Model(nil), catalog...) }
