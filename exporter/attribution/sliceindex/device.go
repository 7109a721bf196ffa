package sliceindex

import (
	"strings"

	"github.com/gpulens/gpulens/exporter/podresources"
)

// Device types of NVIDIA's GPU DRA driver (the "type" attribute).
const (
	TypeGPU = "gpu"
	TypeMIG = "mig"
)

// Device is what a driver's ResourceSlice says about one of its devices.
//
// The attribute names are those of NVIDIA's k8s-dra-driver-gpu,
// cmd/gpu-kubelet-plugin/deviceinfo.go (GpuInfo.Attributes:
// type "gpu", uuid, productName, ...) and cmd/gpu-kubelet-plugin/mig.go
// (CommonAttributesMig: type "mig", parentUUID, profile, productName; a MIG
// device that exists adds uuid). Under the driver's DynamicMIG feature a
// MIG device is announced before it is created, named
// gpu-<minor>-mig-<profile>-<profileID>-<placement>, and has no uuid.
type Device struct {
	podresources.DRADevice
	// Type is "gpu", "mig", or whatever else the driver publishes ("vfio"
	// for a GPU passed through to a VM, which NVML does not see).
	Type string
	// UUID is the NVML UUID: GPU-… for a GPU, MIG-… for a MIG device; ""
	// for a MIG device not created yet.
	UUID string
	// ParentUUID and Profile describe a MIG device: its GPU and profile
	// ("1g.10gb").
	ParentUUID, Profile string
	ProductName         string
}

// fromAPI reads a device's attributes. A qualified name without a domain
// is in the driver's domain, so "uuid" and "gpu.nvidia.com/uuid" are the
// same attribute (resource.k8s.io/v1 QualifiedName).
func fromAPI(driver, pool string, d *APIDevice) Device {
	out := Device{DRADevice: podresources.DRADevice{Driver: driver, Pool: pool, Device: d.Name}}
	for name, v := range d.Attributes {
		if v.String == nil {
			continue
		}
		if domain, id, ok := strings.Cut(name, "/"); ok {
			if domain != driver {
				continue
			}
			name = id
		}
		switch name {
		case "type":
			out.Type = *v.String
		case "uuid":
			out.UUID = *v.String
		case "parentUUID":
			out.ParentUUID = *v.String
		case "profile":
			out.Profile = *v.String
		case "productName":
			out.ProductName = *v.String
		}
	}
	return out
}
