package inventory

import "github.com/gpulens/gpulens/analyzer/dra"

// ClaimKey names a ResourceClaim or a ResourceClaimTemplate.
type ClaimKey struct{ Namespace, Name string }

// ClaimSpec is the device part of a ResourceClaim or ResourceClaimTemplate
// (resource.k8s.io/v1).
type ClaimSpec struct {
	// GPU are the requests for devices of the NVIDIA DRA driver's GPU
	// classes (dra.IsGPUClass); a claim without any is no GPU claim.
	GPU []dra.Request
	// Spec is the ResourceClaimSpec as encoding/json decodes it, from
	// which a recommendation derives a changed copy.
	Spec map[string]any
	// Metadata is a template's spec.metadata (the labels and annotations
	// of the claims generated from it); nil for a claim.
	Metadata map[string]any
}

// ResourceClaim is a ResourceClaim's spec and who holds it.
type ResourceClaim struct {
	ClaimSpec
	// ReservedFor are the pods status.reservedFor names: those the
	// scheduler allocated the claim for, sorted.
	ReservedFor []string
	Allocated   bool
}

// PodClaim is one entry of a pod's spec.resourceClaims.
type PodClaim struct {
	// Name is the entry's name, which containers' resources.claims use.
	Name string
	// Template is resourceClaimTemplateName; Claim is resourceClaimName,
	// or for a template the claim generated for this pod, from
	// status.resourceClaimStatuses ("" until the controller made it).
	Template, Claim string
	// Containers are the containers that use the claim (their
	// resources.claims), each with the requests it names; an empty list
	// means all of the claim's requests.
	Containers map[string][]string
}
