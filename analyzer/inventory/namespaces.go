package inventory

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

func readNamespaces(ctx context.Context, r *reader) (func(), error) {
	nss := map[string]Namespace{}
	err := eachItem(ctx, r.c.CoreV1().Namespaces().List, func(ns *corev1.Namespace) {
		nss[ns.Name] = Namespace{Name: ns.Name, Team: ns.Labels[r.o.TeamLabel], Labels: ns.Labels}
	})
	return func() { r.inv.Namespaces = nss }, err
}

// Team returns the team a namespace belongs to: its team label, or the
// namespace itself when it is unlabelled or unknown, so that reports
// never lump unrelated namespaces into one "unknown" team.
func (inv *Inventory) Team(namespace string) string {
	if inv != nil {
		if ns, ok := inv.Namespaces[namespace]; ok && ns.Team != "" {
			return ns.Team
		}
	}
	return namespace
}
