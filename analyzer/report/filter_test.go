package report

import (
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Filter, recommend's list: team-b's pods held GPUs without a finding,
// so -n team-b is a namespace of the data that the filter emptied, while
// -n team-c is none of the data's; an unfiltered empty list says nothing.
func TestFilter(t *testing.T) {
	res := &fleet.Result{Allocations: []fleet.Allocation{
		{AllocationKey: fleet.AllocationKey{Namespace: "team-b", Pod: "b-0"}},
		{AllocationKey: fleet.AllocationKey{Namespace: "team-a", Pod: "a-0"}},
	}}
	all := []findings.Finding{
		{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "team-a", Pod: "a-0"},
		{Kind: "idle-allocation", Severity: findings.Info, Namespace: "team-a", Pod: "a-1"},
	}
	for _, tc := range []struct {
		name, selector string
		namespaces     []string
		listAll        bool
		pods           []string
		why            string
	}{
		{name: "no filter", pods: []string{"a-0"}},
		{name: "all", listAll: true, pods: []string{"a-0", "a-1"}},
		{name: "selector", selector: "severity=info", listAll: true, pods: []string{"a-1"}},
		{name: "namespace in the data", namespaces: []string{"team-b"},
			why: "no finding of the window is in namespace team-b (2 are in others)"},
		{name: "namespace not in the data", namespaces: []string{"team-c"},
			why: "no namespace team-c in the data (its namespaces: team-a, team-b)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := ParseSelector(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			out, why := Filter(res, all, tc.listAll, tc.namespaces, sel)
			var pods []string
			for _, f := range out {
				pods = append(pods, f.Pod)
			}
			if !slices.Equal(pods, tc.pods) || why != tc.why {
				t.Errorf("Filter = %v, %q; want %v, %q", pods, why, tc.pods, tc.why)
			}
		})
	}
	if _, err := ParseSelector("tema=team-a"); err == nil {
		t.Error("ParseSelector(tema=team-a): no error; want the unknown label refused")
	}
}
