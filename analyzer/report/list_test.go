package report

import (
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// List is gpulens recommend's answer beside its list, in the order the
// command said it before the list moved here (cmd/gpulens/recommend.go at
// 4e02ce4): the clusters not read, the skipped checks, then, only outside
// the table, why the filter left nothing; in the table that reason is the
// whole answer, since the table's own empty message would blame the fleet.
func TestList(t *testing.T) {
	res := &fleet.Result{Allocations: []fleet.Allocation{{AllocationKey: fleet.AllocationKey{Namespace: "team-b", Pod: "b-0"}}}}
	found := &findings.Result{
		Findings: []findings.Finding{{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "team-a", Pod: "a-0"}},
		Skipped:  []string{"untainted-gpu-node: needs cluster access"},
	}
	sel, err := ParseSelector("")
	if err != nil {
		t.Fatal(err)
	}
	notes := []string{"not read from eu\x1b[31m"}
	// -n team-b: a namespace of the data (b-0's) with none of the window's
	// findings: the window's one finding is team-a's.
	why := "no finding of the window is in namespace team-b (1 is in others)"
	for _, tc := range []struct {
		format     string
		namespaces []string
		said       []string
		empty      string
		pods       []string
	}{
		{format: "table", said: []string{`note: not read from eu\x1b[31m`, "skipped: untainted-gpu-node: needs cluster access"}, pods: []string{"a-0"}},
		{format: "table", namespaces: []string{"team-b"}, said: []string{`note: not read from eu\x1b[31m`, "skipped: untainted-gpu-node: needs cluster access"},
			empty: "No findings: " + why + ".\n"},
		{format: "json", namespaces: []string{"team-b"}, said: []string{`note: not read from eu\x1b[31m`, "skipped: untainted-gpu-node: needs cluster access", "note: " + why}},
	} {
		l := List(res, found, notes, ListOptions{Namespaces: tc.namespaces, Selector: sel, Format: tc.format})
		var pods []string
		for _, f := range l.Findings {
			pods = append(pods, f.Pod)
		}
		if !slices.Equal(l.Said, tc.said) || l.Empty != tc.empty || !slices.Equal(pods, tc.pods) {
			t.Errorf("%s -n %v: said %q, empty %q, pods %v; want %q, %q, %v", tc.format, tc.namespaces, l.Said, l.Empty, pods, tc.said, tc.empty, tc.pods)
		}
	}
}
