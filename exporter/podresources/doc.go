// Package podresources reads GPU allocations from the kubelet pod-resources
// v1 API and understands the device IDs the NVIDIA, GKE and HAMi device
// plugins hand to the kubelet.
//
// The kubelet only knows opaque device IDs per resource name. ParseDeviceID
// turns them into a DeviceRef that names the physical GPU, MIG instance and
// sharing replica, so the collector can join them with what NVML reports.
// Devices a container holds through Dynamic Resource Allocation claims come
// as driver, pool and device names instead (Container.Claims), kept for the
// configured GPU drivers only.
// Client polls the kubelet in the background and publishes immutable
// Allocations snapshots, so the scrape path never calls the kubelet.
package podresources
