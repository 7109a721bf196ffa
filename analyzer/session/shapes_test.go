package session

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// TestShapeDifferences: recommend and plan agree on a workload's shape,
// or the report says how they differ and why (issue 44: team-vision/
// ocr-serving was a 1g.20gb slice in recommend and a time-sliced replica
// in the plan, said nowhere).
func TestShapeDifferences(t *testing.T) {
	ref := func(name string) workload.Ref { return workload.Ref{Kind: "Deployment", Namespace: "team", Name: name} }
	rec := func(name string, a recommend.Action, to string) findings.Finding {
		return findings.Finding{Recommendation: &recommend.Recommendation{Action: a, Workload: ref(name), To: to}}
	}
	fs := []findings.Finding{
		rec("ocr", recommend.ActionMIGProfile, "nvidia.com/mig-1g.20gb"),
		rec("notebook", recommend.ActionMIGProfile, "mig.nvidia.com 3g.40gb"),
		rec("agrees", recommend.ActionMIGProfile, "nvidia.com/mig-2g.20gb"),
		// A DRA claim of two slices (dra.Request.Device's "×2"): each
		// replica the plan places is one such slice, so they agree.
		rec("pair", recommend.ActionMIGProfile, "mig.nvidia.com 1g.10gb ×2"),
		rec("released", recommend.ActionRelease, ""),
		rec("trainer", recommend.ActionDedicatedGPU, "nvidia.com/gpu"),
	}
	p := &plan.Plan{Pools: []plan.PoolPlan{{Assignments: []plan.Assignment{
		{Workload: ref("ocr"), Mode: plan.ModeTimeSlicing},
		{Workload: ref("ocr"), Mode: plan.ModeTimeSlicing}, // a second replica: said once
		{Workload: ref("notebook"), Mode: plan.ModeMIG, Slice: "2g.20gb"},
		{Workload: ref("agrees"), Mode: plan.ModeMIG, Slice: "2g.20gb"},
		{Workload: ref("pair"), Mode: plan.ModeMIG, Slice: "1g.10gb"},
		{Workload: ref("released"), Mode: plan.ModeTimeSlicing},
		{Workload: ref("trainer"), Mode: plan.ModeTimeSlicing, Training: true},
		{Workload: ref("unjudged"), Mode: plan.ModeWhole},
	}}}}
	got := shapeDifferences(fs, p)
	want := map[string][2]string{
		"Deployment/team/ocr":      {"a MIG 1g.20gb slice", "a time-sliced replica"},
		"Deployment/team/notebook": {"a MIG 3g.40gb slice", "a MIG 2g.20gb slice"},
		"Deployment/team/trainer":  {"a whole GPU", "a time-sliced replica"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d differences %+v, want %d", len(got), got, len(want))
	}
	for _, d := range got {
		w, ok := want[d.Workload]
		if !ok || d.Recommend != w[0] || d.Plan != w[1] || d.Why == "" {
			t.Errorf("%+v, want recommended %q, planned %q and a reason", d, w[0], w[1])
		}
	}
}
