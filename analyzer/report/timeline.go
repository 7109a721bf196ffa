package report

import (
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// teamTimeline regroups the namespaces' series into teams. GPU-hours add
// up, so a team's utilization in a bucket is its namespaces' used hours
// over their measured hours, not an average of their ratios. Where the
// store holds several clusters the timeline was read per cluster
// (fleet.MergeTimelines): a team is of one cluster, named cluster/team as
// the charts name it, and two clusters' team-a are two lines.
func teamTimeline(tl *fleet.Timeline, teamOf func(cluster, namespace string) string) []TeamSeries {
	if tl == nil {
		return nil
	}
	clustered := slices.ContainsFunc(tl.Namespaces, func(ns fleet.NamespaceSeries) bool { return ns.Cluster != "" })
	type sums struct{ measured, used []float64 }
	byTeam := map[string]*sums{}
	for _, ns := range tl.Namespaces {
		team := teamOf(ns.Cluster, ns.Namespace)
		if clustered {
			team = clusterCell(ns.Cluster) + "/" + team
		}
		s := byTeam[team]
		if s == nil {
			s = &sums{make([]float64, len(tl.Ends)), make([]float64, len(tl.Ends))}
			byTeam[team] = s
		}
		for i := range tl.Ends {
			s.measured[i] += ns.Measured[i]
			s.used[i] += ns.Used[i]
		}
	}
	out := make([]TeamSeries, 0, len(byTeam))
	for team, s := range byTeam {
		ts := TeamSeries{Team: team, Points: make([]Point, len(tl.Ends))}
		for i, end := range tl.Ends {
			ts.Points[i] = Point{End: end.UTC()}
			if s.measured[i] > 0 {
				ts.Points[i].Utilization = min(1, s.used[i]/s.measured[i])
				ts.Points[i].OK = true
			}
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b TeamSeries) int { return strings.Compare(a.Team, b.Team) })
	return out
}
