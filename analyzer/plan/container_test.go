package plan

import (
	"strings"
	"testing"
)

// TestNoPatchWithoutContainer: a lane whose GPU container is not in the
// data gets, in the plan's YAML, the field to change and no patch. At
// main 36bc8ff its patch named a container "main", which a strategic
// merge (containers merge by name) adds to the pod beside the real one.
func TestNoPatchWithoutContainer(t *testing.T) {
	p := goldenPlan(t)
	var trainer *Assignment
	for i := range p.Pools {
		for j := range p.Pools[i].Assignments {
			a := &p.Pools[i].Assignments[j]
			if a.Workload.Name == "trainer-a" {
				a.Workload.Container, trainer = "", a
			}
		}
	}
	if trainer == nil {
		t.Fatal("no trainer-a in the golden plan")
	}
	var out strings.Builder
	if err := Write(&out, p, "yaml"); err != nil {
		t.Fatal(err)
	}
	y := out.String()
	// The golden plan moves trainer-a from a time-sliced share to a
	// 2g.20gb slice (TestOutputGolden).
	want := "# Deployment/ns/trainer-a: set spec.template.spec.containers[<the GPU container>].resources.limits[nvidia.com/mig-2g.20gb] to 1"
	if !strings.Contains(y, want) {
		t.Errorf("no %q in:\n%s", want, y)
	}
	if strings.Contains(y, "kubectl -n ns patch deployment trainer-a") {
		t.Errorf("a patch of trainer-a without its container:\n%s", y)
	}
	// The others keep their patches.
	if !strings.Contains(y, "kubectl -n ns patch deployment trainer-b") {
		t.Errorf("trainer-b lost its patch:\n%s", y)
	}
}
