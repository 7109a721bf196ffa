package inventory

import "slices"

// Matches reports whether the budget covers a pod with these labels.
// A budget without a selector, or with one the disruption controller
// cannot parse, covers none.
func (p PDB) Matches(podLabels map[string]string) bool {
	if p.NoSelector || p.InvalidSelector {
		return false
	}
	for k, v := range p.Selector {
		if have, ok := podLabels[k]; !ok || have != v {
			return false
		}
	}
	for _, r := range p.MatchExpressions {
		ok, valid := r.matches(podLabels)
		if !valid {
			return false // the disruption controller ignores an invalid selector too
		}
		if !ok {
			return false
		}
	}
	return true
}

// Label selector operators (metav1.LabelSelectorOperator's values).
const (
	SelectorOpIn           = "In"
	SelectorOpNotIn        = "NotIn"
	SelectorOpExists       = "Exists"
	SelectorOpDoesNotExist = "DoesNotExist"
)

// LabelSelectorRequirement is one of a selector's matchExpressions, as
// metav1.LabelSelectorRequirement holds it.
type LabelSelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// matches says whether labels satisfy r, as
// k8s.io/apimachinery/pkg/labels does; valid is false for a requirement
// that metav1.LabelSelectorAsSelector refuses by its shape (an unknown
// operator, In or NotIn without values, Exists or DoesNotExist with some).
func (r LabelSelectorRequirement) matches(labels map[string]string) (ok, valid bool) {
	v, has := labels[r.Key]
	switch r.Operator {
	case SelectorOpIn:
		return has && slices.Contains(r.Values, v), len(r.Values) > 0
	case SelectorOpNotIn:
		return !has || !slices.Contains(r.Values, v), len(r.Values) > 0
	case SelectorOpExists:
		return has, len(r.Values) == 0
	case SelectorOpDoesNotExist:
		return !has, len(r.Values) == 0
	}
	return false, false
}

// PDBsFor returns the budgets that cover a known pod.
func (inv *Inventory) PDBsFor(namespace, pod string) []PDB {
	if inv == nil {
		return nil
	}
	p, ok := inv.Pods[PodKey{namespace, pod}]
	if !ok {
		return nil
	}
	var out []PDB
	for _, b := range inv.PDBs[namespace] {
		if b.Matches(p.Labels) {
			out = append(out, b)
		}
	}
	return out
}
