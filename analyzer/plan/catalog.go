package plan

import (
	"github.com/gpulens/gpulens/analyzer/recommend"
)

// This file is the planner's only contact with the MIG catalog and the
// price table, so that moving the catalog elsewhere changes one file.

// Profile is one MIG profile a slice of a planned GPU can take.
type Profile struct {
	Name string
	// Instances is how many of it one GPU holds at most.
	Instances       int
	MemoryEighths   int
	ComputeSevenths int
	// MemoryBytes is the nominal size (decimal gigabytes in the name):
	// NVML reports a few percent more, so a fit against it is
	// conservative.
	MemoryBytes float64
}

// Resource is the extended resource a pod asks for under the mixed MIG
// strategy.
func (p Profile) Resource() string { return "nvidia.com/mig-" + p.Name }

// Model is a GPU model as the planner needs it.
type Model struct {
	// Key is the catalog's name, also the price table's.
	Key         string
	MemoryBytes float64
	// MIG lists the profiles from the smallest; empty without MIG.
	MIG []Profile
}

// Profile returns the model's MIG profile called name.
func (m Model) Profile(name string) (Profile, bool) {
	for _, p := range m.MIG {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// lookupModel finds the catalog entry of a product name.
func lookupModel(name string) (Model, bool) {
	m, ok := recommend.LookupModel(name)
	if !ok {
		return Model{}, false
	}
	out := Model{Key: m.Key, MemoryBytes: m.MemoryBytes}
	for _, p := range m.MIG {
		out.MIG = append(out.MIG, Profile{Name: p.Name, Instances: p.Instances, MemoryEighths: p.MemoryEighths,
			ComputeSevenths: p.ComputeSevenths, MemoryBytes: p.MemoryBytes})
	}
	return out, true
}

// pricePerHour is one whole GPU's price, false when unknown.
func pricePerHour(p *recommend.Prices, model string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	v, err := p.PerHour(model)
	return v, err == nil
}
