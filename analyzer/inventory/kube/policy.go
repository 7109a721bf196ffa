package kube

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

func readQuotas(ctx context.Context, r *reader) (func(), error) {
	quotas := map[objectKey]inventory.Quota{}
	err := eachItem(ctx, r.c.CoreV1().ResourceQuotas("").List, func(q *corev1.ResourceQuota) {
		hard := quotaGPUs(q.Spec.Hard)
		if hard == nil {
			return // a quota on CPU and memory only says nothing about GPUs
		}
		quotas[objectKey{q.Namespace, q.Name}] = inventory.Quota{Name: q.Name, Hard: hard, Used: quotaGPUs(q.Status.Used)}
	})
	return func() { r.inv.Quotas = byNamespace(quotas) }, err
}

// quotaGPUs keeps the GPU entries of a quota: "requests.<resource>",
// "limits.<resource>" and the bare "<resource>" form, which the quota
// system treats as a request.
func quotaGPUs(list corev1.ResourceList) map[string]int64 {
	var out map[string]int64
	for name, q := range list {
		res, ok := strings.CutPrefix(string(name), "requests.")
		if !ok {
			res, _ = strings.CutPrefix(string(name), "limits.")
		}
		if !vocab.Resource(res).IsGPU() {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[string(name)] = q.Value()
	}
	return out
}

func readPDBs(ctx context.Context, r *reader) (func(), error) {
	pdbs := map[objectKey]inventory.PDB{}
	err := eachItem(ctx, r.c.PolicyV1().PodDisruptionBudgets("").List, func(p *policyv1.PodDisruptionBudget) {
		pdbs[objectKey{p.Namespace, p.Name}] = pdbSummary(p)
	})
	return func() { r.inv.PDBs = byNamespace(pdbs) }, err
}

// byNamespace groups namespaced objects, sorted by name within each
// namespace so that reports list them in a stable order.
func byNamespace[V any](objs map[objectKey]V) map[string][]V {
	keys := slices.SortedFunc(maps.Keys(objs), func(a, b objectKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	out := map[string][]V{}
	for _, k := range keys {
		out[k.namespace] = append(out[k.namespace], objs[k])
	}
	return out
}

func pdbSummary(p *policyv1.PodDisruptionBudget) inventory.PDB {
	out := inventory.PDB{Name: p.Name, DisruptionsAllowed: p.Status.DisruptionsAllowed, NoSelector: p.Spec.Selector == nil}
	if s := p.Spec.Selector; s != nil {
		out.Selector = s.MatchLabels
		for _, r := range s.MatchExpressions {
			out.MatchExpressions = append(out.MatchExpressions, inventory.LabelSelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
		}
		// The API's own parse decides what no shape check can (a key
		// or value that is no label): inventory.PDB.Matches matches
		// nothing then, as the disruption controller does.
		_, err := metav1.LabelSelectorAsSelector(s)
		out.InvalidSelector = err != nil
	}
	if v := p.Spec.MinAvailable; v != nil {
		out.MinAvailable = v.String()
	}
	if v := p.Spec.MaxUnavailable; v != nil {
		out.MaxUnavailable = v.String()
	}
	return out
}

func readPriorityClasses(ctx context.Context, r *reader) (func(), error) {
	pcs := map[string]int32{}
	err := eachItem(ctx, r.c.SchedulingV1().PriorityClasses().List, func(pc *schedulingv1.PriorityClass) {
		pcs[pc.Name] = pc.Value
	})
	return func() { r.inv.PriorityClasses = pcs }, err
}
