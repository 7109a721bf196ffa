package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/quota"
)

// ErrNoCluster: the command's answer lives in the API server, and no
// cluster could be read. quota fails with it rather than print "no
// patches", which would read as every quota fitting.
var ErrNoCluster = errors.New("no cluster access")

// Quotas compares every GPU quota of the cluster (Kueue ClusterQueues,
// namespaces' ResourceQuotas) with the GPUs its namespaces held at each
// step of the window, and advises each. A store of several clusters is
// advised cluster by cluster, each with its own quotas and its own
// series, each advice naming its cluster. The notes say what could not be
// advised, and why.
func (s *Session) Quotas(ctx context.Context) ([]quota.Advice, []string, error) {
	if !s.inv.Available {
		// No cluster could be read: the quotas are those the store's
		// series hold, where it holds any (kube-state-metrics',
		// Kueue's).
		why := s.inv.Skipped
		if len(s.clusterNotes) > 0 {
			why = []string{"no cluster could be read"}
		}
		if len(s.members) == 0 {
			advice, notes, ok, err := s.storeQuotas(ctx)
			if ok || err != nil {
				return advice, notes, err
			}
			why = append(slices.Clone(why), noQuotaSeries)
		}
		return nil, slices.Clone(s.clusterNotes), fmt.Errorf("%w: the quotas are not known (%s)", ErrNoCluster, strings.Join(why, "; "))
	}
	s.obs.Begin("reading usage")
	defer s.obs.End()
	k := s.scopeOf(nil)
	clusters, err := k.clusterValues(ctx, "advise quotas")
	if err != nil {
		return nil, s.notesWithout(s.unclustered()), err
	}
	if clusters != nil {
		return s.quotaClusters(ctx, k, clusters)
	}
	notes := s.notesWithout(s.unclustered())
	notes = append(notes, quotaInventoryNotes(s.inv, "")...)
	data, err := s.fetch(ctx, k, "", query.Scope{}, s.inv)
	if err != nil {
		return nil, notes, err
	}
	return quota.Advise(data, s.inv, s.thresholds.Quota.Margin), append(notes, data.Notes...), nil
}

// quotaClusters advises each cluster of a shared store with its own
// inventory and the usage of its own series; a cluster whose inventory
// could not be read is said in the notes, naming it.
func (s *Session) quotaClusters(ctx context.Context, k *scope, clusters []string) ([]quota.Advice, []string, error) {
	var (
		out    []quota.Advice
		notes  []string
		unread int
	)
	for _, c := range clusters {
		prefix := fleet.ClusterName(c) + ": "
		inv := s.fleet.Of(c, len(clusters))
		if !inv.Available {
			notes = append(notes, prefix+"no cluster access: the quotas are not known ("+strings.Join(inv.Skipped, "; ")+")")
			unread++
			continue
		}
		notes = append(notes, quotaInventoryNotes(inv, prefix)...)
		data, err := s.fetch(ctx, k, c, query.Cluster(s.cfg.ClusterLabel, c), inv)
		if errors.Is(err, plan.ErrNoData) {
			notes = append(notes, prefix+"no usage to advise from: "+err.Error())
			continue
		}
		if err != nil {
			return nil, notes, fmt.Errorf("%s%w", prefix, err)
		}
		for _, a := range quota.Advise(data, inv, s.thresholds.Quota.Margin) {
			a.Cluster = c
			out = append(out, a)
		}
		for _, n := range data.Notes {
			notes = append(notes, prefix+n)
		}
	}
	if unread == len(clusters) {
		return nil, notes, fmt.Errorf("%w: no cluster's quotas could be read", ErrNoCluster)
	}
	return out, append(notes, s.absentClusters(clusters)...), nil
}

// quotaInventoryNotes say, each after prefix, what of a read cluster the
// quota advice lacks: what could not be read, and Kueue where it is not
// installed.
func quotaInventoryNotes(inv *inventory.Inventory, prefix string) []string {
	var notes []string
	for _, sk := range inv.Skipped {
		notes = append(notes, prefix+"not read from the cluster: "+sk)
	}
	if inv.Kueue == nil && !slices.ContainsFunc(inv.Skipped, func(sk string) bool { return strings.HasPrefix(sk, "kueue") }) {
		notes = append(notes, prefix+"Kueue is not installed (no "+inventory.KueueAPI+" API): ResourceQuotas only")
	}
	return notes
}
