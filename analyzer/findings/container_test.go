package findings

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// TestContainerFromTheSpec: where the GPU series carry no container label,
// the patch names the pod spec's one GPU container (inventory.Pod's
// GPUContainer, from the API server); without the cluster no patch is
// written and the recommendation says the field to set. At main 36bc8ff
// both got a patch of a container "main" that the pod did not have, which
// a strategic merge adds to it.
func TestContainerFromTheSpec(t *testing.T) {
	build := func() *fleet.Result {
		a := alloc("web-7d9f8-x2x4q", "GPU-1", h100, "none", "", 1, 0.004, 0.02, 2*GiB)
		a.Container = ""
		res := result([]fleet.Allocation{a}, []fleet.GPU{gpu("GPU-1", h100, "none", 80*GiB)})
		res.Workloads[0].Kind, res.Workloads[0].Name = "Deployment", "web"
		return res
	}
	inv := &inventory.Inventory{Available: true, Namespaces: map[string]inventory.Namespace{}, Pods: map[inventory.PodKey]inventory.Pod{
		{Namespace: "team-a", Name: "web-7d9f8-x2x4q"}: {WorkloadKind: "Deployment", WorkloadName: "web", GPUContainer: "server"}}}
	for _, tt := range []struct {
		name      string
		inv       *inventory.Inventory
		container string
	}{
		{"from the cluster", inv, "server"},
		{"not known", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Detect(build(), tt.inv, criteria.DefaultConfig(), price.DefaultPrices())
			f := find(r, vocab.KindIdleAllocation)
			if f == nil || f.Recommendation == nil {
				t.Fatalf("no idle allocation with a recommendation: %+v", r.Findings)
			}
			rec := f.Recommendation
			if tt.container != "" {
				if rec.Patch == nil || !strings.Contains(rec.Patch.JSON, `"name":"`+tt.container+`"`) || f.Container != tt.container {
					t.Errorf("want a patch of container %s, got %+v (finding's container %q)", tt.container, rec.Patch, f.Container)
				}
				return
			}
			if rec.Patch != nil || !strings.Contains(rec.ByHand, "containers[<the GPU container>]") {
				t.Errorf("want no patch and the field in words, got patch %+v, by hand %q", rec.Patch, rec.ByHand)
			}
		})
	}
}
