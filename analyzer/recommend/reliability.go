package recommend

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/price"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/vocab"
)

// Release is the change for an idle allocation that cannot be made
// smaller: give it back, which saves all it costs.
func Release(u Usage, p criteria.Policy, holding string) *Recommendation {
	return &Recommendation{
		Action:       ActionRelease,
		Workload:     u.Workload,
		Summary:      "release " + holding + " while idle (scale the workload to zero, or delete the pod): it is the smallest request that fits, so only giving it back saves",
		CurrentShare: u.currentShare(p.MIGShare), RecommendedShare: 0,
	}
}

// Dedicated moves u to a whole GPU of its own (for training-like load on
// a shared GPU, or a workload no slice holds): the device plugin's
// nvidia.com/gpu, or through DRA the gpu.nvidia.com class, keeping the
// claim's count. It usually costs more: Reliability is then set and the
// savings are negative.
func Dedicated(u Usage, p criteria.Policy, why string) *Recommendation {
	current := u.currentShare(p.MIGShare)
	r := u.retarget(&Recommendation{
		Action:       ActionDedicatedGPU,
		Workload:     u.Workload,
		Summary:      "request a dedicated GPU: " + why,
		CurrentShare: current, RecommendedShare: 1,
		Reliability: current < 1,
	}, vocab.ResourceGPU, ClaimChange{DeviceClass: dra.ClassGPU})
	if u.Claim == nil {
		r.Notes = append(r.Notes, "schedule it on a node pool whose GPUs are not shared")
	}
	return r
}

// Upsize is the smallest MIG profile that fits u when u's slice is too
// small, or a dedicated GPU when no slice fits.
func Upsize(u Usage, p criteria.Policy) *Recommendation {
	prof, ok := FitMIG(u, p)
	if !ok || prof.Whole() {
		return Dedicated(u, p, fmt.Sprintf("its p99 memory peak of %s and p95 load of %s of the GPU fit no smaller MIG slice with margin", gib(u.P99MemoryBytes), pct(u.Load())))
	}
	current, to := u.currentShare(p.MIGShare), price.ProfileShare(p.MIGShare, prof)
	if prof.Name == u.MIGProfile || to < current {
		return nil
	}
	return u.retarget(&Recommendation{
		Action:   ActionMIGProfile,
		Workload: u.Workload,
		Summary: fmt.Sprintf("request a %s MIG slice instead of %s: the p99 memory peak of %s and the p95 load of %s of the GPU need its headroom",
			prof.Name, u.MIGProfile, gib(u.P99MemoryBytes), pct(u.Load())),
		CurrentShare: current, RecommendedShare: to,
		Reliability: to > current,
	}, prof.Resource(), ClaimChange{DeviceClass: dra.ClassMIG, MIGProfile: prof.Name})
}

// Tenant is one co-tenant of a shared GPU at risk of running out of memory.
type Tenant struct {
	Usage
	// ProjectedMemoryBytes is its memory at the end of the projection
	// horizon (the p99 peak when not growing).
	ProjectedMemoryBytes float64
	// MemoryUnknown says the tenant's own memory is not known: every
	// tenant's series carries the device's (dcgm-exporter's copies), or
	// none has one (allocation-only). Its memory figures are then the
	// device's, given once, and no tenant's need is derived from them.
	MemoryUnknown bool
	// RanOut, when set, says how the tenant is known to have run the GPU
	// out of memory (Kubernetes saw it die with the GPU full): the one to
	// move, even where its own memory is unknown.
	RanOut string
}

// RelieveOOM answers memory pressure on a time-sliced or MPS GPU. The
// tenant that needs the most memory is the one to act on: under MPS its
// pinned-memory limit (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) turns a GPU-wide
// OOM into its own allocation failure; under time-slicing, which has no
// memory limits, it moves to a GPU of its own. Either way the config's
// replica count drops to what the device's memory can hold.
func RelieveOOM(sharing vocab.Sharing, replicas int, deviceMemory float64, heaviest Tenant, p criteria.Policy) *Recommendation {
	need := math.Max(heaviest.P99MemoryBytes, heaviest.ProjectedMemoryBytes) * (1 + p.MemoryMargin)
	if heaviest.MemoryUnknown && sharing != vocab.SharingMPS {
		// The split of the device's memory between the tenants is not in
		// the data: no tenant's need, and no replica count, follows from
		// it. The device's figure is said once.
		why := fmt.Sprintf("which co-tenant holds the %s in use of the %s its time-sliced GPU has is not known, and time-slicing cannot limit memory",
			gib(heaviest.P99MemoryBytes), gib(deviceMemory))
		if heaviest.RanOut != "" {
			why = heaviest.RanOut + ", and time-slicing cannot limit memory"
		}
		return Dedicated(heaviest.Usage, p, why)
	}
	fewer := 0
	if need > 0 && replicas > 1 {
		fewer = min(replicas-1, int(deviceMemory/need))
	}
	var notes []string
	cfg := ""
	var share *Sharing
	if fewer >= 1 {
		cfg, share = timeSlicingConfig(sharing, fewer), sharingOf(sharing, fewer)
		notes = append(notes, fmt.Sprintf("or cut the GPU's replicas from %d to %d so that every tenant's peak of %s fits", replicas, fewer, gib(need)))
	}
	if sharing == vocab.SharingMPS {
		limit := fmt.Sprintf("0=%dM", int64(math.Ceil(need/(1<<20))))
		current := heaviest.currentShare(p.MIGShare)
		held := heaviest.gpuResources()[0]
		r := &Recommendation{
			Action:   ActionMPSMemoryLimit,
			Workload: heaviest.Workload,
			Summary: fmt.Sprintf("cap %s's MPS pinned device memory at %s (its p99 peak %s plus %s margin) so that it fails alone instead of taking its co-tenants down",
				heaviest.Workload.Name, gib(need), gib(heaviest.P99MemoryBytes), pct(p.MemoryMargin)),
			From: string(held), To: string(held),
			CurrentShare: current, RecommendedShare: current,
			DevicePluginConfig: cfg,
			Sharing:            share,
			Notes:              notes,
		}
		ch := PatchChange{Env: map[string]string{"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": limit}}
		if share != nil {
			// With the config the same output writes, its node
			// advertises the renamed resource.
			ch, r.To = share.under(ch, heaviest.Usage), string(share.Advertises(held))
		}
		r.patchOr(heaviest.Workload, ch)
		return r
	}
	why := fmt.Sprintf("it needs %s of the %s the co-tenants of its time-sliced GPU share, and time-slicing cannot limit memory", gib(need), gib(deviceMemory))
	if need > deviceMemory {
		// No figure above the device it describes: the need is said as
		// more than all of it.
		why = fmt.Sprintf("with %s margin it needs more than all %s the co-tenants of its time-sliced GPU share, and time-slicing cannot limit memory",
			pct(p.MemoryMargin), gib(deviceMemory))
	}
	r := Dedicated(heaviest.Usage, p, why)
	r.DevicePluginConfig, r.Sharing = cfg, share
	if share != nil && r.Allocation == vocab.AllocationPathDevicePlugin {
		// The output writes the config for the nodes it runs on, which
		// then advertise nvidia.com/gpu renamed: a request by the old
		// name would never be scheduled there. On this path Dedicated's
		// request is nvidia.com/gpu.
		r.To = string(share.Advertises(vocab.ResourceGPU))
		r.repatch(heaviest.Workload, share.under(heaviest.change(vocab.ResourceGPU), heaviest.Usage))
		if fewer >= 2 {
			// Under a config of several replicas the patched request
			// is one of them, not a dedicated GPU: the advice says,
			// and prices, what the output does, and a dedicated GPU
			// on an unshared pool is the other way.
			r.Action, r.RecommendedShare = ActionTimeSlicing, 1/float64(fewer)
			r.Summary = fmt.Sprintf("cut its GPU's time-slicing replicas from %d to %d (the device plugin config beside it, on the nodes it runs on) so that every tenant's peak of %s fits, and request one of them (%s): %s",
				replicas, fewer, gib(need), r.To, why)
			notes = []string{"or request a dedicated GPU (" + string(vocab.ResourceGPU) + ") on a node pool whose GPUs are not shared"}
			r.Notes = slices.DeleteFunc(r.Notes, func(n string) bool { return n == "schedule it on a node pool whose GPUs are not shared" })
		}
	}
	r.Notes = append(notes, r.Notes...)
	return r
}
