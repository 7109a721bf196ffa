package reclaim

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline"
)

// TestFromPipeline: the window, the stale nodes (data stopped more than
// fleet.StaleAfter, 5m, before the window's last step) and what makes an
// analysis partial for the reclaimer, and only that.
func TestFromPipeline(t *testing.T) {
	start := now.Add(-24 * time.Hour)
	cur := &fleet.Result{Window: fleet.Window{Start: start, End: now, Step: time.Minute}, GPUs: []fleet.GPU{
		{GPUKey: fleet.GPUKey{Node: "fresh", UUID: "a"}, SinceLastSeen: time.Minute},
		{GPUKey: fleet.GPUKey{Node: "stopped", UUID: "b"}, SinceLastSeen: 20 * time.Minute},
	}}
	for _, tc := range []struct {
		name    string
		inv     *inventory.Inventory
		skipped []string
		partial []string
	}{
		{"whole", &inventory.Inventory{Available: true}, []string{"untainted-gpu-node: needs cluster access"}, nil},
		{"no cluster", nil, nil, []string{"the cluster was not read: workloads' owners are unconfirmed"}},
		{"pods denied", &inventory.Inventory{Available: true, Skipped: []string{"pods: forbidden"}}, nil, []string{"not read from the cluster: pods: forbidden"}},
		{"idle not checked", &inventory.Inventory{Available: true}, []string{"idle-allocation: no utilization"}, []string{"not checked: idle-allocation: no utilization"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := FromPipeline(&pipeline.Analysis{Current: cur, Inventory: tc.inv, Findings: &findings.Result{Skipped: tc.skipped}}, "")
			if !a.End.Equal(now) || a.Window != 24*time.Hour {
				t.Errorf("window %v ending %v", a.Window, a.End)
			}
			if len(a.Stale) != 1 || !a.Stale["stopped"] {
				t.Errorf("stale %v, want stopped alone", a.Stale)
			}
			if !slices.Equal(a.Partial, tc.partial) {
				t.Errorf("partial %q, want %q", a.Partial, tc.partial)
			}
		})
	}
}
