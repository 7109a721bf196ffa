package attribution

import (
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/internal/mig"
)

// epsilon absorbs float rounding when checking that shares fit (7 × 1/7 is
// not exactly 1), so exact splits are never rescaled.
const epsilon = 1e-9

// allocate sets Sharing and Allocation of every record, then makes the
// shares on each physical GPU sum to at most 1.
func (p *pass) allocate() {
	sharedMode := SharingTimeSlicing
	if p.in.SharedMode == SharingMPS {
		sharedMode = SharingMPS
	}
	perGPU := make(map[int]float64, len(p.snap.Devices))
	for _, g := range p.groups {
		dev := &p.snap.Devices[g.at.dev]
		base, sharing := 1.0, SharingNone
		switch {
		case g.at.inst >= 0:
			base, sharing = migShare(dev, g.at.inst), SharingMIG
		case g.shared():
			sharing = sharedMode
		}
		// The split is what the node advertises; when the kubelet does not
		// say (no GetAllocatableResources) or more replicas are in use than
		// advertised, the replicas seen in use are the best lower bound.
		split := g.advertised
		if split <= 0 || g.units > split {
			split = g.units
		}
		for _, t := range g.tenants {
			t.rec.Sharing = sharing
			t.rec.Allocation = base
			switch {
			case g.replicated:
				t.rec.Allocation = base * float64(min(t.units, split)) / float64(split)
			case g.claimed:
				// One claimed device consumed by several containers (a
				// claim that pods or containers share): each holds an
				// equal part of it.
				t.rec.Allocation = base / float64(len(g.tenants))
			}
			perGPU[g.at.dev] += t.rec.Allocation
		}
	}
	// Only contradictory allocations get here (a whole-GPU ID and replicas of
	// the same GPU, or two containers given one exclusive device); scaling
	// keeps every share visible while restoring the invariant.
	for _, g := range p.groups {
		if sum := perGPU[g.at.dev]; sum > 1+epsilon {
			for _, t := range g.tenants {
				t.rec.Allocation /= sum
			}
		}
	}
}

// migShare is the share of the physical GPU that a MIG instance's compute
// slices make up, of the GPU's total as NVML reports it, else as the shared
// catalog has it.
func migShare(dev *gpu.Device, inst int) float64 {
	slices, total := dev.Instances[inst].Slices, dev.MIGComputeSlices
	if total <= 0 {
		// NVML did not say: the catalog's geometry of the model.
		if m, ok := mig.Lookup(dev.Model); ok {
			total = m.ComputeSlices
		}
	}
	if slices <= 0 || total <= 0 {
		// Unknown profile or geometry: an even split of the instances is
		// the only estimate that still sums to at most 1.
		return 1 / float64(len(dev.Instances))
	}
	return min(1, float64(slices)/float64(total))
}
