package hami

import (
	"fmt"
	"strconv"
	"strings"
)

// AnnotationDevicesAllocated is the pod annotation in which HAMi's
// scheduler writes the NVIDIA devices it gave each container
// (pkg/device/nvidia/device.go:168 at 4707fb02).
const AnnotationDevicesAllocated = "hami.io/vgpu-devices-allocated"

// Device is one device of a container's allocation.
type Device struct {
	UUID string
	// Type is the device's vendor type, "NVIDIA" for this annotation.
	Type string
	// MemoryMiB is nvidia.com/gpumem as the scheduler granted it (a
	// gpumem-percentage already converted); Cores is nvidia.com/gpucores,
	// percent of the device (0: not limited).
	MemoryMiB, Cores int64
}

// MemoryBytes is the device's memory allocation in bytes.
func (d Device) MemoryBytes() float64 { return float64(d.MemoryMiB) * (1 << 20) }

// ParseDevicesAllocated reads hami.io/vgpu-devices-allocated: one entry
// per container of the pod, in the pod's container order, each ended by
// ";"; in an entry, one "UUID,Type,MemoryMiB,Cores" per device, each
// ended by ":" (pkg/device/devices.go:451-458 EncodeContainerDevices,
// 477-484 EncodePodSingleDevice, 496-555 the decoders, at 4707fb02). The
// result is indexed as the pod's containers: an entry with no device
// (a container that holds none, written ";" or ",,0,0:") is an empty
// slice. Extra comma fields after the fourth are ignored, as HAMi does.
func ParseDevicesAllocated(s string) ([][]Device, error) {
	if s == "" {
		return nil, nil
	}
	entries := strings.Split(s, ";")
	if entries[len(entries)-1] == "" {
		// Every entry is ended by ";": the last split piece is no container.
		entries = entries[:len(entries)-1]
	}
	out := make([][]Device, len(entries))
	for ci, entry := range entries {
		out[ci] = []Device{}
		for di, dev := range strings.Split(entry, ":") {
			if !strings.Contains(dev, ",") {
				if strings.TrimSpace(dev) != "" {
					return nil, fmt.Errorf("%s: container %d, device %d: %q is not UUID,Type,MemoryMiB,Cores", AnnotationDevicesAllocated, ci, di, dev)
				}
				continue
			}
			f := strings.Split(dev, ",")
			if len(f) < 4 {
				return nil, fmt.Errorf("%s: container %d, device %d: %d fields in %q, want UUID,Type,MemoryMiB,Cores", AnnotationDevicesAllocated, ci, di, len(f), dev)
			}
			mem, err := strconv.ParseInt(f[2], 10, 32)
			if err != nil || mem < 0 {
				return nil, fmt.Errorf("%s: container %d, device %d: memory field %q is not a MiB count", AnnotationDevicesAllocated, ci, di, f[2])
			}
			cores, err := strconv.ParseInt(f[3], 10, 32)
			if err != nil || cores < 0 {
				return nil, fmt.Errorf("%s: container %d, device %d: cores field %q is not a percentage", AnnotationDevicesAllocated, ci, di, f[3])
			}
			if f[0] == "" {
				// ",,0,0": a container without a device (HAMi#991).
				if mem != 0 || cores != 0 {
					return nil, fmt.Errorf("%s: container %d, device %d: UUID field is empty with memory %d MiB and cores %d", AnnotationDevicesAllocated, ci, di, mem, cores)
				}
				continue
			}
			out[ci] = append(out[ci], Device{UUID: f[0], Type: f[1], MemoryMiB: mem, Cores: cores})
		}
	}
	return out, nil
}

// FormatDevicesAllocated writes an allocation as HAMi's scheduler does.
func FormatDevicesAllocated(containers [][]Device) string {
	var b strings.Builder
	for _, c := range containers {
		for _, d := range c {
			fmt.Fprintf(&b, "%s,%s,%d,%d:", d.UUID, d.Type, d.MemoryMiB, d.Cores)
		}
		b.WriteString(";")
	}
	return b.String()
}
