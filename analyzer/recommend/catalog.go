package recommend

import (
	"fmt"
	"regexp"
	"strings"
)

// MIGProfile is one GPU instance profile of a model.
type MIGProfile struct {
	// Name is the profile as the device plugin advertises it, e.g. 1g.10gb.
	Name string
	// Instances is how many of it fit on one GPU.
	Instances int
	// MemoryEighths and ComputeSevenths are its share of the GPU's memory
	// and of its compute (streaming multiprocessor) slices.
	MemoryEighths   int
	ComputeSevenths int
	// MemoryBytes is the nominal size in the name, in decimal gigabytes:
	// what NVML reports is a few percent more, so a fit is conservative.
	MemoryBytes float64
}

// Resource is the extended resource name under the mixed MIG strategy.
func (p MIGProfile) Resource() string { return "nvidia.com/mig-" + p.Name }

// Model is a GPU model the catalog knows.
type Model struct {
	// Key is the catalog's name for it, also the price table's key.
	Key         string
	MemoryBytes float64
	// MIG lists the profiles from the smallest; empty when the model has
	// no MIG (time-slicing or MPS only).
	MIG []MIGProfile
}

// Profile returns the model's MIG profile called name.
func (m Model) Profile(name string) (MIGProfile, bool) {
	for _, p := range m.MIG {
		if p.Name == name {
			return p, true
		}
	}
	return MIGProfile{}, false
}

const gb = 1e9

// migLayout is the geometry every MIG-capable model shares: the same
// instance counts, eighths and sevenths, with the model's memory sizes.
func migLayout(small, half, quarter, full int) []MIGProfile {
	return []MIGProfile{
		{fmt.Sprintf("1g.%dgb", small), 7, 1, 1, float64(small) * gb},
		{fmt.Sprintf("1g.%dgb", quarter), 4, 2, 1, float64(quarter) * gb},
		{fmt.Sprintf("2g.%dgb", quarter), 3, 2, 2, float64(quarter) * gb},
		{fmt.Sprintf("3g.%dgb", half), 2, 4, 3, float64(half) * gb},
		{fmt.Sprintf("4g.%dgb", half), 1, 4, 4, float64(half) * gb},
		{fmt.Sprintf("7g.%dgb", full), 1, 8, 7, float64(full) * gb},
	}
}

// catalog is the MIG table of DESIGN.md ("Facts to build on"), the models
// without MIG, and the product-name patterns of NVML and dcgm-exporter's
// modelName (the same string: DCGM reads it from NVML). Patterns are tried
// in order, so the more specific ones come first.
var catalog = []struct {
	match *regexp.Regexp
	model Model
}{
	{regexp.MustCompile(`\ba100\b.*80\s*gb`), Model{"A100-80GB", 80 * gb, migLayout(10, 40, 20, 80)}},
	{regexp.MustCompile(`\ba100\b`), Model{"A100-40GB", 40 * gb, migLayout(5, 20, 10, 40)}},
	{regexp.MustCompile(`\bh100\b.*nvl`), Model{"H100-NVL-94GB", 94 * gb, migLayout(12, 47, 24, 94)}},
	{regexp.MustCompile(`\bh100\b`), Model{"H100-80GB", 80 * gb, migLayout(10, 40, 20, 80)}},
	{regexp.MustCompile(`\bh200\b`), Model{"H200-141GB", 141 * gb, migLayout(18, 71, 35, 141)}},
	{regexp.MustCompile(`\bb200\b`), Model{"B200-180GB", 180 * gb, migLayout(23, 90, 45, 180)}},
	{regexp.MustCompile(`\bl40s\b`), Model{"L40S", 48 * gb, nil}},
	{regexp.MustCompile(`\bl4\b`), Model{"L4", 24 * gb, nil}},
	{regexp.MustCompile(`\bt4\b`), Model{"T4", 16 * gb, nil}},
	{regexp.MustCompile(`\ba10g\b`), Model{"A10G", 24 * gb, nil}},
	{regexp.MustCompile(`\ba10\b`), Model{"A10", 24 * gb, nil}},
}

// LookupModel finds the catalog entry of an NVML product name or a
// dcgm-exporter modelName ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 NVL",
// "Tesla T4"), or of a catalog key ("H100-80GB").
func LookupModel(name string) (Model, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return Model{}, false
	}
	for _, c := range catalog {
		if strings.ToLower(c.model.Key) == n {
			return c.model, true
		}
	}
	for _, c := range catalog {
		if c.match.MatchString(n) {
			return c.model, true
		}
	}
	return Model{}, false
}

// ModelKeys lists the catalog's keys in its order.
func ModelKeys() []string {
	keys := make([]string, len(catalog))
	for i, c := range catalog {
		keys[i] = c.model.Key
	}
	return keys
}
