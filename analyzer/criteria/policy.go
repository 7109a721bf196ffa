package criteria

import "fmt"

// Policy is how much headroom a right-sized request keeps.
type Policy struct {
	// MemoryMargin is added to the p99 memory peak: 0.2 asks for 20% more.
	MemoryMargin float64 `yaml:"memory_margin" json:"memory_margin"`
	// ComputeTarget is the part of a recommended slice the p95 load may
	// fill: 0.8 leaves a fifth for bursts.
	ComputeTarget float64 `yaml:"compute_target" json:"compute_target"`
	// MIGShare counts a MIG slice by its part of the GPU's compute slices
	// or of its memory slices.
	MIGShare ShareMode `yaml:"mig_share" json:"mig_share"`
	// MaxReplicas caps time-slicing recommendations (2, 4, 8, ...).
	MaxReplicas int `yaml:"max_replicas" json:"max_replicas"`
}

// DefaultPolicy is 20% memory margin, 80% compute target, compute
// slices, at most 8 replicas.
func DefaultPolicy() Policy {
	return Policy{MemoryMargin: 0.2, ComputeTarget: 0.8, MIGShare: ShareCompute, MaxReplicas: 8}
}

// Validate reports values that would make every recommendation wrong.
func (p Policy) Validate() error {
	switch {
	case !(p.MemoryMargin >= 0 && p.MemoryMargin <= 4):
		return fmt.Errorf("memory_margin %v: want 0..4", p.MemoryMargin)
	case !(p.ComputeTarget > 0 && p.ComputeTarget <= 1):
		return fmt.Errorf("compute_target %v: want more than 0, at most 1", p.ComputeTarget)
	case p.MaxReplicas < 2 || p.MaxReplicas > 48:
		// 48 is the device plugin's own limit.
		return fmt.Errorf("max_replicas %d: want 2..48", p.MaxReplicas)
	}
	return p.MIGShare.Validate()
}

// ShareMode is how a MIG slice's share of its GPU is counted.
type ShareMode string

const (
	// ShareCompute counts compute slices, the default: what a slice
	// denies to other tenants is mostly SMs.
	ShareCompute ShareMode = "compute"
	// ShareMemory counts memory slices, for fleets bound by memory.
	ShareMemory ShareMode = "memory"
)

// Validate reports an unknown mode.
func (m ShareMode) Validate() error {
	switch m {
	case ShareCompute, ShareMemory:
		return nil
	}
	return fmt.Errorf("mig_share %q: want compute or memory", string(m))
}
