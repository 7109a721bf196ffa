package kube

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/inventory"
)

func podClaims(p *corev1.Pod) []inventory.PodClaim {
	if len(p.Spec.ResourceClaims) == 0 {
		return nil
	}
	generated := map[string]string{}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	users := map[string]map[string][]string{} // entry → container → requests
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, ctr := range cs {
			for _, cl := range ctr.Resources.Claims {
				if users[cl.Name] == nil {
					users[cl.Name] = map[string][]string{}
				}
				reqs := users[cl.Name][ctr.Name]
				if cl.Request != "" {
					reqs = append(reqs, cl.Request)
				}
				users[cl.Name][ctr.Name] = reqs
			}
		}
	}
	out := make([]inventory.PodClaim, 0, len(p.Spec.ResourceClaims))
	for _, rc := range p.Spec.ResourceClaims {
		c := inventory.PodClaim{Name: rc.Name, Containers: users[rc.Name]}
		switch {
		case rc.ResourceClaimTemplateName != nil:
			c.Template, c.Claim = *rc.ResourceClaimTemplateName, generated[rc.Name]
		case rc.ResourceClaimName != nil:
			c.Claim = *rc.ResourceClaimName
		}
		out = append(out, c)
	}
	return out
}

// readClaimTemplates and readClaims list resource.k8s.io/v1, which API
// servers before 1.34 do not serve (GA in 1.34): there, as where Kueue is
// not installed, the answer is "none", not a failure.
func readClaimTemplates(ctx context.Context, r *reader) (func(), error) {
	out := map[inventory.ClaimKey]inventory.ClaimSpec{}
	err := eachItem(ctx, r.c.ResourceV1().ResourceClaimTemplates("").List, func(t *resourcev1.ResourceClaimTemplate) {
		s := claimSpec(&t.Spec.Spec)
		s.Metadata = claimMetadata(t.Spec.Labels, t.Spec.Annotations)
		out[inventory.ClaimKey{Namespace: t.Namespace, Name: t.Name}] = s
	})
	if apierrors.IsNotFound(err) {
		return func() {}, nil
	}
	return func() { r.inv.ClaimTemplates = out }, err
}

func readClaims(ctx context.Context, r *reader) (func(), error) {
	out := map[inventory.ClaimKey]inventory.ResourceClaim{}
	err := eachItem(ctx, r.c.ResourceV1().ResourceClaims("").List, func(c *resourcev1.ResourceClaim) {
		rc := inventory.ResourceClaim{ClaimSpec: claimSpec(&c.Spec), Allocated: c.Status.Allocation != nil}
		for _, ref := range c.Status.ReservedFor {
			if ref.APIGroup == "" && ref.Resource == "pods" {
				rc.ReservedFor = append(rc.ReservedFor, ref.Name)
			}
		}
		slices.Sort(rc.ReservedFor)
		out[inventory.ClaimKey{Namespace: c.Namespace, Name: c.Name}] = rc
	})
	if apierrors.IsNotFound(err) {
		return func() {}, nil
	}
	return func() { r.inv.Claims = out }, err
}

// claimSpec keeps a spec's GPU requests. A firstAvailable request (a
// prioritized list of alternatives) is left out: which alternative the
// scheduler picked is in the allocation, not the spec, so its size is not
// known from here.
func claimSpec(spec *resourcev1.ResourceClaimSpec) inventory.ClaimSpec {
	var s inventory.ClaimSpec
	for i, req := range spec.Devices.Requests {
		x := req.Exactly
		if x == nil || !dra.IsGPUClass(x.DeviceClassName) {
			continue
		}
		r := dra.Request{Name: req.Name, Index: i, DeviceClass: x.DeviceClassName,
			AllocationMode: string(x.AllocationMode), Count: x.Count}
		// The API server defaults both; a fixture or an old object may
		// lack them.
		if r.AllocationMode == "" {
			r.AllocationMode = dra.ModeExactCount
		}
		if r.AllocationMode == dra.ModeExactCount && r.Count == 0 {
			r.Count = 1
		}
		for _, sel := range x.Selectors {
			if sel.CEL != nil {
				r.Selectors = append(r.Selectors, sel.CEL.Expression)
			}
		}
		if r.DeviceClass == dra.ClassMIG {
			r.MIGProfile = dra.ProfileOf(r.Selectors)
		}
		s.GPU = append(s.GPU, r)
	}
	if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec); err == nil {
		s.Spec = m
	}
	return s
}

// claimMetadata is the part of a template's spec.metadata that the API
// server lets a template set: labels and annotations. Nil when empty.
func claimMetadata(labels, annotations map[string]string) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]map[string]string{"labels": labels, "annotations": annotations} {
		if len(v) == 0 {
			continue
		}
		vv := make(map[string]any, len(v))
		for name, val := range v {
			vv[name] = val
		}
		m[k] = vv
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
