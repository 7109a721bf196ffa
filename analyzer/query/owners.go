package query

import (
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"

	"github.com/prometheus/common/model"
)

// ownerStep is the resolution at which owner series are read: their
// values never change, so the step only decides how short-lived a pod may
// be and still be seen, and a step equal to the engine's 5m lookback sees
// every pod that was scraped once.
const ownerStep = 5 * time.Minute

// ownerQueries read kube-state-metrics' owner references when the store
// has them: the only record of the owners of pods deleted before the
// analysis ran. kube_pod_owner is restricted to pods that held a GPU, so
// the answer does not grow with the cluster's CPU pods; ReplicaSets and
// Jobs are few. Absent series give empty answers, never errors. Without
// join, the pod owners are not restricted by a scan of the allocations in
// the engine: the passes know the GPU pods (passState.gpuPods) and keep
// only theirs.
func (a *analysis) ownerQueries(sch signals.Schema, join bool) []namedQuery {
	w := signals.Window(a.w.SubqueryRange(), promDuration(max(ownerStep, a.w.Step)))
	pods := signals.PodOwners(w)
	if join {
		pods = signals.OfPods(pods, a.over(signals.CountOverTime, presence([]string{signals.LabelNamespace, signals.LabelPod}, allocationPresence(sch))))
	}
	return []namedQuery{
		{name: "pod owners", expr: pods, apply: a.ownerApply(func(r fleet.PodRef, o fleet.Owner) { a.podOwners[r] = o }, "pod")},
		{name: "replicaset owners", expr: signals.ReplicaSetOwners(w),
			apply: a.ownerApply(func(r fleet.PodRef, o fleet.Owner) { a.setOwners[r] = o }, "replicaset")},
		{name: "job owners", expr: signals.JobOwners(w),
			apply: a.ownerApply(func(r fleet.PodRef, o fleet.Owner) { a.jobOwners[r] = o }, "job_name")},
	}
}

func (a *analysis) ownerApply(set func(fleet.PodRef, fleet.Owner), nameLabel string) func(*model.Sample) {
	return func(s *model.Sample) {
		set(fleet.PodRef{Namespace: string(s.Metric["namespace"]), Name: string(s.Metric[model.LabelName(nameLabel)])},
			fleet.Owner{Kind: string(s.Metric["owner_kind"]), Name: string(s.Metric["owner_name"])})
	}
}

// podOwnersResolved climbs each GPU pod's owner as the inventory does: a
// ReplicaSet to its Deployment, a Job to its CronJob.
func (a *analysis) podOwnersResolved() map[fleet.PodRef]fleet.Owner {
	if len(a.podOwners) == 0 {
		return nil
	}
	out := make(map[fleet.PodRef]fleet.Owner, len(a.podOwners))
	for pod, o := range a.podOwners {
		var parent fleet.Owner
		var ok bool
		switch o.Kind {
		case "ReplicaSet":
			parent, ok = a.setOwners[fleet.PodRef{Namespace: pod.Namespace, Name: o.Name}]
		case "Job":
			parent, ok = a.jobOwners[fleet.PodRef{Namespace: pod.Namespace, Name: o.Name}]
		}
		if ok && parent.Kind != "" {
			o = parent
		}
		out[pod] = o
	}
	return out
}
