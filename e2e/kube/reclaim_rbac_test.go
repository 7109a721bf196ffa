package kube

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/internal/leaderlease"
)

// reclaimChartPath is the chart rendered with gpulens reclaim enabled in
// reclaimEnabledNS alone, as release "reclaimrbac" in its own namespace
// (testdata/reclaim/values.yaml; `make manifests` renders it and
// tools/chart fails when it is stale).
const (
	reclaimChartPath = "testdata/reclaim/chart.yaml"
	reclaimEnabledNS = "reclaimrbac-on"
)

// reclaimIdentity applies the reclaim render's ServiceAccounts and RBAC
// exactly as rendered and returns the analyzer's account and the Lease
// name its reclaim container campaigns for.
func reclaimIdentity(t *testing.T, a *applier, c kubernetes.Interface) (sa *corev1.ServiceAccount, lease string) {
	t.Helper()
	for _, m := range loadManifestsFrom(t, reclaimChartPath) {
		switch o := m.typed.(type) {
		case *corev1.ServiceAccount:
			if o.Labels["app.kubernetes.io/component"] == "analyzer" {
				sa = o
			}
		case *appsv1.Deployment:
			for _, ctr := range o.Spec.Template.Spec.Containers {
				for _, arg := range ctr.Args {
					if v, ok := strings.CutPrefix(arg, "--leader-election.name="); ok && ctr.Name == "reclaim" {
						lease = v
					}
				}
			}
			continue
		case *rbacv1.Role, *rbacv1.RoleBinding, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
		default:
			continue
		}
		if ns := m.raw.GetNamespace(); ns != "" {
			ensureNamespace(t, c, ns, nil)
		}
		if _, err := a.apply(t, m.raw); err != nil {
			t.Fatalf("apply %s: %v", m, err)
		}
	}
	if sa == nil || lease == "" {
		t.Fatalf("%s: no analyzer ServiceAccount (%v) or reclaim container's --leader-election.name (%q)", reclaimChartPath, sa, lease)
	}
	return sa, lease
}

// reclaimWorkloads creates one of each kind reclaim may act on, running,
// as their owners would have.
func reclaimWorkloads(t *testing.T, c kubernetes.Interface, ns, name string) {
	t.Helper()
	ctx := t.Context()
	labels := map[string]string{"app": name}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	one := int32(1)
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: sel, Template: podTemplate(labels, corev1.RestartPolicyAlways)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &one, Selector: sel, Template: podTemplate(labels, corev1.RestartPolicyAlways)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// patchScale merge-patches a workload's scale subresource, as
// analyzer/reclaim's actuator does (a Scale, not the workload, comes back).
func patchScale(ctx context.Context, c kubernetes.Interface, resource, ns, name string, replicas int32) (*autoscalingv1.Scale, error) {
	var s autoscalingv1.Scale
	body := []byte(`{"spec":{"replicas":` + strconv.Itoa(int(replicas)) + `}}`)
	err := c.AppsV1().RESTClient().Patch(types.MergePatchType).Namespace(ns).Resource(resource).Name(name).
		SubResource("scale").Body(body).Do(ctx).Into(&s)
	return &s, err
}

func allowed(t *testing.T, who, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s may not %s: %v", who, what, err)
	}
}

// TestReclaimRBAC makes gpulens reclaim's requests as the chart's analyzer
// ServiceAccount, with the chart's RBAC for reclaim enabled in one
// namespace, against the real API server: real calls, so that RBAC and not
// a review of it decides. In the enabled namespace it reads the workloads,
// scales a Deployment and a StatefulSet to zero through the scale
// subresource, suspends a Job and a CronJob, writes its annotations and
// creates an Event; it holds, renews and releases its Lease. Everything
// else is refused: the same in another namespace, deleting or creating
// workloads, a replicas update instead of a patch, Secrets, other Leases.
func TestReclaimRBAC(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	sa, lease := reclaimIdentity(t, newApplier(t, admin), ac)
	on := reclaimEnabledNS
	ensureNamespace(t, ac, on, nil)
	off := testNamespace(t, ac, "reclaimrbac-off", nil)
	name := "nb-" + suffix(t)
	reclaimWorkloads(t, ac, on, name)
	reclaimWorkloads(t, ac, off, name)
	ctx := t.Context()
	if _, err := ac.CoreV1().Secrets(on).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	who := "reclaim (" + sa.Namespace + "/" + sa.Name + ")"
	c := clientFor(t, asServiceAccount(admin, sa.Namespace, sa.Name))

	// Reads of what it may act on.
	ds, err := c.AppsV1().Deployments(on).List(ctx, metav1.ListOptions{})
	allowed(t, who, "list deployments in "+on, err)
	if err == nil && len(ds.Items) == 0 {
		t.Errorf("%s lists no deployments in %s", who, on)
	}
	_, err = c.AppsV1().StatefulSets(on).Get(ctx, name, metav1.GetOptions{})
	allowed(t, who, "get statefulsets in "+on, err)
	_, err = c.BatchV1().CronJobs(on).List(ctx, metav1.ListOptions{})
	allowed(t, who, "list cronjobs in "+on, err)
	_, err = c.BatchV1().Jobs(on).Get(ctx, name, metav1.GetOptions{})
	allowed(t, who, "get jobs in "+on, err)

	// Its actions, each checked on the object.
	for _, res := range []string{"deployments", "statefulsets"} {
		s, err := patchScale(ctx, c, res, on, name, 0)
		allowed(t, who, "patch "+res+"/scale in "+on, err)
		if err == nil && s.Spec.Replicas != 0 {
			t.Errorf("%s/scale after the patch: %d replicas, want 0", res, s.Spec.Replicas)
		}
	}
	if d, err := ac.AppsV1().Deployments(on).Get(ctx, name, metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 0 {
		t.Errorf("the Deployment was not scaled to 0: %v", err)
	}
	record := []byte(`{"metadata":{"annotations":{"gpulens.io/reclaimed-replicas":"1"}}}`)
	_, err = c.AppsV1().Deployments(on).Patch(ctx, name, types.MergePatchType, record, metav1.PatchOptions{})
	allowed(t, who, "annotate deployments in "+on, err)
	_, err = c.AppsV1().StatefulSets(on).Patch(ctx, name, types.MergePatchType, record, metav1.PatchOptions{})
	allowed(t, who, "annotate statefulsets in "+on, err)
	suspend := []byte(`{"spec":{"suspend":true}}`)
	j, err := c.BatchV1().Jobs(on).Patch(ctx, name, types.MergePatchType, suspend, metav1.PatchOptions{})
	allowed(t, who, "suspend jobs in "+on, err)
	if err == nil && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
		t.Error("the Job is not suspended")
	}
	cj, err := c.BatchV1().CronJobs(on).Patch(ctx, name, types.MergePatchType, suspend, metav1.PatchOptions{})
	allowed(t, who, "suspend cronjobs in "+on, err)
	if err == nil && (cj.Spec.Suspend == nil || !*cj.Spec.Suspend) {
		t.Error("the CronJob is not suspended")
	}
	_, err = c.EventsV1().Events(on).Create(ctx, reclaimEvent(on, name), metav1.CreateOptions{})
	allowed(t, who, "create events.k8s.io Events in "+on, err)

	// Nowhere else, nothing more.
	_, err = patchScale(ctx, c, "deployments", off, name, 0)
	forbidden(t, who, "patch deployments/scale in "+off, err)
	_, err = patchScale(ctx, c, "statefulsets", off, name, 0)
	forbidden(t, who, "patch statefulsets/scale in "+off, err)
	_, err = c.AppsV1().Deployments(off).Get(ctx, name, metav1.GetOptions{})
	forbidden(t, who, "get deployments in "+off, err)
	_, err = c.BatchV1().Jobs(off).Patch(ctx, name, types.MergePatchType, suspend, metav1.PatchOptions{})
	forbidden(t, who, "suspend jobs in "+off, err)
	_, err = c.EventsV1().Events(off).Create(ctx, reclaimEvent(off, name), metav1.CreateOptions{})
	forbidden(t, who, "create events in "+off, err)
	err = c.AppsV1().Deployments(on).Delete(ctx, name, metav1.DeleteOptions{})
	forbidden(t, who, "delete deployments", err)
	err = c.BatchV1().Jobs(on).Delete(ctx, name, metav1.DeleteOptions{})
	forbidden(t, who, "delete jobs", err)
	err = c.CoreV1().Pods(on).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	forbidden(t, who, "delete pods", err)
	_, err = c.AppsV1().Deployments(on).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "intruder"}}, metav1.CreateOptions{})
	forbidden(t, who, "create deployments", err)
	_, err = c.AppsV1().Deployments(on).UpdateScale(ctx, name, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: on},
		Spec: autoscalingv1.ScaleSpec{Replicas: 5}}, metav1.UpdateOptions{})
	forbidden(t, who, "update deployments/scale (it patches)", err)
	_, err = c.CoreV1().Secrets(on).Patch(ctx, name, types.MergePatchType, record, metav1.PatchOptions{})
	forbidden(t, who, "patch secrets", err)
	_, err = c.CoreV1().Secrets(on).Get(ctx, name, metav1.GetOptions{})
	forbidden(t, who, "get secrets", err)
	_, err = c.CoreV1().ConfigMaps(on).Patch(ctx, name, types.MergePatchType, record, metav1.PatchOptions{})
	forbidden(t, who, "patch configmaps", err)

	checkReclaimLease(t, ac, c, sa, lease, on)
}

func reclaimEvent(ns, name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{GenerateName: "reclaimrbac-", Namespace: ns},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "gpulens.io/reclaim", ReportingInstance: "reclaimrbac-test",
		Action: "Reclaim", Reason: "GPUReclaimPending", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
		Note:      "idle for 24h; scaled to 0 in 4h unless it is used",
	}
}

// checkReclaimLease: leader election as the ServiceAccount creates its
// Lease, renews it and releases it (client-go's LeaseLock: get, create,
// update), and the account may read or write no other Lease.
func checkReclaimLease(t *testing.T, ac, c kubernetes.Interface, sa *corev1.ServiceAccount, lease, on string) {
	t.Helper()
	who := "reclaim (" + sa.Namespace + "/" + sa.Name + ")"
	ctx := t.Context()
	// Created by this run, not left by an earlier one on this server.
	if err := ac.CoordinationV1().Leases(sa.Namespace).Delete(ctx, lease, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	var acting, lost atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- leaderlease.Run(runCtx, leaderlease.Config{
			Client: c, Namespace: sa.Namespace, Name: lease, Identity: "reclaimrbac-pod",
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond,
		}, func(ctx context.Context) {
			acting.Store(true)
			<-ctx.Done()
			if runCtx.Err() == nil {
				lost.Store(true)
			}
		})
	}()
	eventually(t, who+" to lead its Lease", acting.Load)
	// Past a LeaseDuration: it renewed (updates), or it would have lost it.
	time.Sleep(4 * time.Second)
	l, err := ac.CoordinationV1().Leases(sa.Namespace).Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lost.Load() || l.Spec.RenewTime == nil || l.Spec.AcquireTime == nil || !l.Spec.RenewTime.After(l.Spec.AcquireTime.Time) {
		t.Errorf("%s did not renew its Lease (lost %v, %+v)", who, lost.Load(), l.Spec)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("leaderlease.Run as %s: %v", who, err)
	}
	if h := holder(t, ac, sa.Namespace, lease); h != "" {
		t.Errorf("%s did not release its Lease: %q holds it", who, h)
	}

	other := lease + "-other"
	if _, err := ac.CoordinationV1().Leases(sa.Namespace).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_, err = c.CoordinationV1().Leases(sa.Namespace).Get(ctx, other, metav1.GetOptions{})
	forbidden(t, who, "get another Lease", err)
	_, err = c.CoordinationV1().Leases(sa.Namespace).Patch(ctx, other, types.MergePatchType, []byte(`{"spec":{"holderIdentity":"x"}}`), metav1.PatchOptions{})
	forbidden(t, who, "patch another Lease", err)
	err = c.CoordinationV1().Leases(sa.Namespace).Delete(ctx, lease, metav1.DeleteOptions{})
	forbidden(t, who, "delete its Lease", err)
	_, err = c.CoordinationV1().Leases(on).Get(ctx, lease, metav1.GetOptions{})
	forbidden(t, who, "get its Lease's name in "+on, err)
}
