package inventory

import (
	"slices"
	"testing"
)

func TestUnavailable(t *testing.T) {
	inv := Unavailable("no kubeconfig")
	if inv.Available || !slices.Equal(inv.Skipped, []string{"no kubeconfig"}) || inv.ReadAt.IsZero() {
		t.Errorf("Unavailable = %+v", inv)
	}
	// Consumers index the maps and call the helpers without nil checks.
	if len(inv.Pods) != 0 || inv.Team("ml") != "ml" || len(inv.GPUNodes()) != 0 {
		t.Error("Unavailable inventory is not usable as empty")
	}
	if w := inv.Workload("ml", "web-7d9f8c6b5-x2k4q"); w.Kind != "Deployment" || w.Name != "web" {
		t.Errorf("Workload = %s, want inferred Deployment/web", w)
	}
	inv.Pods[PodKey{Namespace: "a", Name: "b"}] = Pod{} // must not panic
}
