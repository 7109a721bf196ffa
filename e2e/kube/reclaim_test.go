package kube

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/reclaim"
	"github.com/gpulens/gpulens/internal/leaderlease"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/vocab"
)

// The reclaimer against a real kube-apiserver: its patches go through the
// server's validation, the scale subresource and resourceVersion
// preconditions, and its Events through events.k8s.io. The analysis is
// given (a fake Analyze): what is under test is what the reclaimer does
// to the cluster with it. The clock is injected: a grace period passes
// between two cycles without sleeping.

var podLabels = map[string]string{"app": "nb"}

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "jupyter"}}}}
}

func createDeployment(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32, ann map[string]string) *appsv1.Deployment {
	t.Helper()
	tpl := template()
	tpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d, err := c.AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(replicas), Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: tpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// idleFinding is the analysis's verdict on a workload: idle-allocation at
// avg utilisation avg, owner read from the API server, one GPU, all of
// the window covered, $2 an hour.
func idleFinding(ns, kind, name string, avg float64) findings.Finding {
	k := vocab.KindIdleAllocation
	if avg > 0.02 {
		k = vocab.KindUnderusedGPU
	}
	return findings.Finding{Kind: k, Namespace: ns, Workload: name, WorkloadKind: kind, WorkloadSource: findings.SourceAPI,
		Evidence: map[string]float64{"avg_utilization": avg, "p95_utilization": avg, "coverage": 1, "gpus": 1}, MonthlyCostUSD: 1460, CostKnown: true}
}

type fakeAnalysis struct {
	mu       sync.Mutex
	clock    time.Time
	findings []findings.Finding
	stale    map[string]bool
}

func (f *fakeAnalysis) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.clock }
func (f *fakeAnalysis) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = f.clock.Add(d)
}
func (f *fakeAnalysis) analyze(context.Context) reclaim.Analysis {
	f.mu.Lock()
	defer f.mu.Unlock()
	return reclaim.Analysis{End: f.clock, Window: 24 * time.Hour, Findings: f.findings, Stale: f.stale}
}

func events(t *testing.T, c kubernetes.Interface, ns, name string) []string {
	t.Helper()
	l, err := c.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Regarding.Name == name && e.ReportingController == reclaim.ControllerName {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

func hasEvent(t *testing.T, c kubernetes.Interface, ns, name, reason string) bool {
	t.Helper()
	for _, e := range events(t, c, ns, name) {
		if strings.HasPrefix(e, reason+": ") {
			return true
		}
	}
	return false
}

func gpulensAnnotations(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, "gpulens.io/") {
			out[k] = v
		}
	}
	return out
}

// cycle runs one cycle and returns its decisions on ns's workloads: the
// server is shared, and other tests' namespaces opted in too.
func cycle(t *testing.T, ctl *reclaim.Controller, ns string) []reclaim.Decision {
	t.Helper()
	ds, err := ctl.Cycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []reclaim.Decision
	for _, d := range ds {
		if d.Namespace == ns {
			out = append(out, d)
		}
	}
	return out
}

func TestReclaimActs(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ctx := t.Context()
	on := map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled}
	ns := testNamespace(t, c, "reclaim-on", on)
	other := testNamespace(t, c, "reclaim-off", nil)

	createDeployment(t, c, ns, "idle", 2, nil)
	optOut := createDeployment(t, c, ns, "optout", 1, map[string]string{reclaim.OptOutAnnotation: reclaim.OptOutDisabled})
	busy := createDeployment(t, c, ns, "busy", 1, nil)
	stale := createDeployment(t, c, ns, "stale", 1, nil)
	createDeployment(t, c, ns, "active", 1, nil)
	elsewhere := createDeployment(t, c, other, "idle", 1, nil)
	// The stale Deployment's pod runs on a node whose data stopped: found
	// through its ReplicaSet, as a real Deployment's pods are.
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "stale-5d8f",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "stale", UID: stale.UID, Controller: ptr(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: withRestart(template())}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stale-5d8f-x", Labels: podLabels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr(true)}}},
		Spec: corev1.PodSpec{NodeName: "reclaim-gpu-7", Containers: []corev1.Container{{Name: "c", Image: "jupyter"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts, err := c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr[int32](1), Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: withRestart(template())}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: batchv1.JobSpec{Template: template()}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template()}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 25 hours after they were made: older than the 24h idle window.
	t0 := time.Now().UTC().Truncate(time.Second).Add(25 * time.Hour)
	fa := &fakeAnalysis{clock: t0, stale: map[string]bool{"reclaim-gpu-7": true}, findings: []findings.Finding{
		idleFinding(ns, "Deployment", "idle", 0.001), idleFinding(ns, "Deployment", "optout", 0.001),
		idleFinding(ns, "Deployment", "busy", 0.4), idleFinding(ns, "Deployment", "stale", 0.001),
		idleFinding(ns, "Deployment", "active", 0.001), idleFinding(other, "Deployment", "idle", 0.001),
		idleFinding(ns, "StatefulSet", "db", 0.001), idleFinding(ns, "Job", "train", 0.001), idleFinding(ns, "CronJob", "nightly", 0.001),
	}}
	var notifier *notify.Notifier
	amURL := testenv.Env(t, "GPULENS_TEST_ALERTMANAGER_URL")
	notifier, err = notify.New(notify.Options{URLs: []string{amURL}})
	if err != nil {
		t.Fatal(err)
	}
	nctx, stopNotifier := context.WithCancel(context.Background())
	defer stopNotifier()
	go notifier.Run(nctx)
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Act: true, Now: fa.now, Notifier: notifier, Identity: "reclaim-test"})

	// Cycle 1: the idle ones are announced, with the time they will go.
	cycle(t, ctl, ns)
	due := t0.Add(4 * time.Hour).Format(time.RFC3339)
	for _, w := range []struct{ kind, name string }{{"Deployment", "idle"}, {"Deployment", "active"}, {"StatefulSet", "db"}, {"Job", "train"}, {"CronJob", "nightly"}} {
		o, err := reclaim.Read(ctx, c, reclaim.Ref{Namespace: ns, Kind: w.kind, Name: w.name})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Annotations[reclaim.PendingSinceAnnotation]; got != t0.Format(time.RFC3339) {
			t.Errorf("%s/%s: pending since %q, want %s", w.kind, w.name, got, t0.Format(time.RFC3339))
		}
		if ev := events(t, c, ns, w.name); len(ev) != 1 || !strings.HasPrefix(ev[0], "GPUReclaimPending: ") || !strings.Contains(ev[0], " at "+due+" unless") {
			t.Errorf("%s/%s: events %q, want one GPUReclaimPending due at %s", w.kind, w.name, ev, due)
		}
	}
	waitAlert(t, amURL, ns, "active", func(a *testenv.AMAlert) bool { return a != nil && a.Annotations["reclaim_at"] == due })

	// Cycle 2, an hour on: "active" was used; its reclaim is cancelled.
	fa.advance(time.Hour)
	fa.mu.Lock()
	fa.findings[4] = idleFinding(ns, "Deployment", "active", 0.35)
	fa.mu.Unlock()
	cycle(t, ctl, ns)
	got, _ := c.AppsV1().Deployments(ns).Get(ctx, "active", metav1.GetOptions{})
	if _, ok := got.Annotations[reclaim.PendingSinceAnnotation]; ok || *got.Spec.Replicas != 1 || !hasEvent(t, c, ns, "active", reclaim.ReasonCancelled) {
		t.Errorf("active: annotations %v, replicas %d, events %q: want the pending reclaim cancelled", got.Annotations, *got.Spec.Replicas, events(t, c, ns, "active"))
	}
	waitAlert(t, amURL, ns, "active", func(a *testenv.AMAlert) bool { return a == nil })

	// Cycle 3, at the end of the grace period: reclaimed.
	fa.advance(3 * time.Hour)
	cycle(t, ctl, ns)
	reclaimedAt := t0.Add(4 * time.Hour).Format(time.RFC3339)
	d, _ := c.AppsV1().Deployments(ns).Get(ctx, "idle", metav1.GetOptions{})
	if *d.Spec.Replicas != 0 || d.Annotations[reclaim.ReclaimedReplicasAnnotation] != "2" || d.Annotations[reclaim.ReclaimedAtAnnotation] != reclaimedAt ||
		d.Annotations[reclaim.PendingSinceAnnotation] != "" || !hasEvent(t, c, ns, "idle", reclaim.ReasonReclaimed) {
		t.Errorf("idle: replicas %d, annotations %v, events %q", *d.Spec.Replicas, gpulensAnnotations(d.Annotations), events(t, c, ns, "idle"))
	}
	var ev reclaim.Evidence
	if err := json.Unmarshal([]byte(d.Annotations[reclaim.EvidenceAnnotation]), &ev); err != nil || ev.GPUs != 1 || ev.HourlyUSD != 2 || ev.Window != "1d" {
		t.Errorf("evidence %s: %v", d.Annotations[reclaim.EvidenceAnnotation], err)
	}
	if s, _ := c.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{}); *s.Spec.Replicas != 0 || s.Annotations[reclaim.ReclaimedReplicasAnnotation] != "1" {
		t.Errorf("db: replicas %d, annotations %v", *s.Spec.Replicas, gpulensAnnotations(s.Annotations))
	}
	if j, _ := c.BatchV1().Jobs(ns).Get(ctx, "train", metav1.GetOptions{}); j.Spec.Suspend == nil || !*j.Spec.Suspend || j.Annotations[reclaim.ReclaimedAtAnnotation] != reclaimedAt {
		t.Errorf("train: suspend %v, annotations %v", j.Spec.Suspend, gpulensAnnotations(j.Annotations))
	}
	if cj, _ := c.BatchV1().CronJobs(ns).Get(ctx, "nightly", metav1.GetOptions{}); cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		t.Errorf("nightly: suspend %v", cj.Spec.Suspend)
	}
	_ = sts

	// Never touched: not one write since they were made.
	for _, w := range []*appsv1.Deployment{optOut, busy, stale, elsewhere} {
		now, err := c.AppsV1().Deployments(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != w.ResourceVersion || len(events(t, c, w.Namespace, w.Name)) > 0 {
			t.Errorf("%s/%s was written to (annotations %v) or has events %q", w.Namespace, w.Name, gpulensAnnotations(now.Annotations), events(t, c, w.Namespace, w.Name))
		}
	}

	// Undo restores the replicas, and the workload is not announced
	// again before it has been idle for a full window since.
	act := &reclaim.Actuator{Client: c, Identity: "reclaim-test", Now: fa.now}
	fa.advance(time.Hour)
	if _, err := act.Undo(ctx, reclaim.Ref{Namespace: ns, Kind: "Deployment", Name: "idle"}); err != nil {
		t.Fatal(err)
	}
	d, _ = c.AppsV1().Deployments(ns).Get(ctx, "idle", metav1.GetOptions{})
	if *d.Spec.Replicas != 2 || d.Annotations[reclaim.UndoneAtAnnotation] != t0.Add(5*time.Hour).Format(time.RFC3339) || !hasEvent(t, c, ns, "idle", reclaim.ReasonUndone) {
		t.Errorf("after undo: replicas %d, annotations %v", *d.Spec.Replicas, gpulensAnnotations(d.Annotations))
	}
	if _, err := act.Undo(ctx, reclaim.Ref{Namespace: ns, Kind: "Job", Name: "train"}); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.BatchV1().Jobs(ns).Get(ctx, "train", metav1.GetOptions{}); j.Spec.Suspend == nil || *j.Spec.Suspend {
		t.Errorf("train after undo: suspend %v", j.Spec.Suspend)
	}
	fa.advance(time.Hour)
	for _, dec := range cycle(t, ctl, ns) {
		if dec.Ref == (reclaim.Ref{Namespace: ns, Kind: "Deployment", Name: "idle"}) && dec.Action != reclaim.Skip {
			t.Errorf("idle after undo: %s (%s), want skip until idle a full window again", dec.Action, dec.Reason)
		}
	}
	if d, _ = c.AppsV1().Deployments(ns).Get(ctx, "idle", metav1.GetOptions{}); *d.Spec.Replicas != 2 || d.Annotations[reclaim.PendingSinceAnnotation] != "" {
		t.Errorf("idle an hour after undo: replicas %d, annotations %v", *d.Spec.Replicas, gpulensAnnotations(d.Annotations))
	}
}

// policy is the default, with room in the rate limit for every rerun of
// these tests on one server: the limit counts the reclaims of the last
// hour in every opted-in namespace, earlier runs' included (Decide's own
// test holds the limit).
func policy() reclaim.Policy {
	p := reclaim.DefaultPolicy()
	p.MaxActionsPerHour = 1 << 20
	return p
}

func withRestart(p corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return p
}

// waitAlert waits for Alertmanager's view of the pending-reclaim alert of
// ns/workload (nil: none unresolved) to satisfy ok.
func waitAlert(t *testing.T, url, ns, workload string, ok func(*testenv.AMAlert) bool) {
	t.Helper()
	var last *testenv.AMAlert
	for range 100 {
		alerts, err := testenv.ListAlerts(url)
		if err != nil {
			t.Fatal(err)
		}
		last = nil
		for i, a := range alerts {
			if a.Labels["alertname"] == reclaim.AlertPending && a.Labels["namespace"] == ns && a.Labels["workload"] == workload {
				last = &alerts[i]
			}
		}
		if ok(last) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("alert %s for %s/%s: got %+v", reclaim.AlertPending, ns, workload, last)
}

// TestReclaimDryRun: the default announces, and changes no workload,
// even past the grace period.
func TestReclaimDryRun(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ctx := t.Context()
	ns := testNamespace(t, c, "reclaim-dry", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	d := createDeployment(t, c, ns, "idle", 1, nil)
	fa := &fakeAnalysis{clock: time.Now().Add(25 * time.Hour), findings: []findings.Finding{idleFinding(ns, "Deployment", "idle", 0)}}
	m := reclaim.NewMetrics()
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Now: fa.now, Metrics: m})
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Announce {
		t.Fatalf("first cycle: %+v", ds)
	}
	fa.advance(4 * time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Reclaim {
		t.Fatalf("after the grace period: %+v", ds)
	}
	fa.advance(time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Skip {
		t.Fatalf("after a dry reclaim: %+v, want skip (as if reclaimed)", ds)
	}
	now, _ := c.AppsV1().Deployments(ns).Get(ctx, "idle", metav1.GetOptions{})
	if now.ResourceVersion != d.ResourceVersion {
		t.Errorf("dry run wrote to the Deployment: annotations %v, replicas %d", gpulensAnnotations(now.Annotations), *now.Spec.Replicas)
	}
	if ev := events(t, c, ns, "idle"); len(ev) != 1 || !strings.HasPrefix(ev[0], "GPUReclaimPending: dry run, nothing will be changed: ") {
		t.Errorf("events %q, want one dry-run announcement", ev)
	}
	var b strings.Builder
	_ = m.Write(&b)
	for _, want := range []string{`gpulens_reclaim_actions_total{action="reclaim",result="dry-run"} 1`, `gpulens_reclaim_actions_total{action="announce",result="dry-run"} 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, b.String())
		}
	}
}

// TestReclaimYoung: a workload younger than the idle window is left alone,
// however idle the analysis says it is.
func TestReclaimYoung(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ns := testNamespace(t, c, "reclaim-young", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	d := createDeployment(t, c, ns, "new", 1, nil)
	fa := &fakeAnalysis{clock: time.Now().Add(time.Hour), findings: []findings.Finding{idleFinding(ns, "Deployment", "new", 0)}}
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Act: true, Now: fa.now})
	ds := cycle(t, ctl, ns)
	if len(ds) != 1 || ds[0].Action != reclaim.Skip || !strings.HasPrefix(ds[0].Reason, "younger (") {
		t.Errorf("decisions %+v", ds)
	}
	if now, _ := c.AppsV1().Deployments(ns).Get(t.Context(), "new", metav1.GetOptions{}); now.ResourceVersion != d.ResourceVersion {
		t.Errorf("a young Deployment was written to: %v", gpulensAnnotations(now.Annotations))
	}
}

// TestReclaimConflict: a workload changed between the decision and the
// reclaim (its owner scaled it up) is left as its owner set it, with no
// record of a reclaim: every write carries the resourceVersion decided on.
func TestReclaimConflict(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ctx := t.Context()
	ns := testNamespace(t, c, "reclaim-conflict", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	createDeployment(t, c, ns, "nb", 1, nil)
	o, err := reclaim.Read(ctx, c, reclaim.Ref{Namespace: ns, Kind: "Deployment", Name: "nb"})
	if err != nil {
		t.Fatal(err)
	}
	scale, err := c.AppsV1().Deployments(ns).GetScale(ctx, "nb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if _, err := c.AppsV1().Deployments(ns).UpdateScale(ctx, "nb", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	act := &reclaim.Actuator{Client: c}
	err = act.Reclaim(ctx, reclaim.Decision{Object: o, Action: reclaim.Reclaim, Evidence: &reclaim.Evidence{GPUs: 1}})
	if err == nil || !apierrors.IsConflict(err) {
		t.Errorf("reclaim of a changed Deployment: %v, want a conflict", err)
	}
	d, _ := c.AppsV1().Deployments(ns).Get(ctx, "nb", metav1.GetOptions{})
	if *d.Spec.Replicas != 3 || len(gpulensAnnotations(d.Annotations)) > 0 {
		t.Errorf("replicas %d, annotations %v: want the owner's 3 and no record", *d.Spec.Replicas, gpulensAnnotations(d.Annotations))
	}
}

// TestReclaimScaledUpAgain: a reclaimed StatefulSet its owner scales up
// is recorded as running again, and not announced again until it has been
// idle for a full window since.
func TestReclaimScaledUpAgain(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ctx := t.Context()
	ns := testNamespace(t, c, "reclaim-again", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	if _, err := c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr[int32](1), Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: withRestart(template())}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second).Add(25 * time.Hour)
	fa := &fakeAnalysis{clock: t0, findings: []findings.Finding{idleFinding(ns, "StatefulSet", "db", 0)}}
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Act: true, Now: fa.now})
	cycle(t, ctl, ns)
	fa.advance(4 * time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Reclaim {
		t.Fatalf("decisions %+v, want the reclaim", ds)
	}
	scale, err := c.AppsV1().StatefulSets(ns).GetScale(ctx, "db", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 0 {
		t.Fatalf("scale %+v, %v", scale, err)
	}
	scale.Spec.Replicas = 1
	if _, err := c.AppsV1().StatefulSets(ns).UpdateScale(ctx, "db", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fa.advance(time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.MarkResumed {
		t.Fatalf("decisions %+v, want mark-resumed", ds)
	}
	s, _ := c.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if s.Annotations[reclaim.ResumedAtAnnotation] != t0.Add(5*time.Hour).Format(time.RFC3339) {
		t.Errorf("annotations %v, want resumed at %s", gpulensAnnotations(s.Annotations), t0.Add(5*time.Hour).Format(time.RFC3339))
	}
	fa.advance(23 * time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Skip || !strings.HasPrefix(ds[0].Reason, "running again since ") {
		t.Errorf("23h after: %+v, want skip", ds)
	}
	fa.advance(time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Announce {
		t.Errorf("a full window after: %+v, want announced again", ds)
	}
}

// TestReclaimCronJobActiveJobs: reclaiming a CronJob suspends it and the
// Job of it that holds the GPUs; undo resumes both.
func TestReclaimCronJobActiveJobs(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ctx := t.Context()
	ns := testNamespace(t, c, "reclaim-cron", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	cj, err := c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template()}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the CronJob controller would have done: a Job it owns, listed
	// as active.
	j, err := c.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29000000",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr(true)}}},
		Spec: batchv1.JobSpec{Template: template()}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cj.Status.Active = []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: j.Name, UID: j.UID}}
	if _, err := c.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second).Add(25 * time.Hour)
	fa := &fakeAnalysis{clock: t0, findings: []findings.Finding{idleFinding(ns, "CronJob", "nightly", 0)}}
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Act: true, Now: fa.now})
	// The Job a CronJob owns is judged as the CronJob, not on its own.
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Kind != "CronJob" || ds[0].Action != reclaim.Announce {
		t.Fatalf("decisions %+v, want the CronJob alone announced", ds)
	}
	fa.advance(4 * time.Hour)
	cycle(t, ctl, ns)
	suspended := func(name string) bool {
		t.Helper()
		got, err := c.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Spec.Suspend != nil && *got.Spec.Suspend
	}
	got, _ := c.BatchV1().CronJobs(ns).Get(ctx, "nightly", metav1.GetOptions{})
	if !*got.Spec.Suspend || !suspended(j.Name) || got.Annotations[reclaim.ReclaimedJobsAnnotation] != j.Name {
		t.Errorf("after the reclaim: CronJob suspend %v, annotations %v; its Job suspended %v", *got.Spec.Suspend, gpulensAnnotations(got.Annotations), suspended(j.Name))
	}
	if _, err := (&reclaim.Actuator{Client: c}).Undo(ctx, reclaim.Ref{Namespace: ns, Kind: "CronJob", Name: "nightly"}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.BatchV1().CronJobs(ns).Get(ctx, "nightly", metav1.GetOptions{})
	if *got.Spec.Suspend || suspended(j.Name) {
		t.Errorf("after undo: CronJob suspend %v, its Job suspended %v", *got.Spec.Suspend, suspended(j.Name))
	}
}

// TestReclaimOneLeader: two reclaimers campaigning for one Lease; only
// one runs.
func TestReclaimOneLeader(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	ns := testNamespace(t, c, "reclaim-lease", nil)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var leaders []string
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Go(func() {
			_ = leaderlease.Run(ctx, leaderlease.Config{Client: c, Namespace: ns, Name: "gpulens-reclaim", Identity: id}, func(ctx context.Context) {
				mu.Lock()
				leaders = append(leaders, id)
				mu.Unlock()
				<-ctx.Done()
			})
		})
	}
	// Longer than two retry periods (2s): the second candidate has tried
	// again, and found the Lease held.
	time.Sleep(5 * time.Second)
	mu.Lock()
	got := slices.Clone(leaders)
	mu.Unlock()
	cancel()
	wg.Wait()
	if len(got) != 1 {
		t.Errorf("leaders %v, want exactly one", got)
	}
}

// TestReclaimLeastPrivilege runs the reclaimer as a ServiceAccount holding
// exactly reclaim.Verbs: a Role in one opted-in namespace, and the
// cluster-wide list of namespaces. It acts there, and undo works, with
// nothing more; every other opted-in namespace on the server is unread,
// and left alone, and the cycle says it was partial.
func TestReclaimLeastPrivilege(t *testing.T) {
	admin := clientFor(t, adminConfig(t))
	ctx := t.Context()
	ns := testNamespace(t, admin, "reclaim-rbac", map[string]string{reclaim.NamespaceLabel: reclaim.NamespaceEnabled})
	createDeployment(t, admin, ns, "nb", 1, nil)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gpulens-reclaim", Namespace: ns}}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "gpulens-reclaim", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: []string{"get", "list", "patch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale", "statefulsets/scale"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"get", "list", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create"}},
	}}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gpulens-reclaim", Namespace: ns},
		Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{})
	})
	c := clientFor(t, asServiceAccount(adminConfig(t), ns, sa.Name))
	// RBAC is cached a moment in the authorizer: wait for the grant.
	for i := 0; ; i++ {
		if _, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err == nil {
			break
		} else if i == 50 {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	t0 := time.Now().UTC().Truncate(time.Second).Add(25 * time.Hour)
	fa := &fakeAnalysis{clock: t0, findings: []findings.Finding{idleFinding(ns, "Deployment", "nb", 0)}}
	m := reclaim.NewMetrics()
	ctl := reclaim.New(reclaim.Options{Client: c, Policy: policy(), Analyze: fa.analyze, Act: true, Now: fa.now, Metrics: m})
	cycle(t, ctl, ns)
	fa.advance(4 * time.Hour)
	if ds := cycle(t, ctl, ns); len(ds) != 1 || ds[0].Action != reclaim.Reclaim {
		t.Fatalf("decisions %+v", ds)
	}
	d, _ := admin.AppsV1().Deployments(ns).Get(ctx, "nb", metav1.GetOptions{})
	if *d.Spec.Replicas != 0 || !hasEvent(t, admin, ns, "nb", reclaim.ReasonReclaimed) {
		t.Errorf("as the ServiceAccount: replicas %d, events %q", *d.Spec.Replicas, events(t, admin, ns, "nb"))
	}
	if _, err := (&reclaim.Actuator{Client: c}).Undo(ctx, reclaim.Ref{Namespace: ns, Kind: "Deployment", Name: "nb"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = m.Write(&b)
	// The failure counter is there from the start, at 0 (a counter first
	// seen at 1 reads as no increase).
	if !strings.Contains(b.String(), `gpulens_reclaim_actions_total{action="reclaim",result="success"} 1`) ||
		!strings.Contains(b.String(), `gpulens_reclaim_actions_total{action="reclaim",result="failure"} 0`) ||
		strings.Count(b.String(), `,result="failure"}`) != 1 {
		t.Errorf("metrics:\n%s", b.String())
	}
	// Other tests' opted-in namespaces are on this server, and this
	// account reads none of them.
	if !strings.Contains(b.String(), `gpulens_reclaim_cycles_total{result="partial"} 2`) {
		t.Errorf("want two partial cycles:\n%s", b.String())
	}
}
