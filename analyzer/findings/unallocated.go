package findings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// heldNowWithin is how close to its node's last sample (the window's last
// step, unless the node's data stopped before it) an allocation must have
// been seen to hold its GPU now: the engine's lookback. Without staleness markers (a backfill) a deleted pod's series
// is seen for that long after its last sample anyway, so a pod gone within
// it cannot be told from one still there; with the allowance both kinds
// of data give the same answer.
const heldNowWithin = 5 * time.Minute

// maxNamedWorkloads is how many workloads an unallocated-capacity finding
// names before "and K more".
const maxNamedWorkloads = 5

// unallocatedCapacity flags g when it sat unallocated for enough of the
// time it reported to be let go, with what the autoscaler can do about it:
// remove the node when nothing holds any of its GPUs now, or, beside GPUs
// held now, nothing until the workloads holding them move.
func (d *detector) unallocatedCapacity(g fleet.GPU, base func(vocab.Kind, Severity) Finding) {
	if !d.unallocated(g) {
		return
	}
	subject := fmt.Sprintf("%s %s on %s", shortModel(g.Model), g.UUID, g.Node)
	free := d.freeHours(g)
	ratio := free / g.ReportedHours
	if use := UnnamedUseOf(g, d.cfg); use.InUse() && len(d.hamiTenants(g)) == 0 {
		// Used while no pod is seen on it: the data only fails to say by
		// whom. dcgm-exporter maps no pod to a GPU advertised under a
		// resource it does not read (the device plugin's renameByDefault,
		// nvidia.com/gpu.shared, without --nvidia-resource-names:
		// dcgm-exporter #151), and a process outside Kubernetes holds no
		// pod either. Scaling it down would take a GPU in use away.
		f := base(vocab.KindUnallocated, Info)
		f.Evidence["unallocated_hours"], f.Evidence["unallocated_ratio"] = g.UnallocatedHours, ratio
		f.Confidence = confidence(g.Coverage, 0.5)
		var how string
		if use.Load > 0 {
			f.Evidence["avg_utilization"], f.Evidence["min_utilization_while_unallocated"] = g.AvgUtilization, use.Load
			how = fmt.Sprintf("averaged %s load (at least %s while no pod was seen)", pct(g.AvgUtilization), pct(use.Load))
		}
		if use.MemoryBytes > 0 {
			f.Evidence["device_memory_used_p99_bytes"] = use.MemoryBytes
			if how != "" {
				how += " and "
			}
			how += fmt.Sprintf("held %s of device memory at its p99 with no pod on it in the whole window", gib(use.MemoryBytes))
		}
		f.Summary = fmt.Sprintf("%s showed no pod for %s (%s of the time it reported) yet %s: "+
			"it is in use, not free capacity, and who uses it is not in the data (an exporter that maps no pod to the GPU's resource, "+
			"e.g. dcgm-exporter without --nvidia-resource-names for a renamed time-slicing resource, or a process outside Kubernetes)",
			subject, hoursOf(g.UnallocatedHours), pct(ratio), how)
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
		return
	}
	f := base(vocab.KindUnallocated, Warning)
	f.Evidence["unallocated_hours"], f.Evidence["unallocated_ratio"] = free, ratio
	f.Summary = fmt.Sprintf("%s sat unallocated for %s (%s of the time it reported)", subject, hoursOf(free), pct(ratio))
	use := d.nodeUse(g.Node)
	if use.unseen > 0 || len(use.clusterPods) > 0 {
		// The data misses tenants on this node: GPUs busy with no pod
		// seen, or pods the cluster lists holding GPUs here that no
		// series names (dcgm-exporter without --kubernetes-enable-dra
		// maps no pod to a GPU allocated through a ResourceClaim, nor,
		// without --nvidia-resource-names, to a renamed shared one). This
		// GPU may be one of theirs, and the node is in use either way:
		// neither the GPU nor the node is known to be free.
		f.Severity, f.Confidence = Info, confidence(g.Coverage, 0.5)
		var why []string
		if use.unseen > 0 {
			f.Evidence["node_gpus_busy_without_pod"] = float64(use.unseen)
			why = append(why, fmt.Sprintf("%d GPU(s) of %s are busy with no pod seen on them (load or memory)", use.unseen, g.Node))
		}
		if len(use.clusterPods) > 0 {
			f.Evidence["cluster_gpu_pods_not_in_data"] = float64(len(use.clusterPods))
			why = append(why, fmt.Sprintf("the cluster lists pods holding GPUs on %s that the data does not show (%s)", g.Node, strings.Join(use.clusterPods, ", ")))
		}
		f.Summary += ", but " + strings.Join(why, ", and ") + ": the exporter does not map every tenant here, so whether this GPU is free is not known " +
			"(dcgm-exporter needs --kubernetes-enable-dra for GPUs allocated through ResourceClaims, and --nvidia-resource-names for renamed shared resources)"
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
		return
	}
	switch {
	case use.held > 0:
		// The autoscaler removes empty nodes only: a free GPU beside
		// held ones saves nothing until its node empties.
		f.Evidence["node_gpus_held"] = float64(use.held)
		how := "move the node's pods so that a node empties"
		if len(use.workloads) > 0 {
			how = "move " + use.workloads + " so that a node empties"
		}
		f.Summary += fmt.Sprintf(", but %d GPU(s) of %s are held now, so the autoscaler cannot remove the node: %s ('gpulens plan' packs the pool on fewer nodes)", use.held, g.Node, how)
		f.Recommendation = &recommend.Recommendation{Action: recommend.ActionConsolidate, CurrentShare: ratio, RecommendedShare: ratio,
			Summary: how + "; 'gpulens plan' gives the layout"}
	case use.stopped > fleet.StaleAfter:
		// The node's data stops before the window's end: what holds its
		// GPUs now is not in the data, and absent samples are not an
		// empty node. It may be gone already, or its exporter (or
		// Prometheus) down; either way scaling it down is not advised.
		f.Severity, f.Confidence = Info, confidence(g.Coverage, 0.5)
		f.Evidence["node_data_stopped_seconds_before_end"] = use.stopped.Seconds()
		f.Summary += fmt.Sprintf(", and no GPU of %s was held at its last sample, but its data stops %s before the window's end (last seen %s): "+
			"whether the node is empty now cannot be judged, so no scale-down is advised (is its exporter scraped, is Prometheus up?)",
			g.Node, use.stopped, d.res.Window.LastStep().Add(-use.stopped).UTC().Format(time.RFC3339))
	case use.busy:
		// Held for most of the window by pods gone by its end: the node
		// is empty now, and there is nothing to move.
		f.Summary += ", and no GPU of " + g.Node + " is held now (its pods ended within the window): let the node pool scale the node down"
		f.Recommendation = &recommend.Recommendation{Action: recommend.ActionScaleDown, CurrentShare: ratio,
			Summary: "let the node pool scale down"}
	default:
		f.Summary += ", as did every GPU of " + g.Node + ": let the node pool scale the node down"
		f.Recommendation = &recommend.Recommendation{Action: recommend.ActionScaleDown, CurrentShare: ratio,
			Summary: "let the node pool scale down"}
	}
	d.cost(&f, g.Model, 1, f.Recommendation)
	d.add(f)
}

// unallocated says g sat unallocated for enough of the time it reported
// to be let go: held by no allocation and no HAMi tenant (freeHours).
func (d *detector) unallocated(g fleet.GPU) bool {
	return g.ReportedHours > 0 && d.freeHours(g)/g.ReportedHours >= d.cfg.Unallocated.MinRatio
}

// nodeUse is what holds a node's GPUs at the end of the window.
type nodeUse struct {
	// held is how many of its GPUs are held now.
	held int
	// workloads names the workloads that hold them, "namespace/name
	// (Kind, N GPUs)", sorted, at most maxNamedWorkloads and "and K
	// more".
	workloads string
	// busy says one of its GPUs was held for most of the window (is not
	// unallocated enough to be let go), whether or not it is held now.
	busy bool
	// unseen is how many of its GPUs are in use while no pod is seen on
	// them (UnnamedUseOf).
	unseen int
	// stopped is how long before the window's last step the node's
	// data was last seen (fleet.Result.NodesSeen): past
	// fleet.StaleAfter its GPUs are judged at its last sample, and it is
	// not known to be empty now.
	stopped time.Duration
	// clusterPods are the pods the cluster lists on the node, running
	// and holding a device of their own (a GPU ResourceClaim, or a
	// request on a node that does not share its GPUs), that no allocation
	// of the data names: "namespace/pod", sorted, at most
	// maxNamedWorkloads and "K more".
	clusterPods []string
}

// holding is what one workload holds on one node now: the physical GPUs
// it holds whole, and those it holds a share of (time-slicing, MPS, a
// MIG slice).
type holding struct {
	whole, shared map[fleet.GPUKey]bool
}

// nodeUse is node's use, worked out for every node on the first call: one
// pass over the GPUs and one over the allocations, whatever the number of
// unallocated GPUs asking. Only the allocations seen at the node's last
// sample (heldNowWithin) hold a GPU now: a rollout's old pods and
// finished Jobs are gone and never named. That sample is the window's
// end unless the node's data stopped before it (an exporter or a
// Prometheus down, a store read after its last sample): then the pods
// seen last are the ones that held its GPUs, not none.
func (d *detector) nodeUse(node string) nodeUse {
	if d.nodes == nil {
		d.nodes = map[string]nodeUse{}
		seen := d.res.NodesSeen()
		for _, g := range d.res.GPUs {
			u := d.nodes[g.Node]
			u.stopped = max(u.stopped, seen[fleet.NodeRef{Cluster: g.Cluster, Node: g.Node}])
			if !d.unallocated(g) {
				u.busy = true
			} else if UnnamedUseOf(g, d.cfg).InUse() && len(d.hamiTenants(g)) == 0 {
				u.unseen++
			}
			d.nodes[g.Node] = u
		}
		d.clusterPodsNotInData()
		held := map[string]map[fleet.GPUKey]bool{}
		holders := map[string]map[workload.Ref]*holding{}
		for _, a := range d.res.Allocations {
			if a.SinceLastSeen-seen[fleet.NodeRef{Cluster: a.Cluster, Node: a.Node}] > heldNowWithin {
				continue
			}
			k := fleet.GPUKey{Cluster: a.Cluster, Node: a.Node, UUID: a.UUID}
			if held[a.Node] == nil {
				held[a.Node], holders[a.Node] = map[fleet.GPUKey]bool{}, map[workload.Ref]*holding{}
			}
			held[a.Node][k] = true
			w, _ := d.podOwner(a)
			w.Container = ""
			h := holders[a.Node][w]
			if h == nil {
				h = &holding{whole: map[fleet.GPUKey]bool{}, shared: map[fleet.GPUKey]bool{}}
				holders[a.Node][w] = h
			}
			if sharedAllocation(a) {
				h.shared[k] = true
			} else {
				h.whole[k] = true
			}
		}
		d.hamiHeldNow(held, holders)
		for n, gpus := range held {
			u := d.nodes[n]
			u.held = len(gpus)
			u.workloads = namedHolders(holders[n])
			d.nodes[n] = u
		}
	}
	return d.nodes[node]
}

// sharedAllocation says a holds a share of its GPU, not the whole of it.
func sharedAllocation(a fleet.Allocation) bool {
	return (a.Sharing != "" && a.Sharing != vocab.SharingNone) || (a.Share > 0 && a.Share < 1)
}

// namedHolders names the workloads that hold a node's GPUs now, each with
// the number of physical GPUs it holds there: the GPUs to free for the
// node to empty. A tenant of a shared GPU counts the GPU it sits on, said
// to be shared, as its co-tenants count it too: "inference/chat
// (Deployment, 1 shared GPU)".
func namedHolders(holders map[workload.Ref]*holding) string {
	refs := slices.SortedFunc(maps.Keys(holders), func(x, y workload.Ref) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Kind, y.Kind))
	})
	var names []string
	for _, w := range refs {
		h := holders[w]
		for k := range h.whole {
			delete(h.shared, k)
		}
		var counts []string
		if n := len(h.whole); n > 0 {
			counts = append(counts, gpuCount(n, ""))
		}
		if n := len(h.shared); n > 0 {
			counts = append(counts, gpuCount(n, "shared "))
		}
		names = append(names, fmt.Sprintf("%s/%s (%s, %s)", w.Namespace, w.Name, w.Kind, strings.Join(counts, " and ")))
	}
	if len(names) > maxNamedWorkloads {
		return strings.Join(names[:maxNamedWorkloads], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamedWorkloads)
	}
	return strings.Join(names, ", ")
}

// gpuCount is "1 GPU", "3 GPUs", "1 shared GPU".
func gpuCount(n int, adjective string) string {
	if n == 1 {
		return "1 " + adjective + "GPU"
	}
	return fmt.Sprintf("%d %sGPUs", n, adjective)
}

// clusterPodsNotInData records, per node, the running pods the cluster
// lists there holding GPUs that no allocation of the data names.
func (d *detector) clusterPodsNotInData() {
	if !d.haveInventory() {
		return
	}
	seen := map[inventory.PodKey]bool{}
	for _, a := range d.res.Allocations {
		seen[inventory.PodKey{Namespace: a.Namespace, Name: a.Pod}] = true
	}
	byNode := map[string][]string{}
	for k, p := range d.inv.Pods {
		if p.Phase != "Running" || p.Node == "" || seen[k] {
			continue
		}
		// A time-sliced or MPS node's co-tenants are invisible on the
		// GPUs the data does show held (one pod per device), so only a
		// pod that holds a device of its own counts: a claim, or a
		// request on a node that does not share its GPUs.
		_, sharedNode := d.inv.SharedGPUs(p.Node)
		if d.inv.GPUClaimOf(k.Namespace, []string{k.Name}) == nil && (sharedNode || !requestsGPU(p)) {
			continue
		}
		byNode[p.Node] = append(byNode[p.Node], k.Namespace+"/"+k.Name)
	}
	for n, pods := range byNode {
		slices.Sort(pods)
		if len(pods) > maxNamedWorkloads {
			pods = append(pods[:maxNamedWorkloads], fmt.Sprintf("%d more", len(pods)-maxNamedWorkloads))
		}
		u := d.nodes[n]
		u.clusterPods = pods
		d.nodes[n] = u
	}
}
