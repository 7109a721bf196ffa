package report

import (
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/query"
)

// teamTimeline regroups the namespaces' series into teams. GPU-hours add
// up, so a team's utilization in a bucket is its namespaces' used hours
// over their measured hours, not an average of their ratios.
func teamTimeline(tl *query.Timeline, teamOf func(namespace string) string) []TeamSeries {
	if tl == nil {
		return nil
	}
	type sums struct{ measured, used []float64 }
	byTeam := map[string]*sums{}
	for _, ns := range tl.Namespaces {
		team := teamOf(ns.Namespace)
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

// timelineTeams names the team of a namespace of the timeline. The
// timeline is read over the whole store, a namespace's series summed over
// the clusters that have it, so where the store holds several clusters a
// namespace is its team where every cluster it held GPUs in names the same
// one, and stays the namespace where they disagree.
func timelineTeams(cur *query.Result, teamOf func(cluster, namespace string) string) func(string) string {
	if clustersOf(cur) == nil {
		return func(ns string) string { return teamOf("", ns) }
	}
	teams := map[string]map[string]bool{}
	for _, x := range cur.Allocations {
		if teams[x.Namespace] == nil {
			teams[x.Namespace] = map[string]bool{}
		}
		teams[x.Namespace][teamOf(x.Cluster, x.Namespace)] = true
	}
	return func(ns string) string {
		if len(teams[ns]) == 1 {
			for t := range teams[ns] {
				return t
			}
		}
		return ns
	}
}
