package reclaim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/vocab"
)

// The kinds the reclaimer acts on; a pod of any other owner (or none) is
// only reported.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindJob         = "Job"
	KindCronJob     = "CronJob"
)

// MaxAnalysisAge is how old an analysis's window end may be when it is
// acted on: an analysis read from a store that stopped ingesting judges a
// past, not the present.
const MaxAnalysisAge = 15 * time.Minute

// Ref names a workload as `gpulens reclaim undo` reads it.
type Ref struct{ Namespace, Kind, Name string }

func (r Ref) String() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

// ParseRef reads NAMESPACE/KIND/NAME; KIND is one the reclaimer acts on,
// in any case.
func ParseRef(s string) (Ref, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return Ref{}, fmt.Errorf("%q: want NAMESPACE/KIND/NAME, e.g. team-a/Deployment/notebook", s)
	}
	for _, k := range []string{KindDeployment, KindStatefulSet, KindJob, KindCronJob} {
		if strings.EqualFold(parts[1], k) {
			return Ref{parts[0], k, parts[2]}, nil
		}
	}
	return Ref{}, fmt.Errorf("%q: kind %q: want Deployment, StatefulSet, Job or CronJob", s, parts[1])
}

// Object is a workload as the API server shows it now.
type Object struct {
	Ref
	UID, ResourceVersion string
	Created              time.Time
	// Replicas is a Deployment's or StatefulSet's spec.replicas; Suspended
	// is a Job's or CronJob's spec.suspend.
	Replicas    int32
	Suspended   bool
	Annotations map[string]string
	// OptedIn says its namespace carries NamespaceLabel=NamespaceEnabled.
	OptedIn bool
	// Nodes are the nodes its pods run on now, and Pods those pods.
	Nodes, Pods []string
	// ActiveJobs are a CronJob's running Jobs (status.active): suspending
	// the CronJob stops new ones, suspending these releases the GPUs.
	ActiveJobs []string
}

// running says it holds (or would hold) GPUs now.
func (o Object) running() bool {
	if o.Kind == KindJob || o.Kind == KindCronJob {
		return !o.Suspended
	}
	return o.Replicas > 0
}

// Analysis is one analysis, as the reclaimer reads it: serve's findings,
// and what says whether they may be acted on.
type Analysis struct {
	// Err is why the analysis failed; nothing is judged then.
	Err error
	// Partial says what of the analysis is missing (kinds not checked,
	// clusters not read); nothing is judged on a partial analysis.
	Partial []string
	// End is the window's end and Window its length.
	End    time.Time
	Window time.Duration
	// Cluster is the cluster label value of the cluster acted on (empty
	// where the store holds one cluster): other clusters' findings are
	// not this API server's.
	Cluster  string
	Findings []findings.Finding
	// Stale are the nodes whose data stopped before the window's end
	// (fleet.Result.Stale): an exporter down, or a store behind.
	Stale map[string]bool
	// MemoryActivity is each GPU's average memory activity over the
	// window, by UUID, and each MIG instance's by "UUID/gpu_instance"
	// (session.Session.MemoryActivity); a GPU not in it is unmeasured.
	MemoryActivity map[string]float64
}

// Action is what the reclaimer does to one workload in one cycle.
type Action string

const (
	// Skip: nothing; Reason says why. A pending reclaim stays pending
	// (held, neither acted on nor cancelled) where the reason is about
	// the data rather than the workload.
	Skip Action = "skip"
	// Announce starts a pending reclaim: Event, alert, annotation.
	Announce Action = "announce"
	// Wait: pending, in its grace period (or over the rate limit).
	Wait Action = "pending"
	// Reclaim scales to zero or suspends now.
	Reclaim Action = "reclaim"
	// Cancel ends a pending reclaim: the workload was active, or left
	// the opt-in.
	Cancel Action = "cancel"
	// MarkResumed records that a reclaimed workload runs again.
	MarkResumed Action = "mark-resumed"
	// NotifyOnly reports an idle workload the reclaimer does not act on
	// (a bare pod, an operator's kind).
	NotifyOnly Action = "notify-only"
)

// Evidence is what justified a reclaim, recorded on the workload
// (EvidenceAnnotation) and shown in the Events.
type Evidence struct {
	Findings       []vocab.Kind `json:"findings"`
	Window         string       `json:"window"`
	AnalysisEnd    time.Time    `json:"analysis_end"`
	AvgUtilization float64      `json:"avg_utilization"`
	P95Utilization float64      `json:"p95_utilization"`
	Coverage       float64      `json:"coverage"`
	GPUs           int          `json:"gpus"`
	// MemoryActivity is the highest average memory activity of its GPUs
	// (or MIG instances) over the window; nil where the store has none,
	// and utilisation alone judged.
	MemoryActivity *float64 `json:"memory_activity,omitempty"`
	// HourlyUSD is what its GPUs cost an hour; 0 without a price.
	HourlyUSD float64 `json:"hourly_usd,omitempty"`
}

// Decision is the verdict on one workload in one cycle.
type Decision struct {
	Object
	Action Action
	Reason string
	// Evidence is set where the workload is idle.
	Evidence *Evidence
	// PendingSince and At are when the reclaim was announced and when it
	// happens, on Announce and Wait.
	PendingSince, At time.Time
}

// Decide judges every object, and the idle findings of workloads the
// reclaimer does not act on, for one cycle at now. budget is how many
// reclaims the rate limit still allows; the longest pending go first.
// It is pure: the controller applies the decisions.
func Decide(p Policy, a Analysis, objs []Object, optedIn map[string]bool, now time.Time, budget int) []Decision {
	byRef := map[Ref][]findings.Finding{}
	for _, f := range a.Findings {
		if f.Cluster != a.Cluster || f.Workload == "" {
			continue
		}
		r := Ref{f.Namespace, f.WorkloadKind, f.Workload}
		byRef[r] = append(byRef[r], f)
	}
	objs = slices.Clone(objs)
	slices.SortFunc(objs, func(x, y Object) int {
		px, py := pendingSince(x), pendingSince(y)
		switch {
		case px.IsZero() && !py.IsZero():
			return 1 // the pending first
		case !px.IsZero() && py.IsZero():
			return -1
		}
		if c := px.Compare(py); c != 0 {
			return c
		}
		return cmp.Compare(x.String(), y.String())
	})
	out := make([]Decision, 0, len(objs))
	known := map[Ref]bool{}
	for _, o := range objs {
		known[o.Ref] = true
		d := decide(p, a, o, byRef[o.Ref], now, &budget)
		d.Object = o
		out = append(out, d)
	}
	// Idle workloads of kinds not acted on, in opted-in namespaces.
	var notify []Decision
	for r, fs := range byRef {
		if known[r] || !optedIn[r.Namespace] || acted(r.Kind) || a.Err != nil || len(a.Partial) > 0 {
			continue
		}
		if ev, why := idle(p, a, fs); why == "" {
			notify = append(notify, Decision{Object: Object{Ref: r, OptedIn: true}, Action: NotifyOnly, Evidence: ev,
				Reason: fmt.Sprintf("a %s is not reclaimed: its owner is told", r.Kind)})
		}
	}
	slices.SortFunc(notify, func(x, y Decision) int { return cmp.Compare(x.String(), y.String()) })
	return append(out, notify...)
}

func acted(kind string) bool {
	return kind == KindDeployment || kind == KindStatefulSet || kind == KindJob || kind == KindCronJob
}

func pendingSince(o Object) time.Time {
	t, _ := time.Parse(time.RFC3339, o.Annotations[PendingSinceAnnotation])
	return t
}

func decide(p Policy, a Analysis, o Object, fs []findings.Finding, now time.Time, budget *int) Decision {
	since := pendingSince(o)
	pending := !since.IsZero()
	// leave: the workload itself rules a reclaim out; a pending one ends.
	leave := func(reason string) Decision {
		if pending {
			return Decision{Action: Cancel, Reason: reason}
		}
		return Decision{Action: Skip, Reason: reason}
	}
	// hold: the data cannot tell; a pending reclaim neither happens nor
	// ends until it can.
	hold := func(reason string) Decision { return Decision{Action: Skip, Reason: reason, PendingSince: since} }

	switch {
	case o.Annotations[OptOutAnnotation] == OptOutDisabled:
		return leave("opted out (" + OptOutAnnotation + ": " + OptOutDisabled + ")")
	case !o.OptedIn:
		return leave("namespace not opted in (" + NamespaceLabel + "=" + NamespaceEnabled + ")")
	}
	reclaimedAt, _ := time.Parse(time.RFC3339, o.Annotations[ReclaimedAtAnnotation])
	if !reclaimedAt.IsZero() {
		if !o.running() {
			return Decision{Action: Skip, Reason: "reclaimed at " + reclaimedAt.UTC().Format(time.RFC3339)}
		}
		resumed, _ := time.Parse(time.RFC3339, o.Annotations[ResumedAtAnnotation])
		if resumed.Before(reclaimedAt) {
			return Decision{Action: MarkResumed, Reason: "running again since its reclaim at " + reclaimedAt.UTC().Format(time.RFC3339)}
		}
		if now.Sub(resumed) < p.Idle.For {
			return leave(fmt.Sprintf("running again since %s: not idle for the full %s since", resumed.UTC().Format(time.RFC3339), promdur.Format(p.Idle.For)))
		}
	}
	if !o.running() {
		return leave("holds no GPU (scaled to zero or suspended)")
	}
	if age := now.Sub(o.Created); age < p.Idle.For {
		return leave(fmt.Sprintf("younger (%s) than the idle window (%s)", promdur.Format(age.Truncate(time.Second)), promdur.Format(p.Idle.For)))
	}
	switch {
	case a.Err != nil:
		return hold("analysis failed: " + a.Err.Error())
	case len(a.Partial) > 0:
		return hold("analysis partial: " + strings.Join(a.Partial, "; "))
	case now.Sub(a.End) > MaxAnalysisAge:
		return hold(fmt.Sprintf("analysis ends %s before now", promdur.Format(now.Sub(a.End).Truncate(time.Second))))
	case a.Window < p.Idle.For:
		return hold(fmt.Sprintf("analysis window %s is shorter than idle.for %s", promdur.Format(a.Window), promdur.Format(p.Idle.For)))
	}
	nodes := slices.Clone(o.Nodes)
	for _, f := range fs {
		nodes = append(nodes, f.Node)
	}
	for _, n := range nodes {
		if n != "" && a.Stale[n] {
			return hold("the data of node " + n + " stops before the window's end (its exporter or the store is down)")
		}
	}
	// A pod of it that the analysis never saw (its node's exporter down
	// the whole window, or a pod too new) may be the busy one.
	seen := map[string]bool{}
	for _, f := range fs {
		for _, pod := range f.Pods {
			seen[pod] = true
		}
		if f.Pod != "" {
			seen[f.Pod] = true
		}
	}
	for _, pod := range o.Pods {
		if len(fs) > 0 && !seen[pod] {
			return hold("pod " + pod + " runs without GPU data in the analysis (its node's exporter down, or the pod too new)")
		}
	}
	ev, why := idle(p, a, fs)
	switch {
	case why == "":
	case strings.HasPrefix(why, "in use"):
		return leave(why)
	default:
		return hold(why)
	}
	if !pending {
		return Decision{Action: Announce, Reason: "idle", Evidence: ev, PendingSince: now, At: now.Add(p.GracePeriod)}
	}
	at := since.Add(p.GracePeriod)
	switch {
	case now.Before(at):
		return Decision{Action: Wait, Reason: "in its grace period", Evidence: ev, PendingSince: since, At: at}
	case *budget <= 0:
		return Decision{Action: Wait, Reason: fmt.Sprintf("rate limit reached (%d an hour)", p.MaxActionsPerHour), Evidence: ev, PendingSince: since, At: at}
	}
	*budget--
	return Decision{Action: Reclaim, Reason: "idle past its grace period", Evidence: ev, PendingSince: since, At: at}
}

// idle judges a workload's findings against the policy. why is empty
// when it is idle; it starts with "in use" when the data shows use.
func idle(p Policy, a Analysis, fs []findings.Finding) (*Evidence, string) {
	if len(fs) == 0 {
		// Busy workloads have no finding; neither has one whose data is
		// missing. Either way, not idle.
		return nil, "in use: the analysis finds it neither idle nor underused"
	}
	ev := &Evidence{Window: promdur.Format(a.Window), AnalysisEnd: a.End.UTC(), Coverage: 1}
	for _, f := range fs {
		if f.Kind != vocab.KindIdleAllocation && f.Kind != vocab.KindUnderusedGPU {
			if f.Kind == vocab.KindInsufficientData {
				return nil, "too little data: " + f.Summary
			}
			return nil, "in use: " + string(f.Kind) + ": " + f.Summary
		}
		if f.Evidence["busy_replicas"] > 0 {
			return nil, fmt.Sprintf("in use: %v of its replicas are busy", f.Evidence["busy_replicas"])
		}
		if f.WorkloadSource != findings.SourceAPI {
			return nil, "its owner was found by " + f.WorkloadSource + ", not read from the API server"
		}
		ev.Findings = append(ev.Findings, f.Kind)
		ev.AvgUtilization = max(ev.AvgUtilization, f.Evidence["avg_utilization"])
		ev.P95Utilization = max(ev.P95Utilization, f.Evidence["p95_utilization"])
		ev.Coverage = min(ev.Coverage, f.Evidence["coverage"])
		ev.GPUs += int(f.Evidence["gpus"])
		for _, key := range memoryKeys(f) {
			if v, ok := a.MemoryActivity[key]; ok && (ev.MemoryActivity == nil || v > *ev.MemoryActivity) {
				ev.MemoryActivity = &v
			}
		}
		if f.CostKnown {
			ev.HourlyUSD += f.MonthlyCostUSD / vocab.HoursPerMonth
		}
	}
	slices.Sort(ev.Findings)
	ev.Findings = slices.Compact(ev.Findings)
	switch {
	case ev.AvgUtilization > p.Idle.MaxAvgUtilization:
		return nil, fmt.Sprintf("in use: %.1f%% average utilisation over %s (idle is at most %.1f%%)", 100*ev.AvgUtilization, ev.Window, 100*p.Idle.MaxAvgUtilization)
	case ev.P95Utilization > p.Idle.MaxP95Utilization:
		return nil, fmt.Sprintf("in use: %.1f%% p95 utilisation over %s (idle is at most %.1f%%)", 100*ev.P95Utilization, ev.Window, 100*p.Idle.MaxP95Utilization)
	case ev.MemoryActivity != nil && *ev.MemoryActivity > p.Idle.MaxAvgMemoryActivity:
		return nil, fmt.Sprintf("in use: %.1f%% average memory activity over %s (idle is at most %.1f%%)", 100**ev.MemoryActivity, ev.Window, 100*p.Idle.MaxAvgMemoryActivity)
	case ev.Coverage < p.Idle.MinCoverage:
		return nil, fmt.Sprintf("held, with data, for %.0f%% of the %s window (want %.0f%%): idle for all of it is not established", 100*ev.Coverage, ev.Window, 100*p.Idle.MinCoverage)
	}
	return ev, ""
}

// memoryKeys are the MemoryActivity keys of what a finding's workload
// holds: its MIG instance, or its GPUs.
func memoryKeys(f findings.Finding) []string {
	if f.GPUInstance != "" && f.GPUUUID != "" {
		return []string{f.GPUUUID + "/" + f.GPUInstance}
	}
	if len(f.GPUs) > 0 {
		return f.GPUs
	}
	if f.GPUUUID != "" {
		return []string{f.GPUUUID}
	}
	return nil
}
