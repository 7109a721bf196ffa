package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/signals"
)

// analyzeClusters analyses a store of several clusters one cluster at a
// time, each reading only its series (query.Cluster, the scope of its
// every read), and joins each with its own inventory: every figure of
// a cluster is the one an analysis of that cluster's own Prometheus gives,
// and a namespace, pod or node of the same name in two clusters is two.
// One cluster at a time also bounds the memory by the largest cluster,
// not the fleet.
func (a *Analysis) analyzeClusters(ctx context.Context, o Options, sch signals.Schema, clusters []string, cur, prevW fleet.Window, progress func()) error {
	a.Clusters = clusters
	a.timelines = map[string]*fleet.Timeline{}
	a.Inventory = nil
	a.inventories = map[string]*inventory.Inventory{}
	var resParts, prevParts []fleet.Clustered
	var found []findings.Clustered
	gpus := 0
	for _, c := range clusters {
		sc := query.Cluster(o.ClusterLabel, c)
		res, err := query.AnalyzeScoped(ctx, o.Source, sc, sch, cur, o.currentSharding())
		if err != nil {
			return fmt.Errorf("%s: %w", fleet.ClusterName(c), err)
		}
		a.timelines[c] = res.Timeline
		a.keepUsage(c, res)
		prev, err := o.previous(ctx, sc, sch, prevW)
		if err != nil {
			return fmt.Errorf("%s: previous window: %w", fleet.ClusterName(c), err)
		}
		inv := o.fleet().Of(c, len(clusters))
		a.inventories[c] = inv
		gpus += len(res.GPUs)
		// Detected before the cluster is named in the results' keys: the
		// inventory of one cluster knows its objects by their own names.
		// HAMi's series within the same scope: each cluster's
		// tenants, named for it by MergeClusters, never another's.
		if err := readHAMi(ctx, o.Source, sc, sch, cur, res); err != nil {
			return fmt.Errorf("%s: %w", fleet.ClusterName(c), err)
		}
		detected := findings.Detect(res, inv, o.findingsConfig(), o.Prices)
		addHAMi(o, res, detected)
		if o.CurrentOnly {
			// No previous window read: nothing of HAMi's to read for it.
		} else if err := previousHAMi(ctx, o.Source, sc, sch, prevW, prev); err != nil {
			return fmt.Errorf("%s: %w", fleet.ClusterName(c), err)
		}
		found = append(found, findings.Clustered{Cluster: c, Result: detected})
		resParts = append(resParts, fleet.Clustered{Cluster: c, Result: res})
		prevParts = append(prevParts, fleet.Clustered{Cluster: c, Result: prev})
		a.inventoryNotes = append(a.inventoryNotes, inventoryNotes(inv, fleet.ClusterName(c)+": ")...)
	}
	if gpus == 0 {
		return noData(o, []signals.Schema{sch}, "")
	}
	a.Current = fleet.MergeClusters(resParts)
	progress()
	a.Previous = fleet.MergeClusters(prevParts)
	progress()
	a.Findings = findings.MergeClusters(found)
	return nil
}

// fleet is Options.Fleet, or Inventory as a fleet of one unnamed cluster.
func (o Options) fleet() *inventory.Fleet {
	if o.Fleet != nil {
		return o.Fleet
	}
	return inventory.SingleFleet(o.Inventory)
}

// InventoryOf is the inventory cluster's results were joined with: the
// run's Inventory where the store holds one cluster.
func (a *Analysis) InventoryOf(cluster string) *inventory.Inventory {
	if a.inventories != nil {
		return a.inventories[cluster]
	}
	return a.Inventory
}

// TeamOf is the team of a namespace of a cluster: the one its own
// cluster's inventory names (the namespace, without an inventory).
func (a *Analysis) TeamOf(cluster, namespace string) string {
	return a.InventoryOf(cluster).Team(namespace)
}

// timeline is the utilization over time the analysis folded, of each
// cluster apart where the store holds several (a namespace's series are
// keyed by its name, which two clusters may share); nil where the passes
// did not run (a source without range queries).
func (a *Analysis) timeline() *fleet.Timeline {
	if a.Clusters == nil {
		return a.timelines[""]
	}
	parts := map[string]*fleet.Timeline{}
	for c, tl := range a.timelines {
		if tl == nil {
			return nil
		}
		parts[c] = tl
	}
	return fleet.MergeTimelines(parts)
}

// clustersOf are the clusters of either window: a cluster that reported
// last week only must still be last week's figures, or the change would
// read as a drop in its use.
func clustersOf(ctx context.Context, o Options, sch signals.Schema, cur, prev fleet.Window) ([]string, error) {
	read := o.CurrentClusters
	if read == nil {
		read = func(ctx context.Context, sch signals.Schema) ([]string, error) {
			return query.ClusterValues(ctx, o.Source, sch, cur, o.ClusterLabel)
		}
	}
	now, err := read(ctx, sch)
	if err != nil {
		return nil, err
	}
	before, err := query.ClusterValues(ctx, o.Source, sch, prev, o.ClusterLabel)
	if err != nil {
		return nil, fmt.Errorf("previous window: %w", err)
	}
	if len(before) == 0 {
		return now, nil
	}
	return slices.Compact(slices.Sorted(slices.Values(append(now, before...)))), nil
}
