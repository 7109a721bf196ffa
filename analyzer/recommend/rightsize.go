package recommend

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/price"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/vocab"
)

// FitMIG is the smallest profile of u's model whose memory covers the p99
// peak with margin and whose compute covers the p95 load at the target;
// false when the model has no MIG or nothing but the whole GPU would fit
// and even that does not. "Smallest" is by share under the policy's mode,
// then by memory, then by compute.
func FitMIG(u Usage, p criteria.Policy) (price.MIGProfile, bool) {
	m, ok := price.LookupModel(u.Model)
	if !ok || len(m.MIG) == 0 {
		return price.MIGProfile{}, false
	}
	// +me profiles hold the GPU's only media engines: no workload is
	// moved onto one to save money.
	profiles := slices.DeleteFunc(slices.Clone(m.MIG), price.MIGProfile.MediaExtension)
	slices.SortStableFunc(profiles, func(a, b price.MIGProfile) int {
		return cmp.Or(cmp.Compare(price.ProfileShare(p.MIGShare, a), price.ProfileShare(p.MIGShare, b)),
			cmp.Compare(a.MemoryBytes, b.MemoryBytes), cmp.Compare(a.ComputeSlices, b.ComputeSlices))
	})
	need, load := u.P99MemoryBytes*(1+p.MemoryMargin), u.Load()
	for _, prof := range profiles {
		if prof.MemoryBytes >= need && load <= prof.ComputeShare()*p.ComputeTarget {
			return prof, true
		}
	}
	return price.MIGProfile{}, false
}

// migNodeNote says where a recommended MIG profile can be scheduled: on
// the device plugin's path a node whose MIG manager config (the mixed
// strategy) offers it; through DRA a GPU whose MIG layout holds it, since
// the driver publishes only the MIG devices that exist.
func migNodeNote(model, profile string, throughDRA bool) string {
	if throughDRA {
		return fmt.Sprintf("needs a %s whose MIG layout offers %s: the DRA driver publishes the MIG devices that exist", model, profile)
	}
	return fmt.Sprintf("needs a %s node with the mixed MIG strategy offering %s (nvidia.com/mig.config)", model, profile)
}

// RightSize is the smallest request that fits u when it is smaller than
// what u holds: a MIG profile on MIG-capable models, a time-slicing share
// on the others. Nil when u already holds the smallest that fits, or its
// model is unknown.
func RightSize(u Usage, p criteria.Policy) *Recommendation {
	current := u.currentShare(p.MIGShare)
	if prof, ok := FitMIG(u, p); ok {
		to := price.ProfileShare(p.MIGShare, prof)
		if to >= current || (u.Sharing == vocab.SharingMIG && prof.Name == u.MIGProfile) {
			return nil
		}
		r := u.retarget(&Recommendation{
			Action:   ActionMIGProfile,
			Workload: u.Workload,
			Summary: fmt.Sprintf("request a %s MIG slice instead: it holds the p99 memory peak of %s with %s margin and the p95 load of %s of the GPU at %s of its %d/%d compute",
				prof.Name, gib(u.P99MemoryBytes), pct(p.MemoryMargin), pct(u.Load()), pct(p.ComputeTarget), prof.ComputeSlices, prof.GPUComputeSlices),
			CurrentShare: current, RecommendedShare: to,
		}, prof.Resource(), ClaimChange{DeviceClass: dra.ClassMIG, MIGProfile: prof.Name})
		r.Notes = append(r.Notes, migNodeNote(u.Model, prof.Name, u.Claim != nil || u.ThroughDRA))
		return r
	}
	if m, ok := price.LookupModel(u.Model); ok && len(m.MIG) > 0 {
		return nil // MIG-capable, and not even a smaller slice fits
	}
	if u.Sharing == vocab.SharingMIG {
		// A MIG slice of a model whose geometry is unknown: a
		// time-slicing share of the device would be advice about a GPU
		// the slice does not have (Unsizable says why).
		return nil
	}
	r := timeSlice(u, p, current)
	if v, ok := price.ParseVGPU(u.Model); ok && r != nil {
		// The device plugin time-slices a vGPU inside its guest as it
		// does a GPU; MIG it cannot.
		r.Notes = append(r.Notes, vgpuNoMIG(u.Model, v))
	}
	return r
}

// timeSlice is the largest replica count (2, 4, 8, ... up to the policy's
// maximum) at which u's memory and load fit one replica's share.
func timeSlice(u Usage, p criteria.Policy, current float64) *Recommendation {
	dev := u.deviceMemory()
	if dev == 0 {
		return nil
	}
	need, load := u.P99MemoryBytes*(1+p.MemoryMargin), u.Load()
	best := 0
	for r := 2; r <= p.MaxReplicas; r *= 2 {
		if need <= dev/float64(r) && load <= p.ComputeTarget/float64(r) {
			best = r
		}
	}
	if best == 0 || 1/float64(best) >= current {
		return nil
	}
	summary := fmt.Sprintf("request a 1/%d time-sliced share of a %s instead: its p99 memory peak of %s with %s margin fits a %d-way split of %s and its p95 load of %s fits %s of one",
		best, u.Model, gib(u.P99MemoryBytes), pct(p.MemoryMargin), best, gib(dev), pct(load), pct(p.ComputeTarget))
	if req, ok := u.Claim.GPU(); ok {
		// Through DRA a GPU is shared by the pods that name one claim,
		// not by a resource name: no template change makes the pods of
		// several workloads meet on one device. The driver's GpuConfig
		// sets the strategy (k8s-dra-driver-gpu
		// api/nvidia.com/resource/v1beta1/sharing.go: TimeSlicing, MPS).
		return &Recommendation{
			Action: ActionTimeSlicing, Workload: u.Workload, Summary: summary,
			Allocation: vocab.AllocationPathDRA, Claim: u.Claim.Source(),
			From: req.Device(), To: fmt.Sprintf("%s shared %d ways", req.Device(), best),
			CurrentShare: current, RecommendedShare: 1 / float64(best),
			Notes: []string{fmt.Sprintf("through DRA, pods share a GPU by naming one ResourceClaim (with the driver's GpuConfig sharing strategy TimeSlicing): "+
				"create one for up to %d such workloads and point their pods' resourceClaims entry at it instead of %s", best, u.Claim.Source()),
				"time-slicing does not isolate memory: co-tenants' peaks add up"},
		}
	}
	const shared = vocab.ResourceGPUShared
	r := u.retarget(&Recommendation{
		Action: ActionTimeSlicing, Workload: u.Workload, Summary: summary,
		CurrentShare: current, RecommendedShare: 1 / float64(best),
		DevicePluginConfig: timeSlicingConfig(vocab.SharingTimeSlicing, best),
		Sharing:            sharingOf(vocab.SharingTimeSlicing, best),
	}, shared, ClaimChange{})
	r.Notes = append(r.Notes, "time-slicing does not isolate memory: co-tenants' peaks add up, so watch the timeslice-oom-risk finding",
		"apply the config to a dedicated shared node pool (nvidia.com/device-plugin.config label)")
	return r
}

// Unsizable says why u gets no right-sizing at all when the reason is the
// catalog's, not u's usage: a MIG slice of a model whose profiles are not
// known, or a vGPU, which MIG advice cannot reach. Empty otherwise.
func Unsizable(u Usage) string {
	if v, ok := price.ParseVGPU(u.Model); ok {
		return vgpuNoMIG(u.Model, v)
	}
	if u.Sharing != vocab.SharingMIG {
		return ""
	}
	if m, ok := price.LookupModel(u.Model); ok && len(m.MIG) > 0 {
		if _, ok := m.Profile(u.MIGProfile); ok {
			return ""
		}
		return fmt.Sprintf("no profile advice: %s is not a MIG profile of %s in the catalog", u.MIGProfile, m.Key)
	}
	return fmt.Sprintf("no profile advice: the MIG geometry of %s is not in the catalog, so no slice size can be recommended", u.Model)
}

// vgpuNoMIG says why a vGPU gets no MIG advice.
func vgpuNoMIG(model string, v price.VGPU) string {
	return fmt.Sprintf("no MIG advice: %s is a vGPU (type %s), a virtual machine's slice of a board; MIG is set up on the hypervisor host, not inside the guest, so a smaller slice is a smaller vGPU type, asked of whoever runs the hypervisor",
		model, v.Type())
}
