package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
)

func claimNames(cs []query.ClaimRef) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

// throughClaims says, in a finding's summary, which ResourceClaims a DRA
// workload's GPUs came through: a ResourceClaimTemplate mints one per
// pod, so a Deployment's list grows with its rollouts and is counted past
// three.
func throughClaims(claims []string) string {
	switch n := len(claims); {
	case n == 0:
		return "allocated through DRA"
	case n == 1:
		return "allocated through ResourceClaim " + claims[0]
	case n <= 3:
		return "allocated through ResourceClaims " + strings.Join(claims, ", ")
	default:
		return fmt.Sprintf("allocated through %d ResourceClaims, %s among them", n, claims[0])
	}
}

// withoutClaimSpec adjusts a right-sizing of a workload the data says
// holds its GPUs through DRA where the cluster's claims could not be read
// (no cluster access, or no list on resource.k8s.io): the recommendation
// then only knows the measured need, and a patch of the container's GPU
// limits would ask the device plugin for a GPU the pod did not get from
// it. The patch is dropped and a note says what to change instead.
func withoutClaimSpec(rec *recommend.Recommendation, model string, claims []string) {
	if rec == nil || rec.Action == recommend.ActionRelease {
		return
	}
	rec.Allocation, rec.Patch = schema.AllocationPathDRA, nil
	// A MIG profile is scheduled through the driver's MIG devices, not the
	// MIG manager's node config the sizing assumed.
	if profile, ok := strings.CutPrefix(rec.To, "nvidia.com/mig-"); ok {
		if i := slices.Index(rec.Notes, recommend.MIGNodeNote(model, profile, false)); i >= 0 {
			rec.Notes[i] = recommend.MIGNodeNote(model, profile, true)
		}
	}
	// The sizing speaks the device plugin's resource names; through DRA
	// the same sizes are device classes and MIG profiles.
	rec.From, rec.To = dra.DeviceOfResource(rec.From), dra.DeviceOfResource(rec.To)
	if len(claims) == 1 {
		rec.Claim = "ResourceClaim " + claims[0]
	}
	rec.Notes = append(rec.Notes, "Its GPUs come through a DRA ResourceClaim, whose spec gpulens could not read (cluster access): "+
		"request "+rec.To+" in the claim's ResourceClaimTemplate (device class, MIG profile or count), not in the container's limits.")
}
