package kube

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

type objectKey struct{ namespace, name string }

// ownerRef is the kind and name of an object's controller; zero when the
// object has none.
type ownerRef struct{ kind, name string }

// controllerOf prefers the controller reference, as the garbage collector
// and kubectl do, and falls back to the first owner for objects adopted
// without one.
func controllerOf(m *metav1.ObjectMeta) ownerRef {
	if c := metav1.GetControllerOfNoCopy(m); c != nil {
		return ownerRef{c.Kind, c.Name}
	}
	if len(m.OwnerReferences) > 0 {
		return ownerRef{m.OwnerReferences[0].Kind, m.OwnerReferences[0].Name}
	}
	return ownerRef{}
}

func readReplicaSets(ctx context.Context, r *reader) (func(), error) {
	idx := map[objectKey]ownerRef{}
	err := eachItem(ctx, r.c.AppsV1().ReplicaSets("").List, func(rs *appsv1.ReplicaSet) {
		idx[objectKey{rs.Namespace, rs.Name}] = controllerOf(&rs.ObjectMeta)
	})
	return func() { r.replicaSets = idx }, err
}

func readJobs(ctx context.Context, r *reader) (func(), error) {
	idx := map[objectKey]ownerRef{}
	err := eachItem(ctx, r.c.BatchV1().Jobs("").List, func(j *batchv1.Job) {
		idx[objectKey{j.Namespace, j.Name}] = controllerOf(&j.ObjectMeta)
	})
	return func() { r.jobs = idx }, err
}

// resolveOwner climbs from a pod's controller to the workload a person
// manages. Only ReplicaSets and Jobs are climbed: their owners
// (Deployment, CronJob, or operators such as Argo Rollouts) are what
// people name, whereas a StatefulSet's or DaemonSet's owner, if any, is
// an operator whose kind is already in the StatefulSet's name.
func (r *reader) resolveOwner(ns string, podLabels map[string]string, ref ownerRef) (ownerRef, bool) {
	switch ref.kind {
	case "ReplicaSet":
		if parent, ok := r.replicaSets[objectKey{ns, ref.name}]; ok {
			if parent.kind == "" {
				return ref, false
			}
			return parent, false
		}
		// The ReplicaSet list was denied, or the ReplicaSet is gone while
		// its pods terminate: a Deployment names its ReplicaSets
		// <deployment>-<pod-template-hash>.
		if h := podLabels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
			if d, ok := strings.CutSuffix(ref.name, "-"+h); ok && d != "" {
				return ownerRef{"Deployment", d}, true
			}
		}
	case "Job":
		if parent, ok := r.jobs[objectKey{ns, ref.name}]; ok {
			if parent.kind == "" {
				return ref, false
			}
			return parent, false
		}
		if cj, ok := inventory.CronJobOfJob(ref.name); ok {
			return ownerRef{"CronJob", cj}, true
		}
	}
	return ref, false
}
