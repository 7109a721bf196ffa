package price

import (
	"regexp"
	"strings"

	"github.com/gpulens/gpulens/internal/mig"
)

// MIGProfile is one GPU instance profile of a model, from the shared
// catalog (internal/mig).
type MIGProfile = mig.Profile

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

// withMIG is a MIG-capable model, its geometry from the shared catalog.
func withMIG(key string) Model {
	m, ok := mig.Lookup(key)
	if !ok {
		panic("price: " + key + " is not in internal/mig")
	}
	return Model{Key: m.Key, MemoryBytes: m.MemoryBytes, MIG: m.Profiles}
}

// catalog lists the models prices and right-sizing know, with the
// product-name patterns of NVML and dcgm-exporter's modelName (the same
// string: DCGM reads it from NVML). MIG-capable models are matched by
// internal/mig, which owns their geometry; these are the rest. Patterns
// are tried in order, so the more specific ones come first.
var catalog = []struct {
	match *regexp.Regexp
	model Model
}{
	{regexp.MustCompile(`\bl40s\b`), Model{"L40S", 48 * gb, nil}},
	{regexp.MustCompile(`\bl4\b`), Model{"L4", 24 * gb, nil}},
	{regexp.MustCompile(`\bt4\b`), Model{"T4", 16 * gb, nil}},
	{regexp.MustCompile(`\ba10g\b`), Model{"A10G", 24 * gb, nil}},
	{regexp.MustCompile(`\ba10\b`), Model{"A10", 24 * gb, nil}},
}

// LookupModel finds the catalog entry of an NVML product name or a
// dcgm-exporter modelName ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 NVL",
// "Tesla T4"), or of a catalog key ("H100-80GB"). A vGPU ("GRID
// A100-10C") is not a model of the catalog: it holds a slice of its board
// (ParseVGPU), whose memory, MIG profiles and price would all be wrong
// for it.
func LookupModel(name string) (Model, bool) {
	if _, ok := ParseVGPU(name); ok {
		return Model{}, false
	}
	if m, ok := mig.Lookup(name); ok {
		return withMIG(m.Key), true
	}
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
	var keys []string
	for _, m := range mig.Models() {
		keys = append(keys, m.Key)
	}
	for _, c := range catalog {
		keys = append(keys, c.model.Key)
	}
	return keys
}
