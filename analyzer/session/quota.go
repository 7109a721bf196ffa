package session

import (
	"context"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/quota"
)

// Quotas compares every GPU quota of the cluster (Kueue ClusterQueues,
// namespaces' ResourceQuotas) with the GPUs its namespaces held at each
// step of the window, and advises each. The notes say what could not be
// advised, and why.
func (s *Session) Quotas(ctx context.Context) ([]quota.Advice, []string, error) {
	notes := s.notesWithout("quotas are not yet advised per cluster")
	if !s.inv.Available {
		why := s.inv.Skipped
		if len(s.clusterNotes) > 0 {
			why = []string{"no cluster could be read"}
		}
		return nil, append(notes, "no cluster access: the quotas are not known ("+strings.Join(why, "; ")+")"), nil
	}
	for _, sk := range s.inv.Skipped {
		notes = append(notes, "not read from the cluster: "+sk)
	}
	if s.inv.Kueue == nil && !slices.ContainsFunc(s.inv.Skipped, func(sk string) bool { return strings.HasPrefix(sk, "kueue") }) {
		notes = append(notes, "Kueue is not installed (no "+inventory.KueueAPI+" API): ResourceQuotas only")
	}
	s.obs.Begin("reading usage")
	defer s.obs.End()
	data, err := s.fetch(ctx)
	if err != nil {
		return nil, notes, err
	}
	return quota.Advise(data, s.inv, s.thresholds.Quota.Margin), append(notes, data.Notes...), nil
}
