package podresources

import (
	"cmp"
	"slices"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/vocab"
)

// DefaultDRADriver is the DRA driver of NVIDIA GPUs (k8s-dra-driver-gpu),
// whose ResourceSlices publish one device per GPU and per MIG device.
const DefaultDRADriver = "gpu.nvidia.com"

// Selection says which of the kubelet's resources are GPUs.
type Selection struct {
	// ResourceNames are extra device-plugin resource names, the ones an
	// operator configured through a time-slicing "rename".
	ResourceNames []vocab.Resource
	// DRADrivers are the Dynamic Resource Allocation drivers whose devices
	// are GPUs. A claim also lists the devices of other drivers (NICs,
	// the compute-domain driver's channels), which are not ours to count.
	DRADrivers []string
}

// ClaimDevice is one device a container holds through a ResourceClaim.
// The kubelet names it by driver, pool and device as the driver published
// it in a ResourceSlice; what GPU that is comes from the slice.
type ClaimDevice struct {
	// ClaimNamespace and ClaimName name the ResourceClaim; a claim made from
	// a pod's ResourceClaimTemplate has a generated name.
	ClaimNamespace, ClaimName string
	Driver, Pool, Device      string
	// ShareID is set when the device is shared through consumable capacity
	// (KEP-5075): each allocation of the same device gets its own ID.
	ShareID string
}

// Key returns the device's identity in the node's ResourceSlices. Claims
// that hold the same key hold the same device.
func (c ClaimDevice) Key() DRADevice {
	return DRADevice{Driver: c.Driver, Pool: c.Pool, Device: c.Device}
}

// DRADevice names a device of a ResourceSlice: device names are unique
// within a driver's pool.
type DRADevice struct{ Driver, Pool, Device string }

func compareClaims(a, b ClaimDevice) int {
	return cmp.Or(
		cmp.Compare(a.ClaimNamespace, b.ClaimNamespace), cmp.Compare(a.ClaimName, b.ClaimName),
		cmp.Compare(a.Driver, b.Driver), cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Device, b.Device),
		cmp.Compare(a.ShareID, b.ShareID))
}

// gpuClaims keeps the claim devices of GPU drivers, sorted.
func gpuClaims(in []*v1.DynamicResource, drivers []string) []ClaimDevice {
	var out []ClaimDevice
	for _, dr := range in {
		for _, cr := range dr.GetClaimResources() {
			if !slices.Contains(drivers, cr.GetDriverName()) {
				continue
			}
			out = append(out, ClaimDevice{
				ClaimNamespace: dr.GetClaimNamespace(),
				ClaimName:      dr.GetClaimName(),
				Driver:         cr.GetDriverName(),
				Pool:           cr.GetPoolName(),
				Device:         cr.GetDeviceName(),
				ShareID:        cr.GetShareId(),
			})
		}
	}
	slices.SortFunc(out, compareClaims)
	return slices.CompactFunc(out, func(a, b ClaimDevice) bool { return a == b })
}
