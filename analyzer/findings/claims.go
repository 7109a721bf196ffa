package findings

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

func claimNames(cs []fleet.ClaimRef) []string {
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
