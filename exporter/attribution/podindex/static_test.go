package podindex

import (
	"testing"
)

func TestStatic(t *testing.T) {
	const hash = "0123456789abcdef0123456789abcdef"
	idx := Static(
		Pod{UID: "11111111-1111-1111-1111-111111111111", Namespace: "ns", Name: "a", Phase: PodRunning},
		Pod{UID: "22222222-2222-2222-2222-222222222222", Namespace: "kube-system", Name: "etcd-n1", ConfigHash: hash},
		// Recreated under the same name: replaces the first.
		Pod{UID: "33333333-3333-3333-3333-333333333333", Namespace: "ns", Name: "a", Phase: PodPending},
	)
	if !idx.Synced() {
		t.Error("static index not synced")
	}
	for _, tc := range []struct {
		uid      string
		wantName string // "" when absent
	}{
		{"33333333-3333-3333-3333-333333333333", "a"},
		{"11111111-1111-1111-1111-111111111111", ""},
		{"22222222-2222-2222-2222-222222222222", "etcd-n1"},
		{hash, "etcd-n1"},
		{"", ""},
	} {
		p, ok := idx.ByUID(tc.uid)
		if ok != (tc.wantName != "") || p.Name != tc.wantName {
			t.Errorf("ByUID(%q) = %q, %v; want %q", tc.uid, p.Name, ok, tc.wantName)
		}
	}
	if p, ok := idx.ByName("ns", "a"); !ok || p.Phase != PodPending {
		t.Errorf("ByName(ns, a) = %+v, %v; want the recreated pod", p, ok)
	}
	if _, ok := idx.ByName("other", "a"); ok {
		t.Error("ByName matched across namespaces")
	}
}
