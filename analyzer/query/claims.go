package query

import (
	"cmp"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"

	"github.com/prometheus/common/model"
)

// claimQueries read which allocations a ResourceClaim made: one instant
// query, the claims signal's steps per allocation and claim over the
// window. It is keyed by allocation, so node shards run it like the
// allocation pass. An allocation it does not name came from a device
// plugin.
func (a *analysis) claimQueries(sch signals.Schema) []namedQuery {
	return []namedQuery{{name: "claims", expr: a.over(signals.CountOverTime, sch.Claims()), apply: a.claimSteps}}
}

// claimSeen is one claim an allocation was seen with, and for how many
// steps.
type claimSeen struct {
	claim fleet.ClaimRef
	steps int
}

func (a *analysis) claimSteps(s *model.Sample) {
	if a.claims == nil {
		a.claims = map[fleet.AllocationKey][]claimSeen{}
	}
	k := allocationKey(s.Metric)
	c := fleet.ClaimRef{Namespace: string(s.Metric[signals.LabelClaimNamespace]), Name: string(s.Metric[signals.LabelClaim])}
	for i := range a.claims[k] {
		if a.claims[k][i].claim == c {
			a.claims[k][i].steps += int(s.Value)
			return
		}
	}
	a.claims[k] = append(a.claims[k], claimSeen{c, int(s.Value)})
}

// settleAllocationPaths gives each allocation its path: DRA through the
// claim it was seen with longest, else the device plugin. A pod's claims
// are fixed for its life, so an allocation key (node, pod, container,
// device) has one claim; two would mean a pod name reused within the
// window, and the longest wins as the sharing mode does (ties to the
// lexically first claim, to be deterministic).
func (a *analysis) settleAllocationPaths() {
	for k, x := range a.allocs {
		x.AllocationPath = vocab.AllocationPathDevicePlugin
		var best *claimSeen
		for i, c := range a.claims[k] {
			if best == nil || c.steps > best.steps || (c.steps == best.steps && cmp.Less(c.claim.String(), best.claim.String())) {
				best = &a.claims[k][i]
			}
		}
		if best != nil {
			x.AllocationPath, x.Claim = vocab.AllocationPathDRA, best.claim
		}
	}
}
