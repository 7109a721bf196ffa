package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

func readNamespaces(ctx context.Context, r *reader) (func(), error) {
	nss := map[string]inventory.Namespace{}
	err := eachItem(ctx, r.c.CoreV1().Namespaces().List, func(ns *corev1.Namespace) {
		nss[ns.Name] = inventory.Namespace{Name: ns.Name, Team: ns.Labels[r.o.TeamLabel], Labels: ns.Labels}
	})
	return func() { r.inv.Namespaces = nss }, err
}
