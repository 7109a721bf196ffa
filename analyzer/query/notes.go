package query

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/internal/mig"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// notes summarises partial data. They are counts, not one line per item,
// so a large fleet's report stays readable; the per-item coverage fields
// carry the detail.
func (a *analysis) notes() []string {
	notes := a.hostNotes()
	if len(a.res.GPUs) == 0 {
		notes = append(notes, "no GPU series in the window: is the exporter scraped, and is the window right?")
	}
	if n := staleNote(a.res); n != "" {
		notes = append(notes, n)
	}
	var partialGPUs, noUtilGPUs int
	lowest := -1
	for i, g := range a.res.GPUs {
		if g.Steps < a.res.ExpectedSteps {
			partialGPUs++
			if lowest < 0 || g.Coverage < a.res.GPUs[lowest].Coverage {
				lowest = i
			}
		}
		if g.UtilizationSteps == 0 {
			noUtilGPUs++
		}
	}
	if partialGPUs > 0 {
		g := a.res.GPUs[lowest]
		notes = append(notes, fmt.Sprintf("%d of %d GPUs reported for only part of the window (lowest: %s on %s, %.0f%%); their hours cover only what was reported",
			partialGPUs, len(a.res.GPUs), g.UUID, g.Node, 100*g.Coverage))
	}
	if noUtilGPUs > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs have no utilization samples: their utilization is unknown, not zero", noUtilGPUs))
	}
	var noUtil, partialUtil, migNoMemory int
	for _, x := range a.res.Allocations {
		if x.MIGProfile != "" && x.MemorySteps == 0 {
			migNoMemory++
		}
		switch {
		case x.UtilizationSteps == 0:
			noUtil++
		case x.UtilizationSteps < x.Steps:
			partialUtil++
		}
	}
	if n := ampereSlicesWithUtilization(a.res.Allocations); n > 0 {
		notes = append(notes, fmt.Sprintf("%d MIG slices of Ampere GPUs (A100, A30) have utilization from dcgm-exporter's %s of their GPU instance: NVML has none per slice before Hopper (no GPM)", n, dcgm.GREngineActive))
	}
	if n := ampereSlicesWithoutUtilization(a.res.Allocations); n > 0 {
		notes = append(notes, fmt.Sprintf("%d MIG slices of Ampere GPUs (A100, A30) have no utilization: NVML has none per slice before Hopper (no GPM), so it is unknown; dcgm-exporter's %s measures it, where it runs", n, dcgm.GREngineActive))
	}
	if migNoMemory > 0 {
		notes = append(notes, fmt.Sprintf("%d MIG slices have no memory samples (dcgm-exporter reports no %s or %s for the GPU instances of an H100 in MIG mode: dcgm-exporter #380, #512): their memory is unknown, not zero, and no slice size is judged by it",
			migNoMemory, dcgm.FBUsed, dcgm.FBFree))
	}
	if noUtil > 0 {
		notes = append(notes, fmt.Sprintf("%d allocations have no utilization samples: their utilization is unknown, not zero", noUtil))
	}
	if partialUtil > 0 {
		notes = append(notes, fmt.Sprintf("%d allocations have utilization samples for only part of the time they were held; averages are over the samples present", partialUtil))
	}
	notes = append(notes, a.attributionNotes()...)
	notes = append(notes, a.missingNotes...)
	if a.sharingChanged > 0 {
		notes = append(notes, fmt.Sprintf("%d allocations changed sharing mode within the window; one mode is reported for each", a.sharingChanged))
	}
	return notes
}

// ampereSlicesWithUtilization counts the Ampere MIG slices measured
// anyway: under either schema that is dcgm-exporter's graphics-engine
// activity of the instance, since NVML has no other.
func ampereSlicesWithUtilization(allocs []fleet.Allocation) int {
	n := 0
	for _, x := range allocs {
		if m, ok := mig.Lookup(x.Model); ok && m.Ampere && x.Sharing == vocab.SharingMIG && x.UtilizationSteps > 0 {
			n++
		}
	}
	return n
}

func ampereSlicesWithoutUtilization(allocs []fleet.Allocation) int {
	n := 0
	for _, x := range allocs {
		if m, ok := mig.Lookup(x.Model); ok && m.Ampere && x.Sharing == vocab.SharingMIG && x.UtilizationSteps == 0 {
			n++
		}
	}
	return n
}
