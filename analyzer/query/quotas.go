package query

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// QuotaSeries are the store's quota series at the window's end, as
// StoreQuotas reads them: kube_resourcequota's NVIDIA entries, Kueue's
// nominal quotas and borrowing limits, and the LocalQueues' usage series.
type QuotaSeries struct {
	ResourceQuotas, Nominal, Borrowing, LocalQueues model.Vector
}

// Empty says the store holds no quota at all: neither a ResourceQuota nor
// a ClusterQueue of a GPU resource.
func (q QuotaSeries) Empty() bool { return len(q.ResourceQuotas) == 0 && len(q.Nominal) == 0 }

// ReadQuotaSeries reads the quota series of scope sc in the store, each
// at the end of window w: the quotas in force then.
func ReadQuotaSeries(ctx context.Context, src source.Source, w fleet.Window, sc Scope) (QuotaSeries, error) {
	w, err := w.WithDefaults()
	if err != nil {
		return QuotaSeries{}, fmt.Errorf("analysis window: %w", err)
	}
	rng := w.SubqueryRange()
	var out QuotaSeries
	for _, q := range []struct {
		name, expr string
		into       *model.Vector
	}{
		{"resource quotas", signals.ResourceQuotas(rng), &out.ResourceQuotas},
		{"kueue nominal quotas", signals.KueueNominalQuotas(rng), &out.Nominal},
		{"kueue borrowing limits", signals.KueueBorrowingLimits(rng), &out.Borrowing},
		{"kueue local queues", signals.KueueLocalQueueFlavors(rng), &out.LocalQueues},
	} {
		vec, _, err := instantQuery(ctx, src, sc, q.name, q.expr, w.End)
		if err != nil {
			return QuotaSeries{}, fmt.Errorf("analysis query %q: %w", q.name, err)
		}
		*q.into = vec
	}
	return out, nil
}

// Inventory builds from the series the inventory's quota side, as the
// API server's objects would give it, so that quota.Advise reads either
// alike: Available, Quotas and Kueue, nothing else. What the series
// cannot tell is said in notes: a ClusterQueue none of whose flavors a
// LocalQueue's usage names admits namespaces not known, and is left out
// rather than advised from no usage.
//
// The store does not hold what the objects' specs alone say: the
// ResourceFlavors' node labels (Kueue.Flavors stays empty) and the place
// of each resource in a ClusterQueue's spec (KueueQuota.Path stays empty).
func (q QuotaSeries) Inventory() (*inventory.Inventory, []string) {
	inv := &inventory.Inventory{Available: true, Quotas: resourceQuotas(q.ResourceQuotas)}
	k, notes := kueueQueues(q.Nominal, q.Borrowing, q.LocalQueues)
	inv.Kueue = k
	return inv, notes
}

func label(s *model.Sample, name string) string { return string(s.Metric[model.LabelName(name)]) }

// resourceQuotas groups kube_resourcequota's samples per namespace and
// quota; a quota with no hard GPU entry is left out, as the API reader
// leaves out a quota on CPU and memory only.
func resourceQuotas(vec model.Vector) map[string][]inventory.Quota {
	type key struct{ ns, name string }
	byKey := map[key]*inventory.Quota{}
	for _, s := range vec {
		v := float64(s.Value)
		res := label(s, signals.LabelQuotaResource)
		bare, ok := strings.CutPrefix(res, "requests.")
		if !ok {
			bare, _ = strings.CutPrefix(res, "limits.")
		}
		if math.IsNaN(v) || !vocab.Resource(bare).IsGPU() {
			continue
		}
		k := key{label(s, signals.LabelNamespace), label(s, signals.LabelResourceQuota)}
		qt := byKey[k]
		if qt == nil {
			qt = &inventory.Quota{Name: k.name}
			byKey[k] = qt
		}
		switch label(s, signals.LabelQuotaType) {
		case "hard":
			if qt.Hard == nil {
				qt.Hard = map[string]int64{}
			}
			qt.Hard[res] = int64(math.Round(v))
		case "used":
			if qt.Used == nil {
				qt.Used = map[string]int64{}
			}
			qt.Used[res] = int64(math.Round(v))
		}
	}
	out := map[string][]inventory.Quota{}
	for _, k := range slices.SortedFunc(maps.Keys(byKey), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
	}) {
		if byKey[k].Hard != nil {
			out[k.ns] = append(out[k.ns], *byKey[k])
		}
	}
	return out
}

// kueueQueues builds the ClusterQueues from their nominal quotas and
// borrowing limits, and their LocalQueues from the flavors the
// LocalQueues' usage names: a flavor one ClusterQueue alone offers tells
// which queue the LocalQueue admits through.
func kueueQueues(nominal, borrowing, localQueues model.Vector) (*inventory.Kueue, []string) {
	type key struct{ cq, flavor, resource string }
	limits := map[key]float64{}
	for _, s := range borrowing {
		limits[key{label(s, signals.LabelClusterQueue), label(s, signals.LabelFlavor), label(s, signals.LabelQuotaResource)}] = float64(s.Value)
	}
	queues := map[string]*inventory.ClusterQueue{}
	offered := map[[2]string][]string{} // flavor, resource → queues
	for _, s := range nominal {
		name, flavor, res := label(s, signals.LabelClusterQueue), label(s, signals.LabelFlavor), label(s, signals.LabelQuotaResource)
		if math.IsNaN(float64(s.Value)) || !vocab.Resource(res).IsGPU() {
			continue
		}
		cq := queues[name]
		if cq == nil {
			cq = &inventory.ClusterQueue{Name: name, Cohort: label(s, signals.LabelCohort)}
			queues[name] = cq
		}
		kq := inventory.KueueQuota{Flavor: flavor, Resource: vocab.Resource(res), Nominal: float64(s.Value)}
		// Kueue reports a borrowing limit that is not set as +Inf
		// (pkg/cache/scheduler/clusterqueue.go); a finite one is set.
		if b, ok := limits[key{name, flavor, res}]; ok && !math.IsInf(b, 1) && !math.IsNaN(b) {
			kq.Borrowing = &b
		}
		cq.Quotas = append(cq.Quotas, kq)
		if fr := [2]string{flavor, res}; !slices.Contains(offered[fr], name) {
			offered[fr] = append(offered[fr], name)
		}
	}
	if len(queues) == 0 {
		return nil, nil
	}
	k := &inventory.Kueue{Flavors: map[string]map[string]string{}}
	var notes []string
	type lqKey struct{ ns, name, cq string }
	seen := map[lqKey]bool{}
	ambiguous := map[string]bool{}
	for _, s := range localQueues {
		ns, name := label(s, signals.LabelNamespace), label(s, signals.LabelLocalQueue)
		by := offered[[2]string{label(s, signals.LabelFlavor), label(s, signals.LabelQuotaResource)}]
		switch len(by) {
		case 0:
			continue
		case 1:
			if lk := (lqKey{ns, name, by[0]}); !seen[lk] {
				seen[lk] = true
				k.LocalQueues = append(k.LocalQueues, inventory.LocalQueue{Namespace: ns, Name: name, ClusterQueue: by[0]})
			}
		default:
			ambiguous[ns+"/"+name] = true
		}
	}
	slices.SortFunc(k.LocalQueues, func(a, b inventory.LocalQueue) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ClusterQueue, b.ClusterQueue))
	})
	for _, lq := range slices.Sorted(maps.Keys(ambiguous)) {
		notes = append(notes, fmt.Sprintf("LocalQueue %s: its flavors are offered by several ClusterQueues, so the store does not tell which it admits through", lq))
	}
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		cq := queues[name]
		if len(k.Namespaces(name)) == 0 {
			notes = append(notes, fmt.Sprintf("ClusterQueue %s: not advised: no LocalQueue's %s series names a flavor it alone offers, so the namespaces it admits are not known (Kueue exports LocalQueue metrics with its LocalQueueMetrics feature gate)",
				name, signals.MetricKueueLocalQueueUsage))
			continue
		}
		slices.SortFunc(cq.Quotas, func(a, b inventory.KueueQuota) int {
			return cmp.Or(cmp.Compare(a.Flavor, b.Flavor), cmp.Compare(a.Resource, b.Resource))
		})
		k.ClusterQueues = append(k.ClusterQueues, *cq)
	}
	return k, notes
}
