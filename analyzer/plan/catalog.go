package plan

import "github.com/gpulens/gpulens/analyzer/price"

// This file is the planner's only contact with the MIG catalog and the
// price table, so that moving the catalog elsewhere changes one file.

// Profile and Model are the shared catalog's (internal/mig through
// recommend), whose profiles carry their model's slice totals.
type (
	Profile = price.MIGProfile
	Model   = price.Model
)

// lookupModel finds the catalog entry of a product name.
func lookupModel(name string) (Model, bool) {
	m, ok := price.LookupModel(name)
	if !ok {
		return Model{}, false
	}
	out := Model{Key: m.Key, MemoryBytes: m.MemoryBytes}
	for _, p := range m.MIG {
		if p.MediaExtension() {
			continue // +me holds the GPU's only media engines: never a packing target
		}
		out.MIG = append(out.MIG, p)
	}
	return out, true
}

// vgpuType is the vGPU type of a product name ("GRID A100-10C":
// "A100-10C"); false for a whole GPU.
func vgpuType(name string) (string, bool) {
	v, ok := price.ParseVGPU(name)
	return v.Type(), ok
}

// profileNamed finds a MIG profile of the pool's model by name, the
// media-extension profiles (+me) that the packer never targets included:
// today's layout may hold them.
func profileNamed(pool *Pool, name string) (Profile, bool) {
	if pr, ok := pool.Model.Profile(name); ok {
		return pr, true
	}
	if m, ok := price.LookupModel(pool.Product); ok {
		return m.Profile(name)
	}
	return Profile{}, false
}

// pricePerHour is one whole GPU's price, false when unknown.
func pricePerHour(p *price.Prices, model string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	v, err := p.PerHour(model)
	return v, err == nil
}
