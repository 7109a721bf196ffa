package schema

import (
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// Claims implements Schema: gpulens-exporter's info family, one series
// per container and device a ResourceClaim gave it, keyed like the
// allocation series it joins.
func (Native) Claims() string {
	return "group by " + by(ClaimLabels) + " (" + unexport(native.ContainerGPUClaimInfo, tenantLabels...) + ")"
}

// dcgmClaimLabels map dcgm-exporter's dra_* labels onto ClaimLabels.
// dra_device_name replaces dcgm-exporter's own device label (nvidia0),
// which the claims signal does not keep.
var dcgmClaimLabels = [][2]string{
	{LabelClaimNamespace, dcgm.LabelDRAClaimNamespace}, {LabelClaim, dcgm.LabelDRAClaimName},
	{LabelDriver, dcgm.LabelDRADriverName}, {LabelPool, dcgm.LabelDRAPoolName}, {LabelDevice, dcgm.LabelDRADeviceName},
}

// Claims implements Schema. dcgm-exporter with --kubernetes-enable-dra
// copies a claimed device's series once per container and labels each
// copy with its claim (signals/dcgm's LabelDRA*): the tenants' series of
// the fields that say a GPU or GPU instance is there (FB_USED, or on an
// H100 in MIG mode, which reports no memory per instance, the instance's
// activity), read as the allocation signal reads its tenants.
func (DCGM) Claims() string {
	expr := norm(dcgmTenants("", migPresence+", "+dcgm.LabelDRAClaimName+`!=""`))
	for _, r := range dcgmClaimLabels {
		expr = `label_replace(` + expr + `, "` + r[0] + `", "$1", "` + r[1] + `", "(.*)")`
	}
	return "group by " + by(ClaimLabels) + " (" + expr + ")"
}
