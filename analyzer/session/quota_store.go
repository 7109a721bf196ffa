package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/signals"
)

// QuotasFromStore is the note that says the quotas were read from the
// store rather than from a cluster; the command says it on stderr too.
const QuotasFromStore = "quotas read from the store's " + signals.MetricResourceQuota + " and kueue_cluster_queue_* series; no cluster access"

// noQuotaSeries is what the store lacks when it holds no quota either.
const noQuotaSeries = "the store holds no quota series either (" + signals.MetricResourceQuota + " of an NVIDIA resource, " +
	signals.MetricKueueNominalQuota + ")"

// storeQuotas advises the quotas the store's series hold, where no
// cluster could be read: kube-state-metrics' ResourceQuotas and Kueue's
// ClusterQueues, built into an inventory's quota side so that
// quota.Advise reads them as it reads the API server's. A store of
// several clusters is read cluster by cluster, as quotaClusters reads the
// clusters' APIs. ok is false where the store holds no quota series: the
// caller's ErrNoCluster stands, saying so.
func (s *Session) storeQuotas(ctx context.Context) (out []quota.Advice, notes []string, ok bool, err error) {
	s.obs.Begin("reading quotas and usage")
	defer s.obs.End()
	k := s.scopeOf(nil)
	clusters, err := k.clusterValues(ctx, "advise quotas")
	if err != nil {
		return nil, nil, true, err
	}
	type scoped struct {
		cluster string
		sc      query.Scope
	}
	scopes := []scoped{{}}
	if clusters != nil {
		scopes = scopes[:0]
		for _, c := range clusters {
			scopes = append(scopes, scoped{c, query.Cluster(s.cfg.ClusterLabel, c)})
		}
	}
	notes = []string{QuotasFromStore}
	for _, c := range scopes {
		prefix := ""
		if c.cluster != "" || clusters != nil {
			prefix = fleet.ClusterName(c.cluster) + ": "
		}
		series, err := query.ReadQuotaSeries(ctx, s.src, s.window, c.sc)
		if err != nil {
			return nil, notes, true, fmt.Errorf("%s%w", prefix, err)
		}
		if series.Empty() {
			if clusters != nil {
				notes = append(notes, prefix+"no quota series in the store ("+signals.MetricResourceQuota+", "+signals.MetricKueueNominalQuota+")")
			}
			continue
		}
		ok = true
		inv, invNotes := series.Inventory()
		for _, n := range invNotes {
			notes = append(notes, prefix+n)
		}
		data, err := s.fetch(ctx, k, c.cluster, c.sc, s.inv)
		if errors.Is(err, plan.ErrNoData) && clusters != nil {
			notes = append(notes, prefix+"no usage to advise from: "+err.Error())
			continue
		}
		if err != nil {
			return nil, notes, true, fmt.Errorf("%s%w", prefix, err)
		}
		for _, a := range quota.Advise(data, inv, s.thresholds.Quota.Margin) {
			a.Cluster = c.cluster
			out = append(out, fromStore(a))
		}
		for _, n := range data.Notes {
			notes = append(notes, prefix+n)
		}
	}
	return out, notes, ok, nil
}

// fromStore corrects a ClusterQueue's advice for what the store does not
// hold. The place of the resource in the ClusterQueue's spec is not in
// Kueue's metrics, so no JSON patch can name it: the advice says the
// values to set instead. The flavors' node labels are not either: Advise's
// note that the flavor selects no GPU model would be false, so it says
// that the store does not tell the model.
func fromStore(a quota.Advice) quota.Advice {
	if a.Kind != quota.KindClusterQueue {
		return a
	}
	notes := a.Notes[:0:0]
	for _, n := range a.Notes {
		if strings.HasPrefix(n, "flavor "+a.Flavor+" selects no ") {
			n = fmt.Sprintf("flavor %s: the store does not hold its node labels (%s), so GPUs of every model count against it", a.Flavor, inventory.KueueAPI+" ResourceFlavor")
		}
		notes = append(notes, n)
	}
	if a.Patch != "" {
		set := fmt.Sprintf("nominalQuota %d", a.Advised)
		if a.AdvisedBorrowing != nil {
			set += fmt.Sprintf(" and borrowingLimit %d", *a.AdvisedBorrowing)
		}
		notes = append(notes, fmt.Sprintf("no patch: the resource's place in the ClusterQueue's spec is not in the store; set %s on flavor %s, resource %s", set, a.Flavor, a.Resource))
		a.Patch, a.PatchType = "", ""
	}
	a.Notes = notes
	return a
}
