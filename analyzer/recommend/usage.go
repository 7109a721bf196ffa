package recommend

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/price"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Usage is what a right-sizing rule needs to know about one allocation.
type Usage struct {
	Workload workload.Ref
	// Model is the NVML product name; Sharing none, time-slicing, mps or
	// mig; MIGProfile set on mig.
	Model      string
	Sharing    vocab.Sharing
	MIGProfile string
	// Share is the measured share of the physical GPU (1, 1/replicas,
	// the MIG instance's part of the GPU's compute slices).
	Share float64
	// P95Utilization is of the allocation's own share, 0..1.
	P95Utilization float64
	P99MemoryBytes float64
	// DeviceMemoryBytes is the physical GPU's memory; 0 takes the
	// catalog's.
	DeviceMemoryBytes float64
	// Resources are the container's GPU limits by resource name, from the
	// cluster; nil infers them from Sharing and MIGProfile.
	Resources map[vocab.Resource]int64
	// Claim is the DRA claim the workload's pods get the GPU from (the
	// inventory's GPUClaimOf); nil on the device plugin's path, where the
	// change is a patch of the container's limits.
	Claim *dra.Claim
	// ThroughDRA says the metrics show the workload's GPU came through a
	// DRA claim (its allocation path), and ClaimNames which claims
	// (namespace/name): known from the series even where Claim, the
	// claim's spec from the cluster, is not.
	ThroughDRA bool
	ClaimNames []string
}

// Load is the p95 load as a fraction of the physical GPU. Utilization is
// of the allocation's own share (docs/METRICS.md), so it is scaled by the
// share: a MIG slice by its share of the compute slices, a time-sliced or MPS tenant
// by 1/replicas. A tenant's utilization may exceed 1 (it used more than
// its share while the others idled); the product is its fraction of the
// GPU. dcgm-exporter copies the device's utilization to every tenant, so
// there the product splits the device's load evenly by share.
func (u Usage) Load() float64 {
	switch u.Sharing {
	case vocab.SharingMIG:
		if p, ok := u.profile(); ok {
			return u.P95Utilization * p.ComputeShare()
		}
	}
	return min(1, u.P95Utilization*u.shareOrOne())
}

func (u Usage) shareOrOne() float64 {
	if u.Share > 0 && u.Share <= 1 {
		return u.Share
	}
	return 1
}

func (u Usage) profile() (price.MIGProfile, bool) {
	m, ok := price.LookupModel(u.Model)
	if !ok {
		return price.MIGProfile{}, false
	}
	return m.Profile(u.MIGProfile)
}

func (u Usage) deviceMemory() float64 {
	if u.DeviceMemoryBytes > 0 {
		return u.DeviceMemoryBytes
	}
	m, _ := price.LookupModel(u.Model)
	return m.MemoryBytes
}

// currentShare is what the allocation is billed for under mode.
func (u Usage) currentShare(mode criteria.ShareMode) float64 {
	return price.Share(u.Model, u.Sharing, u.MIGProfile, u.Share, mode)
}

// gpuResources are the GPU resource names the container holds now.
func (u Usage) gpuResources() []vocab.Resource {
	var out []vocab.Resource
	for _, r := range sortedKeys(u.Resources) {
		if r.IsNVIDIA() {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		return out
	}
	if u.Sharing == vocab.SharingMIG && u.MIGProfile != "" {
		return []vocab.Resource{vocab.MIGResource(u.MIGProfile)}
	}
	return []vocab.Resource{vocab.ResourceGPU}
}

// change is the change from the current resources to one of to.
func (u Usage) change(to vocab.Resource) PatchChange {
	return PatchChange{Limits: map[vocab.Resource]int64{to: 1}, Remove: u.gpuResources()}
}

// retarget gives r its change of GPU along u's allocation path: on the
// device plugin's, a patch of the container's limits to one of resource;
// through DRA, the change of its claim to ask for claim instead, where
// the resource name means nothing.
func (u Usage) retarget(r *Recommendation, resource vocab.Resource, claim ClaimChange) *Recommendation {
	req, ok := u.Claim.GPU()
	if !ok && u.ThroughDRA {
		// Through DRA without the claim's spec (no cluster access, or no
		// list on resource.k8s.io): the measured need is known, the claim
		// to change is not, and a limits patch would ask the device plugin
		// for a GPU the pod did not get from it. The sizes are said as
		// the driver's device classes, with what to change where.
		r.Allocation = vocab.AllocationPathDRA
		r.From, r.To = dra.DeviceOfResource(u.gpuResources()[0]), dra.DeviceOfResource(resource)
		if len(u.ClaimNames) == 1 {
			r.Claim = "ResourceClaim " + u.ClaimNames[0]
		}
		r.Notes = append(r.Notes, "Its GPUs come through a DRA ResourceClaim, whose spec gpulens could not read (cluster access): "+
			"request "+r.To+" in the claim's ResourceClaimTemplate (device class, MIG profile or count), not in the container's limits.")
		return r
	}
	if !ok {
		r.Allocation = vocab.AllocationPathDevicePlugin
		r.From, r.To = string(u.gpuResources()[0]), string(resource)
		r.patchOr(u.Workload, u.change(resource))
		return r
	}
	r.Allocation, r.Claim = vocab.AllocationPathDRA, u.Claim.Source()
	r.From, r.To = req.Device(), changedRequest(req, claim).Device()
	tmpl, patch, notes := ChangeClaim(u.Workload, u.Claim, claim)
	r.ClaimTemplate, r.Patch = tmpl, patch
	// The device plugin's prerequisites (its MIG strategy, a node pool's
	// config) do not apply to the driver's devices.
	r.Notes = notes
	return r
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }
func pct(r float64) string { return fmt.Sprintf("%.0f%%", 100*r) }
