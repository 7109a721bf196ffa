package findings

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// SharingSharedClaim is Finding.Sharing for a GPU several pods use at
// once through one ResourceClaim: each pod's spec.resourceClaims names the
// claim (resourceClaimName), and the claim's one device is every such
// pod's (resource.k8s.io/v1; the scheduler lists them in the claim's
// status.reservedFor). It is not time-slicing: no device plugin config
// shares the GPU, so none of its answers applies, and the change is made
// to the claim.
const SharingSharedClaim vocab.Sharing = "shared-claim"

// sharedClaimOf is the ResourceClaim every tenant of g holds it through,
// as the exporter's series say (gpulens_container_gpu_claim_info, or
// dcgm-exporter's dra_claim_namespace and dra_claim_name on each pod's
// copy); false when some tenant came through a device plugin or another
// claim, or none through a claim.
func (d *detector) sharedClaimOf(g fleet.GPU) (fleet.ClaimRef, bool) {
	var claim fleet.ClaimRef
	for _, a := range d.res.Allocations {
		if a.Node != g.Node || a.UUID != g.UUID {
			continue
		}
		if a.AllocationPath != vocab.AllocationPathDRA || a.Claim.Name == "" || (claim.Name != "" && a.Claim != claim) {
			return fleet.ClaimRef{}, false
		}
		claim = a.Claim
	}
	return claim, claim.Name != ""
}

// sharedClaimOOM completes f for a GPU whose pods share one
// ResourceClaim: the claim, its pods and the device are named, the
// device's memory is given once, and the advice goes through the claim
// (recommend.ClaimPerPod), priced for the whole device: an OOM takes
// every pod of the claim down.
func (d *detector) sharedClaimOOM(f *Finding, g fleet.GPU, claim fleet.ClaimRef, heaviest recommend.Tenant, measure string,
	inUse, dev, ratio, projRatio, growth, horizon, toFull, projected float64, blind, copies bool) {
	f.Sharing = SharingSharedClaim
	f.AllocationPath, f.Claims = vocab.AllocationPathDRA, []string{claim.String()}
	f.Evidence["shared_claim"] = 1
	owner := heaviest.Workload
	sc := recommend.SharedClaim{Workload: owner, Claim: claim.String(), Pods: f.Pods, Model: g.Model, DeviceMemoryBytes: dev, NeedBytes: projected}
	if d.haveInventory() {
		if c := d.inv.GPUClaimOf(claim.Namespace, f.Pods); c != nil && c.ResourceClaim == claim.Name {
			sc.Spec = c
		}
	}
	f.Recommendation = recommend.ClaimPerPod(sc, d.cfg.Recommend, d.prices)
	whose := "pods " + strings.Join(f.Pods, ", ")
	if owner.Name != "" && owner.Kind != "Pod" {
		whose += fmt.Sprintf(" of %s %s/%s", owner.Kind, owner.Namespace, owner.Name)
	}
	f.Summary = fmt.Sprintf("shared ResourceClaim %s (%s) on %s GPU %s on %s: %s at its p99 is %s of its %s (%s)",
		claim, whose, shortModel(g.Model), g.UUID, g.Node, measure, gib(inUse), gib(dev), pct(ratio))
	f.Summary += growthClause(projRatio, ratio, growth, horizon, toFull)
	switch {
	case copies:
		f.Summary += "; how it splits between the pods is not known: dcgm-exporter gives each pod of a claim a copy of the device's series, so each shows the whole device's memory"
	case blind:
		f.Evidence["tenant_memory_unknown"] = 1
		f.Summary += "; how it splits between the pods is not known: the exporter runs without hostPID (allocation-only)"
	case heaviest.Workload.Name != "":
		f.Summary += fmt.Sprintf("; the pod that grows most holds %s of it at its p99", gib(heaviest.P99MemoryBytes))
	}
	f.Summary += ": " + f.Recommendation.Summary
	d.cost(f, g.Model, 1, f.Recommendation)
	if f.CostKnown && f.MonthlySavingsUSD < 0 {
		f.Summary += fmt.Sprintf("; a device per pod costs $%.0f more a month: a reliability fix, not a saving", -f.MonthlySavingsUSD)
	}
	d.add(*f)
}
