package quota

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/workload"
)

const steps = 100

// lane runs in namespace ns from step from to step to (excluded).
func lane(ns, name, from string, start, end int) *plan.Lane {
	l := &plan.Lane{Workload: workload.Ref{Kind: "Deployment", Namespace: ns, Name: name}, From: from,
		Mem: make([]float32, steps), Load: make([]float32, steps)}
	for t := start; t < end; t++ {
		l.Mem[t] = 1 << 30
	}
	return l
}

// scenario: team-a holds 3 whole H100s for steps 0-4, 2 until step 49 and
// 1 after (so per step: 5 × 3, 45 × 2, 50 × 1 GPUs: peak 3, p95 2), and a
// MIG slice all along; an L4 of team-a and the H100s of team-b count
// against none of team-a's H100 quotas.
func scenario() *plan.Data {
	h100 := &plan.Pool{Product: "NVIDIA H100 80GB HBM3", Lanes: []*plan.Lane{
		lane("team-a", "train", "whole", 0, 100), lane("team-a", "eval", "whole", 0, 50), lane("team-a", "burst", "whole", 0, 5),
		lane("team-a", "nb", "mig 1g.10gb", 0, 100), lane("team-b", "web", "whole", 0, 100),
	}}
	l4 := &plan.Pool{Product: "NVIDIA L4", Lanes: []*plan.Lane{lane("team-a", "svc", "time-slicing", 0, 100)}}
	return &plan.Data{Steps: steps, Pools: []*plan.Pool{h100, l4}}
}

func f(v float64) *float64 { return &v }

func TestAdvise(t *testing.T) {
	inv := &inventory.Inventory{Available: true,
		Kueue: &inventory.Kueue{
			ClusterQueues: []inventory.ClusterQueue{
				{Name: "team-a", Cohort: "research", Quotas: []inventory.KueueQuota{
					{Flavor: "h100", Resource: "nvidia.com/gpu", Nominal: 8, Path: "/spec/resourceGroups/0/flavors/0/resources/1"},
					{Flavor: "h100", Resource: "nvidia.com/mig-1g.10gb", Nominal: 1, Path: "/spec/resourceGroups/0/flavors/0/resources/2"},
				}},
				{Name: "team-a-alone", Quotas: []inventory.KueueQuota{{Flavor: "h100", Resource: "nvidia.com/gpu", Nominal: 2, Borrowing: f(4), Path: "/p"}}},
			},
			LocalQueues: []inventory.LocalQueue{{Namespace: "team-a", Name: "q", ClusterQueue: "team-a"}, {Namespace: "team-a", Name: "q2", ClusterQueue: "team-a-alone"}},
			Flavors:     map[string]map[string]string{"h100": {gpuProductLabel: "NVIDIA-H100-80GB-HBM3"}},
		},
		Quotas: map[string][]inventory.Quota{"team-a": {{Name: "gpu", Hard: map[string]int64{"requests.nvidia.com/gpu": 2}}}},
	}
	got := Advise(scenario(), inv, 0)
	if len(got) != 4 {
		t.Fatalf("%d pieces of advice, want 4: %+v", len(got), got)
	}
	byKey := map[string]Advice{}
	for _, a := range got {
		byKey[a.Kind+"/"+a.Name+"/"+string(a.Resource)] = a
	}
	cases := []struct {
		key              string
		peak, p95        float64
		advised          int
		borrowing        *int
		patch, patchType string
		note             string
	}{
		// In a cohort: quota at the p95 (2), the peak's third GPU borrowed.
		{"ClusterQueue/team-a/nvidia.com/gpu", 3, 2, 2, ptr(1),
			`[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/1/nominalQuota","value":"2"},{"op":"add","path":"/spec/resourceGroups/0/flavors/0/resources/1/borrowingLimit","value":"1"}]`, "json", ""},
		// The slice is held all along: its quota of 1 fits.
		{"ClusterQueue/team-a/nvidia.com/mig-1g.10gb", 1, 1, 1, nil, "", "", ""},
		// No cohort: no borrowing, and the peak is said.
		{"ClusterQueue/team-a-alone/nvidia.com/gpu", 3, 2, 2, nil, "", "", "in no cohort"},
		// The namespace's ResourceQuota counts every model: the L4 replica
		// too, so 4 at the peak and 3 at the p95.
		{"ResourceQuota/gpu/nvidia.com/gpu", 4, 3, 3, nil, `{"spec":{"hard":{"requests.nvidia.com/gpu":"3"}}}`, "merge", "refused at the peak"},
	}
	for _, c := range cases {
		a, ok := byKey[c.key]
		if !ok {
			t.Errorf("no advice for %s", c.key)
			continue
		}
		if a.Peak != c.peak || a.P95 != c.p95 || a.Advised != c.advised {
			t.Errorf("%s: peak %g p95 %g advised %d, want %g %g %d", c.key, a.Peak, a.P95, a.Advised, c.peak, c.p95, c.advised)
		}
		if (a.AdvisedBorrowing == nil) != (c.borrowing == nil) || (c.borrowing != nil && *a.AdvisedBorrowing != *c.borrowing) {
			t.Errorf("%s: borrowing %v, want %v", c.key, a.AdvisedBorrowing, c.borrowing)
		}
		if a.Patch != c.patch || a.PatchType != c.patchType {
			t.Errorf("%s: patch %s (%s), want %s (%s)", c.key, a.Patch, a.PatchType, c.patch, c.patchType)
		}
		if c.patch != "" && !json.Valid([]byte(a.Patch)) {
			t.Errorf("%s: patch is not JSON", c.key)
		}
		if c.note != "" && !strings.Contains(strings.Join(a.Notes, " "), c.note) {
			t.Errorf("%s: notes %q lack %q", c.key, a.Notes, c.note)
		}
	}
	// The team-alone queue's existing borrowing limit of 4 is left alone:
	// it is in no cohort, so none is advised.
	if a := byKey["ClusterQueue/team-a-alone/nvidia.com/gpu"]; a.Borrowing == nil || *a.Borrowing != 4 {
		t.Errorf("today's borrowing limit %v, want 4 read back", a.Borrowing)
	}
}

func ptr(v int) *int { return &v }

// TestAdviseMargin: the margin is on the p95, rounded up.
func TestAdviseMargin(t *testing.T) {
	inv := &inventory.Inventory{Available: true,
		Quotas: map[string][]inventory.Quota{"team-b": {{Name: "gpu", Hard: map[string]int64{"requests.nvidia.com/gpu": 1}}}}}
	// team-b holds 1 H100 at every step: 1 × 1.2 → 2.
	got := Advise(scenario(), inv, 0.2)
	if len(got) != 1 || got[0].Advised != 2 || got[0].P95 != 1 {
		t.Fatalf("%+v, want 2 advised from a p95 of 1", got)
	}
}
