package recommend

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/vocab"
)

// SharedClaim is a GPU several pods use at once through one
// ResourceClaim: every pod whose spec.resourceClaims names the claim
// (resourceClaimName) gets the device the claim was allocated
// (resource.k8s.io/v1 PodResourceClaim; the scheduler lists each in the
// claim's status.reservedFor). Nothing limits one pod's memory on it.
type SharedClaim struct {
	// Workload owns the pods (their pod template holds the
	// resourceClaims entry to change).
	Workload workload.Ref
	// Claim is the ResourceClaim, namespace/name, as the metrics name it;
	// Pods the pods seen on its device, sorted.
	Claim string
	Pods  []string
	// Model is the device's product name and DeviceMemoryBytes its memory.
	Model             string
	DeviceMemoryBytes float64
	// NeedBytes is the memory the pods hold together at the end of the
	// projection (the device's own figure: the pods share one device), at
	// most DeviceMemoryBytes.
	NeedBytes float64
	// Spec is the claim as the cluster holds it (the inventory's
	// GPUClaimOf: its entry name in the pods' spec, its spec and every pod
	// that shares it); nil without cluster access.
	Spec *dra.Claim
}

// ClaimPerPod answers memory pressure on a GPU shared through one
// ResourceClaim. The device plugin's answers (a dedicated nvidia.com/gpu,
// fewer time-slicing replicas) do nothing for pods that get their GPU
// through a claim: the claim is what to change. A ResourceClaimTemplate
// gives each pod a claim of its own (the resourceclaim controller
// generates one per pod from spec.resourceClaims[].resourceClaimTemplateName),
// so each pod gets a device of its own: the template has the shared
// claim's spec, and the pod template's resourceClaims entry is pointed at
// it. A ResourceClaim's spec is immutable and a pod's claims are fixed for
// its life, so the rollout moves the pods and the shared claim is deleted
// after. The other answer, a device with more memory that the pods keep
// sharing, is a note with its price (LargerDevice). Either costs more:
// Reliability is set and the savings are negative.
func ClaimPerPod(c SharedClaim, p criteria.Policy, prices *price.Prices) *Recommendation {
	n := max(2, len(c.Pods))
	r := &Recommendation{
		Action:   ActionClaimPerPod,
		Workload: c.Workload,
		Summary: fmt.Sprintf("give each of its %d pods a claim of its own, from a ResourceClaimTemplate: the pods of a shared claim use one device together, "+
			"nothing limits one pod's memory on it, and one pod's growth runs the other out of memory", n),
		Allocation: vocab.AllocationPathDRA,
		Claim:      "ResourceClaim " + c.Claim,
		From:       fmt.Sprintf("%s shared by %d pods", dra.ClassGPU, n),
		To:         dra.ClassGPU + " per pod",
		// Billed for one device now, one per pod after.
		CurrentShare: 1, RecommendedShare: float64(n),
		Reliability: true,
	}
	if req, ok := c.Spec.GPU(); ok {
		r.From, r.To = fmt.Sprintf("%s shared by %d pods", req.Device(), n), req.Device()+" per pod"
	}
	perHour, priced := 0.0, false
	if v, err := prices.PerHour(c.Model); err == nil {
		perHour, priced = v, true
	}
	if priced {
		r.Notes = append(r.Notes, fmt.Sprintf("a device per pod is %d %s GPUs instead of 1: $%.0f a month more", n, shortKey(c.Model), price.MonthlyCost(float64(n-1), perHour)))
	}
	ns, name, _ := strings.Cut(c.Claim, "/")
	if c.Spec == nil || c.Spec.ResourceClaim == "" || c.Spec.Spec == nil {
		// Without the claim's spec and the pods' entry naming it, no
		// object can be written: say what to write.
		r.Notes = append(r.Notes, fmt.Sprintf("gpulens could not read ResourceClaim %s from the cluster (cluster access): create a ResourceClaimTemplate in %s whose spec.spec is the claim's spec "+
			"(kubectl -n %s get %s -o jsonpath='{.spec}'), point the pod template's resourceClaims entry that names %s at it (resourceClaimTemplateName instead of resourceClaimName), "+
			"and delete the claim once no pod uses it (status.reservedFor empty)", c.Claim, ns, safetext.ShellArg(ns), safetext.ShellObject("resourceclaim", name), name))
	} else {
		tmplName := perPodTemplateName(c.Spec.ResourceClaim)
		spec := map[string]any{"spec": deepCopy(c.Spec.Spec)}
		obj := map[string]any{
			"apiVersion": "resource.k8s.io/v1",
			"kind":       "ResourceClaimTemplate",
			"metadata":   map[string]any{"name": tmplName, "namespace": c.Spec.Namespace},
			"spec":       spec,
		}
		r.ClaimTemplate = &Manifest{Kind: "ResourceClaimTemplate", Namespace: c.Spec.Namespace, Name: tmplName, YAML: mustYAML(obj), JSON: mustJSON(obj)}
		// resourceClaims merges by name and retains only the keys given
		// (k8s.io/api core/v1 PodSpec.ResourceClaims: patchStrategy
		// merge,retainKeys): the entry keeps its name, and
		// resourceClaimName gives way to resourceClaimTemplateName.
		r.Patch = podSpecPatch(c.Workload, map[string]any{"resourceClaims": []any{
			map[string]any{"name": c.Spec.PodClaim, "resourceClaimTemplateName": tmplName},
		}})
		r.Notes = append(r.Notes, fmt.Sprintf("create ResourceClaimTemplate %s/%s (the shared claim's spec), then patch the pod template: a pod's claims are fixed for its life, "+
			"so the rollout's new pods each get a claim of their own; delete %s once no pod uses it (status.reservedFor empty)", c.Spec.Namespace, tmplName, r.Claim))
		if others := othersSharing(c.Spec.SharedBy, c.Pods); len(others) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("pods of other workloads use the claim too (%s): move them as well, or the claim and its device stay", strings.Join(others, ", ")))
		}
		switch c.Workload.Kind {
		case "Pod":
			r.Notes = append(r.Notes, "a pod's spec cannot change: apply this to whatever creates the pod")
		case "Job":
			r.Notes = append(r.Notes, "a Job's pod template cannot change: apply this to the Job's manifest and recreate it")
		}
	}
	if m, larger, ok := LargerDevice(c.Model, c.DeviceMemoryBytes, c.NeedBytes*(1+p.MemoryMargin), prices); ok {
		note := fmt.Sprintf("or keep the claim shared on a device with more memory: a new ResourceClaim (a claim's spec is immutable) whose request selects a %s by the driver's productName attribute, "+
			"for the pods to move to as they are recreated", m.Key)
		if priced {
			note += fmt.Sprintf(": $%.0f a month more", price.MonthlyCost(1, larger-perHour))
		}
		r.Notes = append(r.Notes, note)
	}
	return r
}

// perPodTemplateName names the template that replaces a shared claim.
func perPodTemplateName(claim string) string {
	name := strings.TrimSuffix(claim, "-shared")
	name = strings.ReplaceAll(name, "-shared-", "-") + "-per-pod"
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.TrimRight(name, "-.")
}

// othersSharing are the pods sharing a claim besides the workload's own.
func othersSharing(sharedBy, pods []string) []string {
	var out []string
	for _, p := range sharedBy {
		if !slices.Contains(pods, p) {
			out = append(out, p)
		}
	}
	return out
}

// LargerDevice is the cheapest priced model of the catalog with more
// memory than model whose memory holds need, and its price an hour. A
// model's memory is its nominal size scaled to deviceMemory (what the
// exporter measured for model), so that catalog sizes in decimal
// gigabytes and measured GiB are not mixed. False when model or its
// memory is unknown, or no priced model holds need.
func LargerDevice(model string, deviceMemory, need float64, prices *price.Prices) (price.Model, float64, bool) {
	cur, ok := price.LookupModel(model)
	if !ok || cur.MemoryBytes == 0 || deviceMemory <= 0 || need <= 0 || prices == nil {
		return price.Model{}, 0, false
	}
	var best price.Model
	bestPrice := math.Inf(1)
	for _, key := range price.ModelKeys() {
		m, ok := price.LookupModel(key)
		if !ok || m.MemoryBytes <= cur.MemoryBytes || deviceMemory*m.MemoryBytes/cur.MemoryBytes < need {
			continue
		}
		v, err := prices.PerHour(m.Key)
		if err != nil {
			continue
		}
		if c := cmp.Compare(v, bestPrice); c < 0 || (c == 0 && m.MemoryBytes < best.MemoryBytes) {
			best, bestPrice = m, v
		}
	}
	return best, bestPrice, best.Key != ""
}

// shortKey is the catalog's name for a model, for sentences.
func shortKey(model string) string {
	if m, ok := price.LookupModel(model); ok {
		return m.Key
	}
	return model
}
