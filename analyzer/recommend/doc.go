// Package recommend turns an allocation's measured peaks into the smallest
// request that still fits it (what GPUs can be cut into and what they cost
// are analyzer/price's): a MIG profile on MIG-capable models, a
// time-slicing share on the others, a dedicated GPU where sharing hurts.
// Every Recommendation carries the change to apply (a strategic-merge patch
// for the workload and, where needed, the device plugin's sharing config)
// and its monthly dollar effect.
//
// A workload that gets its GPU through Dynamic Resource Allocation
// (Usage.Claim) is changed through its claim instead of its limits. A
// ResourceClaimTemplate's spec is immutable in resource.k8s.io/v1 (the API
// server's ValidateResourceClaimTemplateUpdate refuses any change), so the
// change is a new template asking for the new device class, MIG profile or
// count (Recommendation.ClaimTemplate) and a patch pointing the pod
// template's resourceClaims entry at it. A ResourceClaim named by the pods
// is immutable too and cannot be swapped under running pods: its
// recommendation says so in Notes, with no objects.
package recommend
