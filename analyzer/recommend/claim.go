package recommend

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// Manifest is an object to create, in both encodings (kubectl apply -f
// takes either).
type Manifest struct {
	// Kind, Namespace and Name identify it.
	Kind, Namespace, Name string
	YAML, JSON            string
	// Spec is the object's spec as JSON-shaped data, for analyzer/manifest
	// to decode into the typed object.
	Spec map[string]any
}

// ClaimChange is what a DRA GPU request asks for instead.
type ClaimChange struct {
	// DeviceClass is dra.ClassGPU or dra.ClassMIG.
	DeviceClass string
	// MIGProfile pins a MIG request to a profile; empty for a whole GPU.
	MIGProfile string
	// Count is the number of devices; 0 keeps the request's own count and
	// allocation mode.
	Count int64
}

// immutableSpec says why a claim's request cannot be edited where it is.
// Both specs are immutable in resource.k8s.io/v1: kube-apiserver's
// pkg/apis/resource/validation ValidateResourceClaimTemplateUpdate and
// ValidateResourceClaimUpdate refuse any change of spec.
const immutableSpec = "the API server refuses any change of a ResourceClaimTemplate's or a ResourceClaim's spec (it is immutable)"

// ChangeClaim is the change of a workload's DRA claim c to ask for to
// instead of its GPU request: for a claim template, a new template beside
// the old one and a patch that points the workload's pod template at it,
// since the old one cannot be edited; for a named ResourceClaim, which
// cannot be edited either and whose pods cannot be re-pointed while they
// run, no objects, only notes saying what to do. The workload's existing
// pods keep their claims until the rollout replaces them.
func ChangeClaim(w workload.Ref, c *dra.Claim, to ClaimChange) (tmpl *Manifest, patch *Patch, notes []string) {
	req, ok := c.GPU()
	if !ok {
		return nil, nil, nil
	}
	next := changedRequest(req, to)
	if c.Template == "" {
		notes = append(notes, fmt.Sprintf("%s is a ResourceClaim, not generated from a template, so it cannot be patched in place: %s, and a pod's claims are fixed for its life. "+
			"Create a ResourceClaim whose request %q asks for %s, point the pods' resourceClaims entry %q at it as they are recreated, then delete %s",
			c.Source(), immutableSpec, req.Name, next.Device(), c.PodClaim, c.ResourceClaim))
		if c.Shared() {
			notes = append(notes, fmt.Sprintf("the claim is shared by pods %s: they use one device together, so all of them move to the new claim, and it must hold their combined use",
				strings.Join(c.SharedBy, ", ")))
		}
		return nil, nil, notes
	}
	spec, dropped, ok := changedSpec(c, req, next)
	if !ok {
		// The inventory did not keep the spec the request came from; a
		// template written from the request alone would drop the rest.
		return nil, nil, []string{fmt.Sprintf("change request %q of %s to ask for %s, in a new template: %s", req.Name, c.Source(), next.Device(), immutableSpec)}
	}
	name := templateName(c.Template, req, next)
	obj := map[string]any{
		"apiVersion": "resource.k8s.io/v1",
		"kind":       "ResourceClaimTemplate",
		"metadata":   map[string]any{"name": name, "namespace": c.Namespace},
		"spec":       spec,
	}
	tmpl = &Manifest{Kind: "ResourceClaimTemplate", Namespace: c.Namespace, Name: name, YAML: mustYAML(obj), JSON: mustJSON(obj), Spec: spec}
	// resourceClaims merges by name and retains only the keys given
	// (patchStrategy merge,retainKeys): the entry keeps its name and now
	// names the new template.
	patch = podSpecPatch(w, map[string]any{"resourceClaims": []any{
		map[string]any{"name": c.PodClaim, "resourceClaimTemplateName": name},
	}})
	patch.Claims = []PodClaim{{Name: c.PodClaim, Template: name}}
	notes = append(notes, fmt.Sprintf("%s cannot be edited (%s): create ResourceClaimTemplate %s/%s, then patch the pod template to use it; delete %s once no pod uses it",
		c.Source(), immutableSpec, c.Namespace, name, c.Template))
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("the new request drops the selectors that chose the old size: %s", strings.Join(dropped, "; ")))
	}
	if devices, _ := c.Spec["devices"].(map[string]any); next.DeviceClass != req.DeviceClass && devices != nil {
		// A constraint such as matchAttribute gpu.nvidia.com/parentUUID
		// holds for MIG devices only, and the driver's GpuConfig and
		// MigDeviceConfig apply to one class each.
		if devices["constraints"] != nil {
			notes = append(notes, fmt.Sprintf("check that the claim's constraints still hold for %s devices", next.DeviceClass))
		}
		if devices["config"] != nil {
			notes = append(notes, fmt.Sprintf("check that the claim's device config suits %s devices", next.DeviceClass))
		}
	}
	switch w.Kind {
	case "Pod":
		notes = append(notes, "a pod's spec cannot change: apply this to whatever creates the pod")
	case "Job":
		notes = append(notes, "a Job's pod template cannot change: apply this to the Job's manifest and recreate it")
	}
	return tmpl, patch, notes
}

// changedRequest is req asking for to.
func changedRequest(req dra.Request, to ClaimChange) dra.Request {
	next := req
	next.DeviceClass, next.MIGProfile = to.DeviceClass, to.MIGProfile
	if to.Count > 0 {
		next.AllocationMode, next.Count = dra.ModeExactCount, to.Count
	}
	return next
}

// changedSpec is a copy of c's template spec (spec.metadata and spec.spec)
// with request req asking for next. The request's other selectors stay
// (the product, the architecture), except those that chose the old size:
// a profile or a capacity bound would contradict the new one. They are
// returned. False when the spec does not hold the request where req says.
func changedSpec(c *dra.Claim, req, next dra.Request) (map[string]any, []string, bool) {
	claim := deepCopy(c.Spec)
	devices, _ := claim["devices"].(map[string]any)
	reqs, _ := devices["requests"].([]any)
	if req.Index >= len(reqs) {
		return nil, nil, false
	}
	r, _ := reqs[req.Index].(map[string]any)
	exactly, _ := r["exactly"].(map[string]any)
	if exactly == nil || r["name"] != req.Name {
		return nil, nil, false
	}
	exactly["deviceClassName"] = next.DeviceClass
	var kept []any
	var dropped []string
	for _, expr := range req.Selectors {
		if dra.MentionsProfile(expr) {
			dropped = append(dropped, expr)
			continue
		}
		kept = append(kept, map[string]any{"cel": map[string]any{"expression": expr}})
	}
	if next.MIGProfile != "" {
		kept = append(kept, map[string]any{"cel": map[string]any{"expression": dra.ProfileSelector(next.MIGProfile)}})
	}
	delete(exactly, "selectors")
	if len(kept) > 0 {
		exactly["selectors"] = kept
	}
	if next.AllocationMode == dra.ModeExactCount {
		exactly["allocationMode"], exactly["count"] = dra.ModeExactCount, next.Count
	}
	spec := map[string]any{"spec": claim}
	if len(c.Metadata) > 0 {
		spec["metadata"] = deepCopy(c.Metadata)
	}
	return spec, dropped, true
}

// templateName names the new template after the old one and what it asks
// for: "single-gpu" for a 1g.10gb slice becomes "single-gpu-1g.10gb", and
// "embed-3g.40gb" becomes "embed-1g.10gb" rather than
// "embed-3g.40gb-1g.10gb". Only a size as specific as a profile or a count
// is taken off: "-gpu" ends many names that say nothing about the size.
func templateName(old string, req, next dra.Request) string {
	base := old
	if suffix := sizeSuffix(req); suffix != "gpu" && suffix != "mig" {
		base = strings.TrimSuffix(old, "-"+suffix)
	}
	name := base + "-" + sizeSuffix(next)
	if len(name) > 253 { // a DNS subdomain
		name = name[:253]
	}
	return strings.TrimRight(name, "-.")
}

// sizeSuffix names a request's size in an object name: the MIG profile
// ("1g.10gb", "+" spelled "-"), "gpu" for a whole GPU or any MIG device,
// with "-x2" for a count.
func sizeSuffix(r dra.Request) string {
	s := "gpu"
	if r.MIGProfile != "" {
		s = strings.ReplaceAll(r.MIGProfile, "+", "-")
	} else if r.DeviceClass == dra.ClassMIG {
		s = "mig"
	}
	if r.AllocationMode == dra.ModeAll {
		s += "-all"
	} else if r.Count > 1 {
		s += fmt.Sprintf("-x%d", r.Count)
	}
	return s
}

// podSpecPatch is a strategic-merge patch of fields of w's pod spec.
func podSpecPatch(w workload.Ref, fields map[string]any) *Patch {
	var doc any = fields
	path := podSpecPath(w.Kind)
	for i := len(path) - 1; i >= 0; i-- {
		doc = map[string]any{path[i]: doc}
	}
	return &Patch{Target: w.String(), YAML: mustYAML(doc), JSON: mustJSON(doc), Workload: w}
}

// deepCopy copies a JSON-shaped value through JSON, so that a changed
// copy never aliases the inventory's.
func deepCopy(m map[string]any) map[string]any {
	out := map[string]any{}
	if err := json.Unmarshal([]byte(mustJSON(m)), &out); err != nil {
		panic(fmt.Sprintf("claim: %v", err)) // what json wrote it reads
	}
	return out
}

func mustYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("claim: %v", err)) // maps of strings and numbers always marshal
	}
	return string(b)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("claim: %v", err))
	}
	return string(b)
}
