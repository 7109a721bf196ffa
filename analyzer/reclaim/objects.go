package reclaim

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// OptedIn lists the namespaces labelled NamespaceLabel=NamespaceEnabled:
// the only ones whose workloads are read, let alone touched.
func OptedIn(ctx context.Context, c kubernetes.Interface) (map[string]bool, error) {
	l, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: NamespaceLabel + "=" + NamespaceEnabled})
	if err != nil {
		return nil, fmt.Errorf("listing the opted-in namespaces: %w", err)
	}
	out := map[string]bool{}
	for _, ns := range l.Items {
		out[ns.Name] = true
	}
	return out, nil
}

func object(kind string, m metav1.ObjectMeta) Object {
	return Object{Ref: Ref{m.Namespace, kind, m.Name}, UID: string(m.UID), ResourceVersion: m.ResourceVersion,
		Created: m.CreationTimestamp.Time, Annotations: m.Annotations}
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1 // the API's default
	}
	return *r
}

func deployment(d *appsv1.Deployment) Object {
	o := object(KindDeployment, d.ObjectMeta)
	o.Replicas = replicas(d.Spec.Replicas)
	return o
}

func statefulSet(s *appsv1.StatefulSet) Object {
	o := object(KindStatefulSet, s.ObjectMeta)
	o.Replicas = replicas(s.Spec.Replicas)
	return o
}

func job(j *batchv1.Job) Object {
	o := object(KindJob, j.ObjectMeta)
	o.Suspended = j.Spec.Suspend != nil && *j.Spec.Suspend
	return o
}

func cronJob(cj *batchv1.CronJob) Object {
	o := object(KindCronJob, cj.ObjectMeta)
	o.Suspended = cj.Spec.Suspend != nil && *cj.Spec.Suspend
	for _, a := range cj.Status.Active {
		o.ActiveJobs = append(o.ActiveJobs, a.Name)
	}
	return o
}

// Read reads one workload.
func Read(ctx context.Context, c kubernetes.Interface, r Ref) (Object, error) {
	var o Object
	switch r.Kind {
	case KindDeployment:
		d, err := c.AppsV1().Deployments(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			return o, err
		}
		o = deployment(d)
	case KindStatefulSet:
		s, err := c.AppsV1().StatefulSets(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			return o, err
		}
		o = statefulSet(s)
	case KindJob:
		j, err := c.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			return o, err
		}
		o = job(j)
	case KindCronJob:
		cj, err := c.BatchV1().CronJobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			return o, err
		}
		o = cronJob(cj)
	default:
		return o, fmt.Errorf("%s: the reclaimer does not act on a %s", r, r.Kind)
	}
	return o, nil
}

// List reads the workloads of one namespace the reclaimer acts on, with
// the nodes their pods run on. A Job a CronJob owns is the CronJob's:
// the analysis names its owner, and reclaiming the CronJob suspends it.
func List(ctx context.Context, c kubernetes.Interface, ns string) ([]Object, error) {
	var out []Object
	byUID := map[string]int{}
	add := func(o Object) { byUID[o.UID] = len(out); out = append(out, o) }
	ds, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range ds.Items {
		add(deployment(&ds.Items[i]))
	}
	ss, err := c.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range ss.Items {
		add(statefulSet(&ss.Items[i]))
	}
	cjs, err := c.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range cjs.Items {
		add(cronJob(&cjs.Items[i]))
	}
	js, err := c.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	// owner maps a Job's or ReplicaSet's UID to its top owner's.
	owner := map[string]string{}
	for i := range js.Items {
		j := &js.Items[i]
		if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == KindCronJob {
			owner[string(j.UID)] = string(ref.UID)
			continue
		}
		add(job(j))
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, rs := range rss.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil {
			owner[string(rs.UID)] = string(ref.UID)
		}
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		uid := string(ref.UID)
		if top, ok := owner[uid]; ok {
			uid = top
		}
		i, ok := byUID[uid]
		if !ok {
			continue
		}
		out[i].Pods = append(out[i].Pods, p.Name)
		if !slices.Contains(out[i].Nodes, p.Spec.NodeName) {
			out[i].Nodes = append(out[i].Nodes, p.Spec.NodeName)
		}
	}
	return out, nil
}
