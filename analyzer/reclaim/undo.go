package reclaim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Undo restores a reclaimed workload from its annotations: its replicas,
// or its Job's and CronJob's running state. It records when (UndoneAt and
// ResumedAt, so that it is not reclaimed again before it has been idle
// for the full window since) and says so in an Event. The reclaim's own
// record (ReclaimedAt, the evidence) stays, for its history.
func (a *Actuator) Undo(ctx context.Context, r Ref) (Object, error) {
	o, err := Read(ctx, a.Client, r)
	if err != nil {
		return o, err
	}
	if o.Annotations[ReclaimedAtAnnotation] == "" {
		return o, fmt.Errorf("%s was not reclaimed by gpulens (no %s annotation): nothing to undo", r, ReclaimedAtAnnotation)
	}
	if o.running() {
		return o, fmt.Errorf("%s runs already: nothing to undo", r)
	}
	stamp := a.stamp()
	ann := map[string]any{UndoneAtAnnotation: stamp, ResumedAtAnnotation: stamp, PendingSinceAnnotation: nil}
	var what string
	switch r.Kind {
	case KindDeployment, KindStatefulSet:
		n, err := strconv.Atoi(o.Annotations[ReclaimedReplicasAnnotation])
		if err != nil || n < 1 {
			return o, fmt.Errorf("%s: annotation %s is %q, not the replicas it had", r, ReclaimedReplicasAnnotation, o.Annotations[ReclaimedReplicasAnnotation])
		}
		rv, err := a.patch(ctx, r, map[string]any{"metadata": meta(o.ResourceVersion, ann)})
		if err != nil {
			return o, err
		}
		if _, err := a.patch(ctx, r, map[string]any{"metadata": map[string]any{"resourceVersion": rv}, "spec": map[string]any{"replicas": n}}, "scale"); err != nil {
			return o, err
		}
		what = fmt.Sprintf("scaled back to %d replicas", n)
	case KindJob, KindCronJob:
		if _, err := a.patch(ctx, r, map[string]any{"metadata": meta(o.ResourceVersion, ann), "spec": map[string]any{"suspend": false}}); err != nil {
			return o, err
		}
		what = "resumed"
		var errs []error
		for j := range strings.SplitSeq(o.Annotations[ReclaimedJobsAnnotation], ",") {
			if j == "" {
				continue
			}
			_, err := a.patch(ctx, Ref{r.Namespace, KindJob, j}, map[string]any{"metadata": meta("", ann), "spec": map[string]any{"suspend": false}})
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return o, fmt.Errorf("%s resumed, but not all the Jobs it suspended: %w", r, err)
		}
	}
	return o, a.Event(ctx, o, corev1.EventTypeNormal, ReasonUndone, "Undo",
		fmt.Sprintf("%s, undoing the GPU reclaim of %s; it is not reclaimed again before it has been idle for the policy's full window", what, o.Annotations[ReclaimedAtAnnotation]))
}
