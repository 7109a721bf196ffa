package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// TestApplyAdvice: only release-allocation takes lanes out of the plan's
// input, every lane of the workload it names (of the container it names,
// where it names one); a right-sizing leaves its lane to the planner's
// own sizing, and a release of a workload with no lane here (another
// pool's, or gone) removes nothing.
func TestApplyAdvice(t *testing.T) {
	nb := workload.Ref{Kind: "Pod", Namespace: "research", Name: "nb", Container: "jupyter"}
	etl := workload.Ref{Kind: "StatefulSet", Namespace: "batch", Name: "etl", Container: "worker"}
	side := workload.Ref{Kind: "StatefulSet", Namespace: "batch", Name: "etl", Container: "sidecar"}
	svc := workload.Ref{Kind: "Deployment", Namespace: "web", Name: "svc", Container: "main"}
	data := func() *Data {
		return &Data{Pools: []*Pool{
			{Product: "a", Lanes: []*Lane{{Workload: nb}, {Workload: svc}}},
			{Product: "b", Lanes: []*Lane{{Workload: etl, Replica: 1}, {Workload: etl, Replica: 2}, {Workload: side}}},
		}}
	}
	release := func(w workload.Ref) *recommend.Recommendation {
		return &recommend.Recommendation{Action: recommend.ActionRelease, Workload: w}
	}
	for _, c := range []struct {
		name string
		recs []*recommend.Recommendation
		gone []string
		left [][]string
	}{
		{"no advice", nil, nil, [][]string{{"Pod/research/nb", "Deployment/web/svc"}, {"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2", "StatefulSet/batch/etl"}}},
		{"a release", []*recommend.Recommendation{release(nb)}, []string{"Pod/research/nb"},
			[][]string{{"Deployment/web/svc"}, {"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2", "StatefulSet/batch/etl"}}},
		{"a right-sizing stays", []*recommend.Recommendation{{Action: recommend.ActionMIGProfile, Workload: svc}, {Action: recommend.ActionTimeSlicing, Workload: nb}}, nil,
			[][]string{{"Pod/research/nb", "Deployment/web/svc"}, {"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2", "StatefulSet/batch/etl"}}},
		{"every replica of the container named", []*recommend.Recommendation{release(etl)}, []string{"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2"},
			[][]string{{"Pod/research/nb", "Deployment/web/svc"}, {"StatefulSet/batch/etl"}}},
		{"no container: the whole workload", []*recommend.Recommendation{release(workload.Ref{Kind: "StatefulSet", Namespace: "batch", Name: "etl"})},
			[]string{"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2", "StatefulSet/batch/etl"}, [][]string{{"Pod/research/nb", "Deployment/web/svc"}, {}}},
		{"another kind of the same name is another workload", []*recommend.Recommendation{release(workload.Ref{Kind: "Deployment", Namespace: "research", Name: "nb"}), nil}, nil,
			[][]string{{"Pod/research/nb", "Deployment/web/svc"}, {"StatefulSet/batch/etl#1", "StatefulSet/batch/etl#2", "StatefulSet/batch/etl"}}},
	} {
		d := data()
		gone := ApplyAdvice(d, c.recs)
		if !slices.Equal(gone, c.gone) {
			t.Errorf("%s: removed %q, want %q", c.name, gone, c.gone)
		}
		for i, p := range d.Pools {
			var left []string
			for _, l := range p.Lanes {
				left = append(left, l.Name())
			}
			if len(left) != len(c.left[i]) || !slices.Equal(left, c.left[i]) {
				t.Errorf("%s: pool %s keeps %q, want %q", c.name, p.Product, left, c.left[i])
			}
		}
		// What it removed is said, and where nothing was, nothing is.
		said := slices.ContainsFunc(d.Notes, func(n string) bool { return strings.Contains(n, "--as-is") })
		if said != (len(c.gone) > 0) {
			t.Errorf("%s: notes %q", c.name, d.Notes)
		}
	}
}
