package reclaim

// The opt-in, opt-out and record keys on the cluster. They are the
// reclaimer's interface with the workloads' owners (docs/RECLAIM.md), so
// they never change meaning.
const (
	// NamespaceLabel=NamespaceEnabled opts a namespace in; nothing else
	// does (an absent label is out).
	NamespaceLabel   = "gpulens.io/reclaim"
	NamespaceEnabled = "enabled"
	// OptOutAnnotation=OptOutDisabled on a workload keeps it out of an
	// opted-in namespace.
	OptOutAnnotation = "gpulens.io/reclaim"
	OptOutDisabled   = "disabled"

	// PendingSinceAnnotation is when a pending reclaim was announced
	// (RFC 3339): kept on the workload so that a restarted or new leader
	// keeps the grace period instead of starting it again.
	PendingSinceAnnotation = "gpulens.io/reclaim-pending-since"
	// ReclaimedAtAnnotation is when the workload was reclaimed (RFC 3339).
	ReclaimedAtAnnotation = "gpulens.io/reclaimed-at"
	// ReclaimedReplicasAnnotation is a Deployment's or StatefulSet's
	// replicas before it was scaled to zero; undo restores them. A Job or
	// CronJob has none: it was running (spec.suspend false), which undo
	// restores.
	ReclaimedReplicasAnnotation = "gpulens.io/reclaimed-replicas"
	// EvidenceAnnotation is the analysis that justified the reclaim, as
	// JSON (Evidence), for the owner who asks why.
	EvidenceAnnotation = "gpulens.io/reclaim-evidence"
	// ResumedAtAnnotation is when a reclaimed workload was seen running
	// again (scaled up by someone, or undone): it is not reclaimed again
	// before it has been idle for the policy's full window since.
	ResumedAtAnnotation = "gpulens.io/reclaim-resumed-at"
	// ReclaimedJobsAnnotation, on a reclaimed CronJob, lists the Jobs of
	// it that were running and were suspended with it (comma-separated);
	// undo resumes them too.
	ReclaimedJobsAnnotation = "gpulens.io/reclaimed-jobs"
	// UndoneAtAnnotation is when `gpulens reclaim undo` restored it.
	UndoneAtAnnotation = "gpulens.io/reclaim-undone-at"
)

// Event reasons, on the workload (events.k8s.io/v1).
const (
	ReasonPending   = "GPUReclaimPending"
	ReasonReclaimed = "GPUReclaimed"
	ReasonCancelled = "GPUReclaimCancelled"
	ReasonUndone    = "GPUReclaimUndone"
	ReasonFailed    = "GPUReclaimFailed"
	// ReasonIdleBarePod is said of a pod no controller owns: it is never
	// deleted, only reported.
	ReasonIdleBarePod = "GPUIdleBarePod"
)

// Alert names, under gpulens's prefix so that routes matching
// alertname=~"GPULens.*" take them.
const (
	AlertPending     = "GPULensReclaimPending"
	AlertIdleBarePod = "GPULensReclaimNotifyOnly"
)

// ControllerName is the Events' reportingController.
const ControllerName = "gpulens.io/reclaim"
