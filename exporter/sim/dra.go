package sim

import (
	"fmt"
	"strings"
)

// DRADriver is the DRA driver of a DRA node's GPUs: NVIDIA's, whose
// ResourceSlices the simulated API server publishes.
const DRADriver = "gpu.nvidia.com"

// ClaimName is the ResourceClaim a pod of a DRA node holds its GPU through:
// the one it names, else its own, as a ResourceClaimTemplate would give it.
func ClaimName(p *Pod) string {
	if p.Claim != "" {
		return p.Claim
	}
	return p.Name + "-gpu"
}

// draGPUName is how NVIDIA's driver names a GPU in its ResourceSlice:
// gpu-<minor> (k8s-dra-driver-gpu, cmd/gpu-kubelet-plugin/deviceinfo.go
// GpuInfo.CanonicalName). The simulator's minor numbers are its indices.
func draGPUName(index int) string { return fmt.Sprintf("gpu-%d", index) }

// draMIGName is how the driver names a MIG device:
// gpu-<minor>-mig-<profile>-<profile ID>-<placement start>, the profile in
// DNS form and the ID NVML's GPU instance profile info gives
// (cmd/gpu-kubelet-plugin/mig.go MigSpecTuple.ToCanonicalName, nvlib.go
// giProfileInfo.Id): here the simulated NVML's, go-nvml's mock tables,
// which number profiles by their enum (2 for a 3g.40gb, where a real H100
// says 9).
func (s *NodeSim) draMIGName(index int, in placedInstance) string {
	profile := strings.NewReplacer(".", "", "+", "-").Replace(in.profile.name)
	return fmt.Sprintf("gpu-%d-mig-%s-%d-%d", index, profile, s.sys.instanceInfo(in.profile).Id, in.start)
}
