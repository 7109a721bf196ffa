package demo

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// The demo's GPU quotas, as a cluster's kube-state-metrics and Kueue
// export them, so that `quota` has quotas to advise from the demo's store
// alone: a requests.nvidia.com/gpu ResourceQuota per team namespace, and
// one Kueue ClusterQueue that the training teams' LocalQueues admit
// through, with one flavor of no node labels (every GPU of the cluster).
// The figures are the demo's cluster configuration, each at or above what
// the namespace's pods request at once in the default scenario, some well
// above: a scenario's namespace not named here has no quota.
var demoQuotas = map[string]int{
	"team-nlp":           12,
	"team-vision":        8,
	"team-recsys":        16,
	"batch-etl":          4,
	"research-notebooks": 12,
}

const (
	demoResourceQuota = "gpu-quota"
	demoClusterQueue  = "training"
	demoCohort        = "gpu-pool"
	demoFlavor        = "default-flavor"
	demoNominal       = 20
	demoLocalQueue    = "training"
)

// demoQueueNamespaces have a LocalQueue pointing at the ClusterQueue.
var demoQueueNamespaces = []string{"team-nlp", "team-vision"}

// writeQuotas writes the quota series at every step of [start, end], each
// source as the target Prometheus would scrape it from. used counts the
// pods alive at the step that hold an nvidia.com/gpu of the device plugin:
// a MIG slice is a resource of its own, a renamed time-slicing replica
// nvidia.com/gpu.shared, and a DRA node's GPUs are claimed, not requested.
func writeQuotas(ctx context.Context, db fleet.Appendable, sc *sim.Scenario, start, end time.Time, step time.Duration, samples *atomic.Int64) error {
	ksm := fleet.NewTSDBSink(ctx, db, samples).WithTarget("kube-state-metrics", "kube-state-metrics:8080")
	kueue := fleet.NewTSDBSink(ctx, db, samples).WithTarget("kueue-controller-manager", "kueue-controller-manager-metrics-service:8443")
	gpu := string(vocab.ResourceGPU) // a label value
	lp := func(kv ...string) []*dto.LabelPair {
		out := make([]*dto.LabelPair, 0, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			out = append(out, &dto.LabelPair{Name: &kv[i], Value: &kv[i+1]})
		}
		return out
	}
	for ts := start; !ts.After(end); ts = ts.Add(step) {
		used := heldAt(sc, ts.Sub(start))
		for ns, hard := range demoQuotas {
			if !hasNamespace(sc, ns) {
				continue
			}
			for _, t := range []struct {
				typ string
				v   int
			}{{"hard", hard}, {"used", used[ns]}} {
				if err := ksm.Append(ts, signals.MetricResourceQuota, lp(signals.LabelNamespace, ns, signals.LabelResourceQuota, demoResourceQuota,
					signals.LabelQuotaResource, "requests."+gpu, signals.LabelQuotaType, t.typ), float64(t.v)); err != nil {
					return err
				}
			}
		}
		if !slices.ContainsFunc(demoQueueNamespaces, func(ns string) bool { return hasNamespace(sc, ns) }) {
			// No LocalQueue would point at the ClusterQueue.
			if err := errors.Join(ksm.EndStep(ts), kueue.EndStep(ts)); err != nil {
				return err
			}
			continue
		}
		cq := lp(signals.LabelCohort, demoCohort, signals.LabelClusterQueue, demoClusterQueue, signals.LabelFlavor, demoFlavor, signals.LabelQuotaResource, gpu)
		total := 0
		for _, ns := range demoQueueNamespaces {
			if !hasNamespace(sc, ns) {
				continue
			}
			total += used[ns]
			if err := kueue.Append(ts, signals.MetricKueueLocalQueueUsage, lp(signals.LabelFlavor, demoFlavor, signals.LabelLocalQueue, demoLocalQueue,
				signals.LabelNamespace, ns, signals.LabelQuotaResource, gpu), float64(used[ns])); err != nil {
				return err
			}
		}
		for _, m := range []struct {
			name string
			v    float64
		}{
			{signals.MetricKueueNominalQuota, demoNominal},
			// No borrowing limit is set: Kueue reports +Inf.
			{signals.MetricKueueBorrowingLimit, math.Inf(1)},
			{"kueue_cluster_queue_resource_usage", float64(total)},
		} {
			if err := kueue.Append(ts, m.name, cq, m.v); err != nil {
				return err
			}
		}
		if err := ksm.EndStep(ts); err != nil {
			return err
		}
		if err := kueue.EndStep(ts); err != nil {
			return err
		}
	}
	return errors.Join(ksm.Close(), kueue.Close())
}

// heldAt counts, per namespace, the pods alive at offset that hold a
// device plugin's nvidia.com/gpu.
func heldAt(sc *sim.Scenario, offset time.Duration) map[string]int {
	all := map[string]int{}
	for i := range sc.Nodes {
		n := &sc.Nodes[i]
		if n.DRA {
			continue
		}
		for _, p := range n.Pods {
			if offset < time.Duration(p.Start) || p.End != 0 && offset >= time.Duration(p.End) || !requestsGPU(n, p.GPU) {
				continue
			}
			all[p.Namespace]++
		}
	}
	return all
}

// requestsGPU says whether a pod on GPU gpu of n requests nvidia.com/gpu.
func requestsGPU(n *sim.Node, gpu int) bool {
	for _, s := range n.Sharing {
		if slices.Contains(s.GPUs, gpu) {
			return s.Mode != sim.ModeMIG && !(s.Mode == sim.ModeTimeSlicing && s.Rename)
		}
	}
	return true
}

func hasNamespace(sc *sim.Scenario, ns string) bool {
	for i := range sc.Nodes {
		if slices.ContainsFunc(sc.Nodes[i].Pods, func(p sim.Pod) bool { return p.Namespace == ns }) {
			return true
		}
	}
	return false
}
