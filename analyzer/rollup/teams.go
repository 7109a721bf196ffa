package rollup

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
)

// Team is one team's allocations: a namespace's team label, or the
// namespace itself. Where the store holds several clusters a team is of
// one cluster (Cluster, its label value): two clusters' team-a are two.
type Team struct {
	Cluster     string   `json:"cluster,omitempty"`
	Team        string   `json:"team"`
	Namespaces  []string `json:"namespaces"`
	Allocations int      `json:"allocations"`
	Hours
	// AllocationCost and UsageCost are the team's charges in the ledger
	// on each basis (unknown where CostKnown is false): Cost is held
	// GPU-hours at their price, AllocationCost the same less what the
	// ledger scaled down where tenants held more than their GPU's hours.
	AllocationCost float64 `json:"allocation_cost"`
	UsageCost      float64 `json:"usage_cost"`
	Previous       *Hours  `json:"previous"`
	Change         *Change `json:"change"`
}

// Input is what the teams are rolled up from.
type Input struct {
	// Current is the window rolled up. Previous is the window before it
	// where its figures are comparable (pipeline.Analysis.Comparable),
	// else nil: no team then has previous figures.
	Current, Previous *fleet.Result
	// Team names the team of a namespace of a cluster ("" where the store
	// holds one cluster); nil means the namespace.
	Team func(cluster, namespace string) string
	// Ledger charges Current's GPU-hours; the teams' AllocationCost and
	// UsageCost are its tenants', and each tenant is given its team
	// (ledger.Tenant.Team). Nil: Teams charges nothing, Build charges
	// Current itself.
	Ledger *ledger.Ledger
	// UsedWithoutPod says a GPU was in use while no allocation held it
	// (findings.Result.UsedWithoutPod): its time nobody held is then
	// unattributed, not unallocated. Nil: none was.
	UsedWithoutPod func(fleet.GPUKey) bool
}

// teamKey is a team of a cluster: two clusters' team-a are two teams.
type teamKey struct{ cluster, team string }

// Teams rolls the allocations of in up by team, the most allocated
// GPU-hours first.
func Teams(in Input, pr *Pricer) []Team {
	teamOf := in.Team
	if teamOf == nil {
		teamOf = func(_, ns string) string { return ns }
	}
	prev := in.Previous
	if prev == nil {
		prev = &fleet.Result{}
	}
	byTeam := map[teamKey]*Team{}
	get := func(cluster, ns string) *Team {
		k := teamKey{cluster, teamOf(cluster, ns)}
		t := byTeam[k]
		if t == nil {
			t = &Team{Team: k.team, Cluster: cluster}
			byTeam[k] = t
		}
		if !slices.Contains(t.Namespaces, ns) {
			t.Namespaces = append(t.Namespaces, ns)
		}
		return t
	}
	for _, x := range in.Current.Allocations {
		t := get(x.Cluster, x.Namespace)
		t.Allocations++
		t.Add(x, pr)
	}
	// The previous window counts only for teams that exist now: a team
	// that is gone has nothing to report on this week. A cluster whose
	// GPUs reported then has known figures for it, zero for a team that
	// held nothing.
	hadPrev := map[string]bool{}
	for _, g := range prev.GPUs {
		hadPrev[g.Cluster] = true
	}
	for _, x := range prev.Allocations {
		if t := byTeam[teamKey{x.Cluster, teamOf(x.Cluster, x.Namespace)}]; t != nil {
			if t.Previous == nil {
				t.Previous = &Hours{}
			}
			t.Previous.Add(x, pr)
		}
	}
	out := make([]Team, 0, len(byTeam))
	for _, t := range byTeam {
		if hadPrev[t.Cluster] && t.Previous == nil {
			t.Previous = &Hours{} // it held nothing last week: a known zero
		}
		slices.Sort(t.Namespaces)
		t.Finish(pr)
		if t.Previous != nil {
			t.Previous.Finish(pr)
		}
		t.Change = ChangeOf(t.Hours, t.Previous)
		out = append(out, *t)
	}
	slices.SortFunc(out, byAllocated)
	if in.Ledger != nil {
		out = charge(out, in.Ledger, teamOf, pr)
	}
	return out
}

func byAllocated(a, b Team) int {
	return cmp.Or(cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours), strings.Compare(a.Team, b.Team), strings.Compare(a.Cluster, b.Cluster))
}

// charge adds the ledger's charges to the teams, and names each tenant's
// team in it. A team with tenants only the ledger knows (HAMi's, which
// hold a share of a GPU without an allocation series) is added.
func charge(teams []Team, l *ledger.Ledger, teamOf func(cluster, namespace string) string, pr *Pricer) []Team {
	at := map[teamKey]int{}
	for i, t := range teams {
		at[teamKey{t.Cluster, t.Team}] = i
	}
	added := false
	for gi := range l.GPUs {
		g := &l.GPUs[gi]
		for xi := range g.Tenants {
			x := &g.Tenants[xi]
			k := teamKey{g.Cluster, teamOf(g.Cluster, x.Namespace)}
			x.Team = k.team
			i, ok := at[k]
			if !ok {
				i, added = len(teams), true
				at[k] = i
				t := Team{Cluster: g.Cluster, Team: k.team}
				t.CostKnown = pr.Known()
				teams = append(teams, t)
			}
			t := &teams[i]
			if !slices.Contains(t.Namespaces, x.Namespace) {
				t.Namespaces = append(t.Namespaces, x.Namespace)
				slices.Sort(t.Namespaces)
			}
			if t.Allocations == 0 && !g.PriceKnown {
				// Only a team of HAMi tenants: the others' unpriced hours
				// are their allocations'.
				t.Unpriced, t.CostKnown = AddUnpriced(t.Unpriced, g.Model, 0, x.Allocation.GPUHours, 0), false
			}
			t.AllocationCost += x.Allocation.Cost
			t.UsageCost += x.Usage.Cost
		}
	}
	if added {
		slices.SortStableFunc(teams, byAllocated)
	}
	return teams
}
