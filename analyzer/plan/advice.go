package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// ApplyAdvice makes d the fleet after the week's advice (issue 54): the
// lanes of every workload a recommendation releases (ActionRelease: scale
// it to zero, or delete the pod) are gone, so the plan packs what stays
// and its saving is what acting on the advice takes off the bill. Every
// other action changes a workload's shape, which the planner sizes from
// the lane's measured use under the same margin and compute target as
// recommend (report.Consolidation.Differences says where they part), so it
// leaves the lane as it is. The GPUs stay: they are today's, which the
// freed ones are counted from.
//
// recs are one cluster's (the caller filters by Workload.Cluster, which
// is not compared here). A recommendation that names a container releases
// that container's lanes; one that names none releases the workload's.
// It returns the lanes it removed, by name, pool by pool.
func ApplyAdvice(d *Data, recs []*recommend.Recommendation) []string {
	var release []workload.Ref
	for _, r := range recs {
		if r != nil && r.Action == recommend.ActionRelease {
			release = append(release, r.Workload)
		}
	}
	if len(release) == 0 {
		return nil
	}
	released := func(l *Lane) bool {
		return slices.ContainsFunc(release, func(w workload.Ref) bool {
			return w.Kind == l.Workload.Kind && w.Namespace == l.Workload.Namespace && w.Name == l.Workload.Name &&
				(w.Container == "" || w.Container == l.Workload.Container)
		})
	}
	var gone []string
	for _, p := range d.Pools {
		p.Lanes = slices.DeleteFunc(p.Lanes, func(l *Lane) bool {
			if released(l) {
				gone = append(gone, l.Name())
				return true
			}
			return false
		})
	}
	if len(gone) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("the fleet after the advice: %d lanes that recommend releases are not planned (%s); --as-is plans today's fleet with them",
			len(gone), strings.Join(gone, ", ")))
	}
	return gone
}
