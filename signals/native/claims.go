package native

import (
	"github.com/gpulens/gpulens/signals"
)

// Claims implements signals.Schema: gpulens-exporter's info family, one series
// per container and device a ResourceClaim gave it, keyed like the
// allocation series it joins.
func (Schema) Claims() string {
	return "group by " + by(signals.ClaimLabels) + " (" + unexport(ContainerGPUClaimInfo, tenantLabels...) + ")"
}
