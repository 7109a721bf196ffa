package dcgm

import (
	"github.com/gpulens/gpulens/signals"
)

// dcgmClaimLabels map dcgm-exporter's dra_* labels onto signals.ClaimLabels.
// dra_device_name replaces dcgm-exporter's own device label (nvidia0),
// which the claims signal does not keep.
var dcgmClaimLabels = [][2]string{
	{signals.LabelClaimNamespace, LabelDRAClaimNamespace}, {signals.LabelClaim, LabelDRAClaimName},
	{signals.LabelDriver, LabelDRADriverName}, {signals.LabelPool, LabelDRAPoolName}, {signals.LabelDevice, LabelDRADeviceName},
}

// Claims implements signals.Schema. dcgm-exporter with --kubernetes-enable-dra
// copies a claimed device's series once per container and labels each
// copy with its claim (signals/dcgm's LabelDRA*): the tenants' series of
// the fields that say a GPU or GPU instance is there (FB_USED, or on an
// H100 in MIG mode, which reports no memory per instance, the instance's
// activity), read as the allocation signal reads its tenants.
func (s Schema) Claims() string {
	expr := norm(s.tenants("", s.migPresence()+", "+LabelDRAClaimName+`!=""`))
	for _, r := range dcgmClaimLabels {
		expr = `label_replace(` + expr + `, "` + r[0] + `", "$1", "` + r[1] + `", "(.*)")`
	}
	return "group by " + s.by(signals.ClaimLabels) + " (" + expr + ")"
}
