package native

import (
	"github.com/gpulens/gpulens/signals"
)

// Claims implements signals.Schema: gpulens-exporter's info family, one series
// per container and device a ResourceClaim gave it, keyed like the
// allocation series it joins.
func (s Schema) Claims() string {
	return "group by " + s.by(signals.ClaimLabels) + " (" + unexport(s.tenant(ContainerGPUClaimInfo), tenantLabels...) + ")"
}
