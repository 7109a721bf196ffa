package inventory

import (
	"strings"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Workload returns the workload owning a pod. For a pod the inventory
// does not know (typically one that finished and was deleted before the
// metrics were analysed) it is inferred from the pod's name; WorkloadOf
// says whether it was.
func (inv *Inventory) Workload(namespace, pod string) workload.Ref {
	w, _ := inv.WorkloadOf(namespace, pod)
	return w
}

// WorkloadOf is Workload with the provenance of the answer: inferred is
// true when the workload was derived from names rather than read from
// owner references.
func (inv *Inventory) WorkloadOf(namespace, pod string) (w workload.Ref, inferred bool) {
	if inv != nil {
		if p, ok := inv.Pods[PodKey{namespace, pod}]; ok && p.WorkloadKind != "" {
			return workload.Ref{Kind: p.WorkloadKind, Namespace: namespace, Name: p.WorkloadName}, p.WorkloadInferred
		}
	}
	return InferWorkload(namespace, pod), true
}

// InferWorkload guesses a pod's workload from the names Kubernetes
// controllers generate:
//
//	<deployment>-<pod-template-hash>-<5 random>   Deployment
//	<cronjob>-<scheduled minute>-<5 random>       CronJob
//	<job>-<completion index>-<5 random>           Job (indexed)
//	<job>-<5 random>                              Job
//	<statefulset>-<ordinal>                       StatefulSet
//	anything else                                 Pod
//
// <name>-<5 random> is also what DaemonSets and bare generateName pods
// produce; Job is chosen because the pods that outlive their inventory
// entry are overwhelmingly finished Job pods.
//
// The rule is vocab.WorkloadOf's, the one the analysis evaluates in
// PromQL (signals.WithWorkload): a pod is named one workload everywhere.
func InferWorkload(namespace, pod string) workload.Ref {
	if pod == "" {
		return workload.Ref{Kind: "Pod", Namespace: namespace}
	}
	name, kind := vocab.WorkloadOf(pod)
	return workload.Ref{Kind: kind, Namespace: namespace, Name: name}
}

// CronJobOfJob returns the CronJob that names a Job <cronjob>-<minute>.
func CronJobOfJob(job string) (string, bool) {
	cj, minute, ok := cutLastSegment(job)
	if !ok || !isScheduledMinute(minute) {
		return "", false
	}
	return cj, true
}

// cutLastSegment splits "a-b-c" into "a-b" and "c"; ok is false when
// either part would be empty.
func cutLastSegment(s string) (before, last string, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// isScheduledMinute recognises the CronJob controller's job suffix, the
// scheduled time in minutes since the epoch: 8 digits from 1960 to 2160.
func isScheduledMinute(s string) bool { return len(s) >= 8 && isDigits(s) }

func isDigits(s string) bool { return s != "" && only(s, "0123456789") }

func only(s, alphabet string) bool {
	for _, r := range s {
		if !strings.ContainsRune(alphabet, r) {
			return false
		}
	}
	return true
}
