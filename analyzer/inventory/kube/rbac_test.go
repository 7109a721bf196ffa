package kube

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	k8stesting "k8s.io/client-go/testing"
)

// permission is one atom of an RBAC rule: a verb on a resource, in a
// namespace ("" for a ClusterRole), for one name ("" for any).
type permission struct{ namespace, group, resource, verb, name string }

func (p permission) allows(a k8stesting.Action) bool {
	gvr := a.GetResource()
	if p.group != gvr.Group || p.resource != gvr.Resource || p.verb != a.GetVerb() {
		return false
	}
	if p.namespace != "" && p.namespace != a.GetNamespace() {
		return false
	}
	if p.name == "" {
		return true
	}
	get, ok := a.(k8stesting.GetAction)
	return ok && get.GetName() == p.name
}

// loadPermissions expands testdata/rbac.yaml into permissions, so that a
// single superfluous resource or name in a rule is noticed.
func loadPermissions(t *testing.T) []permission {
	t.Helper()
	var perms []permission
	add := func(ns string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						for _, n := range names {
							perms = append(perms, permission{ns, g, res, v, n})
						}
					}
				}
			}
		}
	}
	for _, obj := range loadObjects(t, "testdata/rbac.yaml") {
		switch r := obj.(type) {
		case *rbacv1.ClusterRole:
			add("", r.Rules)
		case *rbacv1.Role:
			add(r.Namespace, r.Rules)
		default:
			t.Fatalf("rbac.yaml holds a %T", obj)
		}
	}
	return perms
}

// TestRBACIsExact checks testdata/rbac.yaml against the requests Read
// really makes: every request is allowed (the chart's roles suffice) and
// every permission is used (they grant nothing the analyzer does not
// need). The fixture lacks gpu-operator/device-plugin-config, but the GET
// for it is still made, so its permission counts as used.
func TestRBACIsExact(t *testing.T) {
	perms := loadPermissions(t)
	c := fakeCluster(t)
	if inv := Read(t.Context(), c, testOptions(t)); len(inv.Skipped) != 0 {
		t.Fatalf("Skipped = %q", inv.Skipped)
	}
	used := map[permission]bool{}
	for _, a := range c.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "resource" {
			// Discovery: a non-resource URL every authenticated user may
			// read (the system:discovery role), not a rule of ours.
			continue
		}
		if a.GetResource().Resource == "secrets" {
			t.Errorf("Read touched Secrets: %v", a)
		}
		allowed := false
		for _, p := range perms {
			if p.allows(a) {
				used[p], allowed = true, true
			}
		}
		if !allowed {
			t.Errorf("request not allowed by rbac.yaml: %s %s in %q", a.GetVerb(), a.GetResource(), a.GetNamespace())
		}
	}
	for _, p := range perms {
		if p.group == "kueue.x-k8s.io" {
			// A fake clientset serves no custom resources: e2e/kube's
			// TestAnalyzerRBAC reads Kueue's queues with these rules from
			// a real API server.
			continue
		}
		if !used[p] {
			t.Errorf("rbac.yaml grants %+v, which Read never needs", p)
		}
	}
}
