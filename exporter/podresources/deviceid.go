package podresources

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// Kind tells which naming scheme a device ID uses, and so which fields of a
// DeviceRef identify the device.
type Kind uint8

// Device ID kinds. The zero value is deliberately invalid.
const (
	// KindUUID: GPU-<uuid>, MIG-<uuid> or legacy MIG-GPU-<uuid>/<gi>/<ci>
	// (the NVIDIA device plugin's default "uuid" strategy), and HAMi's
	// split GPUs GPU-<uuid>-<n>.
	KindUUID Kind = iota + 1
	// KindIndex: 0 or 0:1 (the NVIDIA device plugin's "index" strategy).
	KindIndex
	// KindGKE: nvidia0, nvidia0/gi2, nvidia0/vgpu3 (GKE's device plugin).
	KindGKE
)

// String returns the lowercase name used in logs and labels.
func (k Kind) String() string {
	switch k {
	case KindUUID:
		return "uuid"
	case KindIndex:
		return "index"
	case KindGKE:
		return "gke"
	default:
		return "unknown"
	}
}

// DeviceRef says which physical GPU, MIG instance and sharing replica a
// kubelet device ID refers to. Numeric fields are -1 when the ID does not
// carry them, so 0 always means a real index.
type DeviceRef struct {
	Kind Kind
	// UUID is the NVML UUID of the device the ID names, exactly as NVML
	// reports it: GPU-…, MIG-…, or the legacy MIG-GPU-…/<gi>/<ci> of R450-era
	// drivers. Empty for index and GKE IDs.
	UUID string
	// ParentUUID is the GPU-… UUID of the parent GPU, known only from legacy
	// MIG UUIDs; modern MIG-… UUIDs need NVML to find their parent.
	ParentUUID string
	// Index is the NVML index of the physical GPU (index and GKE IDs).
	Index int
	// MIGIndex is the MIG device index within the GPU (index strategy 0:1).
	MIGIndex int
	// GPUInstance is the MIG GPU instance ID (GKE nvidia0/gi2, legacy UUIDs).
	GPUInstance int
	// ComputeInstance is the MIG compute instance ID (legacy UUIDs only).
	ComputeInstance int
	// Replica is the time-slicing or MPS replica number, or HAMi's split
	// device's, -1 when the device is not shared.
	Replica int
	// HAMiSplit says the replica is written as HAMi's device plugin
	// writes it, GPU-<uuid>-<n>, not NVIDIA's GPU-<uuid>::<n>.
	HAMiSplit bool
	// MIGProfile comes from a mixed-strategy resource name (1g.10gb).
	MIGProfile string
	// Shared is true for replicas and for resources whose name says shared.
	Shared bool
}

// ErrDeviceID is wrapped by every ParseDeviceID error.
var ErrDeviceID = errors.New("unrecognised GPU device ID")

const (
	replicaSep      = "::"
	hamiSplitSep    = "-"
	indexMIGSep     = ":"
	gkePrefix       = "nvidia"
	gkeInstance     = "gi"
	gkeReplica      = "vgpu"
	gpuUUIDPrefix   = "GPU-"
	migUUIDPrefix   = "MIG-"
	legacyMIGPrefix = "MIG-GPU-"
	legacyMIGSep    = "/"
	legacyMIGFields = 3 // GPU-<uuid>/<gi>/<ci>
	uuidLen         = 36
	maxNumberDigits = 9 // keeps every number far from int overflow
)

// ParseDeviceID parses a device ID the kubelet reports for resource. It
// accepts any resource name, since callers filter with IsGPUResource first
// and custom names are legitimate; the name only contributes MIGProfile and
// Shared. Parsing is strict (no leading zeros, well-formed UUIDs), so that
// String of the result gives back id exactly.
func ParseDeviceID(resource vocab.Resource, id string) (DeviceRef, error) {
	migProfile, _ := resource.MIGProfile()
	ref := DeviceRef{
		Index:           -1,
		MIGIndex:        -1,
		GPUInstance:     -1,
		ComputeInstance: -1,
		Replica:         -1,
		MIGProfile:      migProfile,
		Shared:          resource.IsShared(),
	}
	var err error
	if rest, ok := strings.CutPrefix(id, gkePrefix); ok {
		// GKE marks replicas with /vgpuN, never with "::".
		err = ref.parseGKE(rest)
	} else {
		err = ref.parseNVIDIA(id)
	}
	if err != nil {
		return DeviceRef{}, fmt.Errorf("%w %q of resource %q: %v", ErrDeviceID, id, resource, err)
	}
	if ref.Replica >= 0 {
		ref.Shared = true
	}
	return ref, nil
}

func (r *DeviceRef) parseNVIDIA(id string) error {
	base := id
	if i := strings.LastIndex(id, replicaSep); i >= 0 {
		n, err := parseNumber(id[i+len(replicaSep):])
		if err != nil {
			return fmt.Errorf("replica: %v", err)
		}
		r.Replica = n
		base = id[:i]
	} else if prefix, rest, ok := strings.Cut(id, "-"); ok && prefix+"-" == gpuUUIDPrefix && len(rest) > uuidLen && rest[uuidLen:uuidLen+1] == hamiSplitSep {
		// HAMi's device plugin advertises each GPU as DeviceSplitCount
		// devices "<UUID>-<i>", i from 0
		// (pkg/device-plugin/nvidiadevice/nvinternal/rm/devices.go:202-209
		// at Project-HAMi/HAMi 4707fb02; its own physicalDeviceID,
		// plugin/server.go:715-731, cuts the suffix back off). MIG devices
		// it advertises unsplit.
		n, err := parseNumber(rest[uuidLen+1:])
		if err != nil {
			return fmt.Errorf("HAMi split device: %v", err)
		}
		r.Replica, r.HAMiSplit = n, true
		base = id[:len(gpuUUIDPrefix)+uuidLen]
	}
	switch {
	case strings.HasPrefix(base, legacyMIGPrefix):
		return r.parseLegacyMIG(base)
	case strings.HasPrefix(base, gpuUUIDPrefix), strings.HasPrefix(base, migUUIDPrefix):
		// Both prefixes are four bytes long.
		if uuid := base[len(gpuUUIDPrefix):]; !isUUID(uuid) {
			return fmt.Errorf("%q is not a well-formed UUID", uuid)
		}
		r.Kind = KindUUID
		r.UUID = base
		return nil
	default:
		return r.parseIndex(base)
	}
}

// parseLegacyMIG handles MIG-GPU-<uuid>/<gi>/<ci>, the MIG UUID format of
// drivers before R470, which names the parent GPU and the instances.
func (r *DeviceRef) parseLegacyMIG(base string) error {
	fields := strings.Split(strings.TrimPrefix(base, migUUIDPrefix), legacyMIGSep)
	if len(fields) != legacyMIGFields {
		return fmt.Errorf("legacy MIG UUID needs GPU-<uuid>/<gi>/<ci>, got %d fields", len(fields))
	}
	if !isUUID(strings.TrimPrefix(fields[0], gpuUUIDPrefix)) {
		return fmt.Errorf("%q is not a well-formed GPU UUID", fields[0])
	}
	gi, err := parseNumber(fields[1])
	if err != nil {
		return fmt.Errorf("GPU instance: %v", err)
	}
	ci, err := parseNumber(fields[2])
	if err != nil {
		return fmt.Errorf("compute instance: %v", err)
	}
	r.Kind = KindUUID
	r.UUID = base
	r.ParentUUID = fields[0]
	r.GPUInstance = gi
	r.ComputeInstance = ci
	return nil
}

// parseIndex handles the index strategy: "<gpu>" or "<gpu>:<mig device>".
func (r *DeviceRef) parseIndex(base string) error {
	gpu, mig, isMIG := strings.Cut(base, indexMIGSep)
	n, err := parseNumber(gpu)
	if err != nil {
		return fmt.Errorf("GPU index: %v", err)
	}
	r.Kind = KindIndex
	r.Index = n
	if isMIG {
		m, err := parseNumber(mig)
		if err != nil {
			return fmt.Errorf("MIG device index: %v", err)
		}
		r.MIGIndex = m
	}
	return nil
}

// parseGKE handles what follows "nvidia": <index>[/gi<n>][/vgpu<n>].
func (r *DeviceRef) parseGKE(rest string) error {
	parts := strings.Split(rest, "/")
	n, err := parseNumber(parts[0])
	if err != nil {
		return fmt.Errorf("GPU index: %v", err)
	}
	r.Kind = KindGKE
	r.Index = n
	parts = parts[1:]
	if len(parts) > 0 {
		if gi, ok := strings.CutPrefix(parts[0], gkeInstance); ok {
			if r.GPUInstance, err = parseNumber(gi); err != nil {
				return fmt.Errorf("GPU instance: %v", err)
			}
			parts = parts[1:]
		}
	}
	if len(parts) > 0 {
		if replica, ok := strings.CutPrefix(parts[0], gkeReplica); ok {
			if r.Replica, err = parseNumber(replica); err != nil {
				return fmt.Errorf("replica: %v", err)
			}
			parts = parts[1:]
		}
	}
	if len(parts) > 0 {
		return fmt.Errorf("unexpected suffix %q", strings.Join(parts, "/"))
	}
	return nil
}

// IsMIG reports whether the ID names a MIG device rather than a whole GPU.
func (r DeviceRef) IsMIG() bool {
	return strings.HasPrefix(r.UUID, migUUIDPrefix) || r.MIGIndex >= 0 ||
		r.GPUInstance >= 0 || r.MIGProfile != ""
}

// String returns the canonical kubelet device ID; for every ID that
// ParseDeviceID accepts it returns that ID unchanged.
func (r DeviceRef) String() string {
	base := r.BaseID()
	if base == "" || r.Replica < 0 {
		return base
	}
	if r.Kind == KindGKE {
		return base + "/" + gkeReplica + strconv.Itoa(r.Replica)
	}
	if r.HAMiSplit {
		return base + hamiSplitSep + strconv.Itoa(r.Replica)
	}
	return base + replicaSep + strconv.Itoa(r.Replica)
}

// BaseID returns the device ID without its replica: the key shared by every
// replica of one GPU or MIG device, used to count how many ways it is split.
func (r DeviceRef) BaseID() string {
	switch r.Kind {
	case KindUUID:
		return r.UUID
	case KindIndex:
		if r.MIGIndex >= 0 {
			return strconv.Itoa(r.Index) + indexMIGSep + strconv.Itoa(r.MIGIndex)
		}
		return strconv.Itoa(r.Index)
	case KindGKE:
		s := gkePrefix + strconv.Itoa(r.Index)
		if r.GPUInstance >= 0 {
			s += "/" + gkeInstance + strconv.Itoa(r.GPUInstance)
		}
		return s
	default:
		return ""
	}
}

// parseNumber accepts only canonical non-negative decimals, so that every
// accepted ID formats back to itself.
func parseNumber(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty number")
	}
	if len(s) > maxNumberDigits {
		return 0, fmt.Errorf("number %q too long", s)
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("number %q has a leading zero", s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// isUUID checks the 8-4-4-4-12 hex layout NVML uses for GPU and MIG UUIDs.
func isUUID(s string) bool {
	if len(s) != uuidLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
