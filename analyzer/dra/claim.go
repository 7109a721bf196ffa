package dra

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// The NVIDIA DRA driver's names (github.com/NVIDIA/k8s-dra-driver-gpu,
// cmd/gpu-kubelet-plugin/main.go DriverName; the DeviceClasses in
// deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml and
// deviceclass-mig.yaml select the driver's devices by their "type"
// attribute, "gpu" or "mig").
const (
	Driver = "gpu.nvidia.com"
	// ClassGPU is the DeviceClass of whole GPUs.
	ClassGPU = "gpu.nvidia.com"
	// ClassMIG is the DeviceClass of MIG devices; a selector on the
	// "profile" attribute picks the slice size.
	ClassMIG = "mig.nvidia.com"
)

// IsGPUClass reports whether a DeviceClass is one of the driver's GPU
// classes. Other classes (compute domains, VFIO passthrough, other
// vendors) are not GPUs this analysis sizes.
func IsGPUClass(class string) bool { return class == ClassGPU || class == ClassMIG }

// Allocation modes of an exact request (resource.k8s.io/v1
// ExactDeviceRequest.allocationMode).
const (
	ModeExactCount = "ExactCount"
	ModeAll        = "All"
)

// Request is one GPU request of a claim's spec.devices.requests: an
// "exactly" request of one of the driver's GPU classes.
type Request struct {
	// Name is the request's name, which containers' resources.claims[].request
	// and the claim's constraints and config refer to.
	Name string
	// Index is its position in spec.devices.requests.
	Index       int
	DeviceClass string
	// AllocationMode is ExactCount (Count devices) or All (every matching
	// device of a node).
	AllocationMode string
	Count          int64
	// Selectors are the request's CEL expressions, in order.
	Selectors []string
	// MIGProfile is the profile the selectors pin a MIG request to
	// ("1g.10gb"); empty when they do not pin one (any MIG device, or a
	// lower bound on memory and multiprocessors).
	MIGProfile string
}

// Claim is how a workload's pods get their GPUs through DRA: one entry of
// their spec.resourceClaims, the object it names and the GPU requests in
// it.
type Claim struct {
	Namespace string
	// PodClaim is the entry's name in pod.spec.resourceClaims, which the
	// containers' resources.claims refer to.
	PodClaim string
	// Template is the ResourceClaimTemplate the entry names: every pod
	// gets a claim of its own, generated from it. Empty when the entry
	// names a ResourceClaim.
	Template string
	// ResourceClaim is the ResourceClaim the entry names, which every pod
	// naming it shares. Empty for a template.
	ResourceClaim string
	// Requests are the GPU requests of the spec; a claim may also request
	// devices that are not GPUs, which are left out here.
	Requests []Request
	// Spec is the claim's spec (ResourceClaimSpec, for a template its
	// spec.spec) as encoding/json decodes it: what a changed copy of the
	// template starts from, keeping its constraints and config.
	Spec map[string]any
	// Metadata is a template's spec.metadata (labels and annotations of
	// the claims generated from it), kept in a changed copy; nil otherwise.
	Metadata map[string]any
	// Containers are the containers that use the claim, each with the
	// requests it names in resources.claims; an empty list means all of
	// the claim's requests.
	Containers map[string][]string
	// Pods are the workload's pods that use the claim, sorted.
	Pods []string
	// SharedBy are all pods that reference the ResourceClaim, from every
	// workload, sorted: with more than one, they share its devices. Empty
	// for a template, whose generated claims are each a pod's own.
	SharedBy []string
}

// Shared reports whether several pods use the claim's devices at once.
func (c *Claim) Shared() bool { return len(c.SharedBy) > 1 }

// Source names the object the claim comes from, as kubectl users read it:
// "ResourceClaimTemplate ns/name" or "ResourceClaim ns/name".
func (c *Claim) Source() string {
	if c.Template != "" {
		return "ResourceClaimTemplate " + c.Namespace + "/" + c.Template
	}
	return "ResourceClaim " + c.Namespace + "/" + c.ResourceClaim
}

// GPU is the claim's first GPU request, the one a right-sizing of the
// workload's GPU changes; false when it requests no GPU.
func (c *Claim) GPU() (Request, bool) {
	if c == nil || len(c.Requests) == 0 {
		return Request{}, false
	}
	return c.Requests[0], true
}

// For is the claim as container sees it: its requests narrowed to those
// the container names (a claim of four MIG slices for four containers,
// as the driver's demo/specs/quickstart/v1/gpu-test4.yaml has, is one slice
// to each). False when the container does not use the claim, or uses none
// of its GPU requests. A container that names the claim without a request
// uses all of it.
func (c *Claim) For(container string) (*Claim, bool) {
	reqs, uses := c.Containers[container]
	if !uses {
		return nil, false
	}
	out := *c
	if len(reqs) > 0 {
		out.Requests = nil
		for _, r := range c.Requests {
			if slices.Contains(reqs, r.Name) {
				out.Requests = append(out.Requests, r)
			}
		}
	}
	return &out, len(out.Requests) > 0
}

// Device names what a request asks for in the form recommendations show
// it: "gpu.nvidia.com", "mig.nvidia.com 1g.10gb", "mig.nvidia.com" for any
// MIG device, with "×N" for more than one.
func (r Request) Device() string {
	s := r.DeviceClass
	if r.MIGProfile != "" {
		s += " " + r.MIGProfile
	}
	switch {
	case r.AllocationMode == ModeAll:
		s += " ×all"
	case r.Count > 1:
		s += " ×" + strconv.FormatInt(r.Count, 10)
	}
	return s
}

// DeviceOfResource names, as Request.Device does, what a device plugin's
// extended resource asks for when it comes through the driver instead:
// "nvidia.com/gpu" is "gpu.nvidia.com", "nvidia.com/mig-1g.10gb" is
// "mig.nvidia.com 1g.10gb". It is how a recommendation measured from the
// metrics alone speaks of a DRA workload whose claim could not be read;
// a name it does not know is returned as it is.
func DeviceOfResource(resource vocab.Resource) string {
	if resource.Unshared() == vocab.ResourceGPU {
		return ClassGPU
	}
	if p, ok := resource.MIGProfile(); ok {
		return ClassMIG + " " + p
	}
	return string(resource)
}

// MIGProfileOf is the MIG profile a device names, in the forms
// Request.Device and DeviceOfResource write ("mig.nvidia.com 1g.10gb ×2")
// or as a device plugin's extended resource ("nvidia.com/mig-1g.10gb"):
// their inverse, so that a recommendation's shape can be compared with
// another's. "" where it names no profile.
func MIGProfileOf(device string) string {
	d, _, _ := strings.Cut(device, " ×")
	if p, ok := vocab.Resource(d).MIGProfile(); ok {
		return p
	}
	d = strings.TrimSuffix(d, ".shared")
	p, _ := strings.CutPrefix(d, ClassMIG+" ")
	if p == d {
		return ""
	}
	return p
}
