package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Actuator makes the reclaimer's changes through the API server. It only
// patches (a workload's annotations, its scale subresource, a Job's or
// CronJob's spec.suspend) and creates Events: it never deletes, and
// never writes a whole object, so a field it does not own is never
// overwritten. Every patch that changes what runs carries the
// resourceVersion the decision was made on: a workload changed since
// (scaled up by its owner) is a conflict, not a reclaim.
type Actuator struct {
	Client kubernetes.Interface
	// Identity is the Events' reportingInstance: this replica.
	Identity string
	Now      func() time.Time
}

// Verbs are the requests the Actuator and Undo make, and the lister's, as
// RBAC rules name them: the chart's Role is checked against this list.
var Verbs = []string{
	"apps/deployments: get list patch", "apps/deployments/scale: patch",
	"apps/statefulsets: get list patch", "apps/statefulsets/scale: patch",
	"apps/replicasets: list", "batch/jobs: get list patch", "batch/cronjobs: get list patch",
	"core/pods: list", "core/namespaces: list (cluster-wide, by label)", "events.k8s.io/events: create",
}

func (a *Actuator) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

func (a *Actuator) stamp() string { return a.now().UTC().Format(time.RFC3339) }

// patch merge-patches a workload, or its subresource ("scale"), and
// returns the new resourceVersion.
func (a *Actuator) patch(ctx context.Context, r Ref, body map[string]any, sub ...string) (string, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	var obj metav1.Object
	switch r.Kind {
	case KindDeployment:
		if len(sub) > 0 {
			return a.patchScale(ctx, "deployments", r, data)
		}
		obj, err = a.Client.AppsV1().Deployments(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, data, metav1.PatchOptions{})
	case KindStatefulSet:
		if len(sub) > 0 {
			return a.patchScale(ctx, "statefulsets", r, data)
		}
		obj, err = a.Client.AppsV1().StatefulSets(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, data, metav1.PatchOptions{})
	case KindJob:
		obj, err = a.Client.BatchV1().Jobs(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, data, metav1.PatchOptions{})
	case KindCronJob:
		obj, err = a.Client.BatchV1().CronJobs(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, data, metav1.PatchOptions{})
	default:
		return "", fmt.Errorf("%s: the reclaimer does not patch a %s", r, r.Kind)
	}
	if err != nil {
		return "", err
	}
	return obj.GetResourceVersion(), nil
}

// patchScale patches a workload's scale subresource: the typed clients'
// Patch would decode the autoscaling/v1 Scale it returns as the workload.
func (a *Actuator) patchScale(ctx context.Context, resource string, r Ref, data []byte) (string, error) {
	var s autoscalingv1.Scale
	err := a.Client.AppsV1().RESTClient().Patch(types.MergePatchType).Namespace(r.Namespace).Resource(resource).Name(r.Name).
		SubResource("scale").Body(data).Do(ctx).Into(&s)
	return s.ResourceVersion, err
}

// meta is a merge patch's metadata: annotations to set (a nil value
// removes one) and, where given, the resourceVersion it requires.
func meta(rv string, annotations map[string]any) map[string]any {
	m := map[string]any{"annotations": annotations}
	if rv != "" {
		m["resourceVersion"] = rv
	}
	return m
}

// Announce records a pending reclaim on the workload (unless dryRun)
// and says so in an Event.
func (a *Actuator) Announce(ctx context.Context, d Decision, dryRun bool) error {
	if !dryRun {
		if _, err := a.patch(ctx, d.Ref, map[string]any{"metadata": meta(d.ResourceVersion,
			map[string]any{PendingSinceAnnotation: d.PendingSince.UTC().Format(time.RFC3339)})}); err != nil {
			return err
		}
	}
	note := fmt.Sprintf("its GPUs were idle over the last %s (%s); it will be %s at %s unless it is used before; opt out with the annotation %s: %s",
		d.Evidence.Window, d.Evidence.describe(), verb(d.Kind), d.At.UTC().Format(time.RFC3339), OptOutAnnotation, OptOutDisabled)
	if dryRun {
		note = "dry run, nothing will be changed: " + note
	}
	return a.Event(ctx, d.Object, corev1.EventTypeWarning, ReasonPending, "Announce", note)
}

// Cancel ends a pending reclaim (unless dryRun, which recorded none) and
// says why in an Event.
func (a *Actuator) Cancel(ctx context.Context, d Decision, dryRun bool) error {
	if !dryRun {
		if _, err := a.patch(ctx, d.Ref, map[string]any{"metadata": meta("", map[string]any{PendingSinceAnnotation: nil})}); err != nil {
			return err
		}
	}
	return a.Event(ctx, d.Object, corev1.EventTypeNormal, ReasonCancelled, "Cancel", "the pending GPU reclaim is cancelled: "+d.Reason)
}

// MarkResumed records that a reclaimed workload runs again, which starts
// its idle window afresh.
func (a *Actuator) MarkResumed(ctx context.Context, o Object) error {
	_, err := a.patch(ctx, o.Ref, map[string]any{"metadata": meta("", map[string]any{ResumedAtAnnotation: a.stamp()})})
	return err
}

// Reclaim scales the workload to zero, or suspends it, recording what it
// was and why in its annotations, and says so in an Event.
func (a *Actuator) Reclaim(ctx context.Context, d Decision) error {
	evidence, err := json.Marshal(d.Evidence)
	if err != nil {
		return err
	}
	ann := map[string]any{PendingSinceAnnotation: nil, ReclaimedAtAnnotation: a.stamp(), EvidenceAnnotation: string(evidence),
		ResumedAtAnnotation: nil, UndoneAtAnnotation: nil}
	switch d.Kind {
	case KindDeployment, KindStatefulSet:
		// The scale subresource changes replicas and nothing else; the
		// record goes first, so that replicas at zero always have it.
		ann[ReclaimedReplicasAnnotation] = strconv.Itoa(int(d.Replicas))
		rv, err := a.patch(ctx, d.Ref, map[string]any{"metadata": meta(d.ResourceVersion, ann)})
		if err != nil {
			return err
		}
		if _, err := a.patch(ctx, d.Ref, map[string]any{"metadata": map[string]any{"resourceVersion": rv}, "spec": map[string]any{"replicas": 0}}, "scale"); err != nil {
			// Changed in between: the record is taken back, the owner's
			// change stands.
			_, _ = a.patch(context.WithoutCancel(ctx), d.Ref, map[string]any{"metadata": meta("", map[string]any{ReclaimedAtAnnotation: nil,
				ReclaimedReplicasAnnotation: nil, EvidenceAnnotation: nil})})
			return err
		}
	case KindJob, KindCronJob:
		if len(d.ActiveJobs) > 0 {
			ann[ReclaimedJobsAnnotation] = strings.Join(d.ActiveJobs, ",")
		}
		if _, err := a.patch(ctx, d.Ref, map[string]any{"metadata": meta(d.ResourceVersion, ann), "spec": map[string]any{"suspend": true}}); err != nil {
			return err
		}
		var errs []error
		for _, j := range d.ActiveJobs {
			_, err := a.patch(ctx, Ref{d.Namespace, KindJob, j}, map[string]any{"metadata": meta("", map[string]any{ReclaimedAtAnnotation: a.stamp(),
				EvidenceAnnotation: string(evidence)}), "spec": map[string]any{"suspend": true}})
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%s suspended, but not all its running Jobs: %w", d.Ref, err)
		}
	default:
		return fmt.Errorf("%s: the reclaimer does not act on a %s", d.Ref, d.Kind)
	}
	return a.Event(ctx, d.Object, corev1.EventTypeWarning, ReasonReclaimed, "Reclaim",
		fmt.Sprintf("%s: its GPUs were idle over the last %s (%s); undo with: gpulens reclaim undo %s", verb(d.Kind), d.Evidence.Window, d.Evidence.describe(), d.Ref))
}

func verb(kind string) string {
	if kind == KindJob || kind == KindCronJob {
		return "suspended"
	}
	return "scaled to 0 replicas"
}

func (e *Evidence) describe() string {
	if e == nil {
		return "no evidence"
	}
	s := fmt.Sprintf("%d GPU(s), %.1f%% average and %.1f%% p95 utilisation, %.0f%% of the window covered", e.GPUs, 100*e.AvgUtilization, 100*e.P95Utilization, 100*e.Coverage)
	if e.HourlyUSD > 0 {
		s += fmt.Sprintf(", $%.2f an hour", e.HourlyUSD)
	}
	return s
}

var eventSeq atomic.Uint32

// apiVersions are the groups of the kinds Events are about.
var apiVersions = map[string]string{KindDeployment: "apps/v1", KindStatefulSet: "apps/v1", KindJob: "batch/v1", KindCronJob: "batch/v1", "Pod": "v1"}

// Event creates an events.k8s.io/v1 Event about o: `kubectl describe`
// and `kubectl events` show it beside the workload.
func (a *Actuator) Event(ctx context.Context, o Object, typ, reason, action, note string) error {
	if len(note) > 1024 {
		note = note[:1021] + "..." // the API's limit on a note
	}
	ev := &eventsv1.Event{
		// Named as client-go's recorder names them: the object, a dot,
		// the time in hex; the sequence keeps two of one instant apart.
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x%04x", o.Name, a.now().UnixNano(), eventSeq.Add(1)&0xffff), Namespace: o.Namespace},
		EventTime:           metav1.NewMicroTime(a.now()),
		ReportingController: ControllerName,
		ReportingInstance:   a.Identity,
		Action:              action,
		Reason:              reason,
		Type:                typ,
		Note:                note,
		Regarding: corev1.ObjectReference{APIVersion: apiVersions[o.Kind], Kind: o.Kind, Namespace: o.Namespace, Name: o.Name,
			UID: types.UID(o.UID), ResourceVersion: o.ResourceVersion},
	}
	if ev.ReportingInstance == "" {
		ev.ReportingInstance = "gpulens-reclaim"
	}
	_, err := a.Client.EventsV1().Events(o.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}
