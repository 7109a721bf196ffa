package reclaim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/internal/promdur"
)

// Options configure a Controller.
type Options struct {
	Client kubernetes.Interface
	Policy Policy
	// Analyze runs one analysis over the idle window ending now
	// (FromSession); a failed one says so in Analysis.Err.
	Analyze func(ctx context.Context) Analysis
	// Act changes workloads; without it (the default) the controller
	// announces and logs what it would do, and changes nothing.
	Act bool
	// Notifier, when set, is told the pending reclaims as alerts.
	Notifier *notify.Notifier
	Metrics  *Metrics
	Logger   *slog.Logger
	// Now is the clock: tests pass grace periods without sleeping.
	Now      func() time.Time
	Identity string
}

// Controller runs reclaim cycles. One cycle runs at a time.
type Controller struct {
	o   Options
	act *Actuator
	// dryPending are the reclaims announced in dry run, which writes no
	// annotation: kept here, and announced again after a restart.
	dryPending map[Ref]time.Time
	// dryReclaimed are the workloads a dry run would have reclaimed, and
	// when: they are judged as if reclaimed (not announced again, counted
	// by the rate limit) until they run again.
	dryReclaimed map[Ref]time.Time
	dryVersion   map[Ref]string
	// acted are the times of the reclaims done (or, in dry run, that
	// would have been) by this process, for the rate limit.
	acted     []time.Time
	lastCycle time.Time
}

// New returns a Controller.
func New(o Options) *Controller {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	return &Controller{o: o, act: &Actuator{Client: o.Client, Identity: o.Identity, Now: o.Now}, dryPending: map[Ref]time.Time{}, dryReclaimed: map[Ref]time.Time{}, dryVersion: map[Ref]string{}}
}

// Run runs a cycle at once and then every interval until ctx ends.
func (c *Controller) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := c.Cycle(ctx); err != nil && ctx.Err() == nil {
			c.o.Logger.Error("reclaim cycle failed; nothing was changed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Cycle reads the analysis and the opted-in namespaces' workloads,
// decides, and applies the decisions. An error reading the cluster
// changes nothing; an error acting on one workload is logged and counted,
// and the others go on.
func (c *Controller) Cycle(ctx context.Context) ([]Decision, error) {
	a := c.o.Analyze(ctx)
	now := c.o.Now()
	optedIn, err := OptedIn(ctx, c.o.Client)
	if err != nil {
		c.o.Metrics.badCycles.Inc()
		return nil, err
	}
	var objs []Object
	unread := 0
	for _, ns := range slices.Sorted(maps.Keys(optedIn)) {
		os, err := List(ctx, c.o.Client, ns)
		if err != nil {
			// One namespace the Role does not cover yet holds no other
			// back; its own workloads are not judged (nor cancelled).
			c.o.Logger.Error("cannot read an opted-in namespace; its workloads are left as they are", "namespace", ns, "err", err)
			unread++
			continue
		}
		for _, o := range os {
			o.OptedIn = true
			if !c.o.Act {
				o = c.dryOverlay(o)
			}
			objs = append(objs, o)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // shutting down: nothing is decided on half a read
	}
	if a.Err != nil {
		c.o.Logger.Warn("the analysis failed: no workload is judged, pending reclaims are held", "err", a.Err)
	}
	ds := Decide(c.o.Policy, a, objs, optedIn, now, c.budget(now, objs))
	counts := map[Action]int{}
	var alerts []notify.Alert
	for _, d := range ds {
		counts[d.Action]++
		c.apply(ctx, d, now)
		if al, ok := c.alert(d); ok {
			alerts = append(alerts, al)
		}
	}
	c.account(now, objs)
	for act, g := range c.o.Metrics.decisions {
		g.Set(float64(counts[act]))
	}
	c.o.Metrics.pending.Set(float64(counts[Announce] + counts[Wait] + heldPending(ds)))
	if c.o.Notifier != nil {
		c.o.Notifier.Update(alerts)
	}
	if unread > 0 {
		c.o.Metrics.partialCycles.Inc()
	} else {
		c.o.Metrics.okCycles.Inc()
	}
	c.o.Logger.Info("reclaim cycle done", "act", c.o.Act, "workloads", len(objs), "announced", counts[Announce], "pending", counts[Wait],
		"reclaimed", counts[Reclaim], "cancelled", counts[Cancel], "skipped", counts[Skip])
	return ds, nil
}

// dryOverlay shows o as a dry run's own past decisions would have left
// it: pending since its announcement, or reclaimed.
func (c *Controller) dryOverlay(o Object) Object {
	pending, isPending := c.dryPending[o.Ref]
	reclaimed, isReclaimed := c.dryReclaimed[o.Ref]
	if isReclaimed && !o.running() || isReclaimed && o.ResourceVersion != c.dryVersion[o.Ref] {
		// Scaled down by its owner, or changed since: the simulation ends.
		delete(c.dryReclaimed, o.Ref)
		isReclaimed = false
	}
	if !isPending && !isReclaimed {
		return o
	}
	o.Annotations = maps.Clone(o.Annotations)
	if o.Annotations == nil {
		o.Annotations = map[string]string{}
	}
	if isPending && o.Annotations[PendingSinceAnnotation] == "" {
		o.Annotations[PendingSinceAnnotation] = pending.UTC().Format(time.RFC3339)
	}
	if isReclaimed {
		o.Annotations[ReclaimedAtAnnotation] = reclaimed.UTC().Format(time.RFC3339)
		o.Replicas, o.Suspended = 0, true
	}
	return o
}

func heldPending(ds []Decision) int {
	n := 0
	for _, d := range ds {
		if d.Action == Skip && !d.PendingSince.IsZero() {
			n++
		}
	}
	return n
}

// budget is the rate limit's room now: the limit, less the reclaims in
// the last hour, counted from the workloads' own records (which survive
// a restart and a change of leader) and this process's.
func (c *Controller) budget(now time.Time, objs []Object) int {
	hourAgo := now.Add(-time.Hour)
	c.acted = slices.DeleteFunc(c.acted, func(t time.Time) bool { return !t.After(hourAgo) })
	recorded := 0
	for _, o := range objs {
		if t, err := time.Parse(time.RFC3339, o.Annotations[ReclaimedAtAnnotation]); err == nil && t.After(hourAgo) {
			recorded++
		}
	}
	return c.o.Policy.MaxActionsPerHour - max(recorded, len(c.acted))
}

func (c *Controller) apply(ctx context.Context, d Decision, now time.Time) {
	log := c.o.Logger.With("workload", d.Ref.String(), "decision", d.Action, "reason", d.Reason, "act", c.o.Act)
	result := func(err error) {
		switch {
		case err != nil:
			log.Error("reclaim action failed", "err", err)
			c.o.Metrics.action(d.Action, "failure")
		case !c.o.Act:
			c.o.Metrics.action(d.Action, "dry-run")
		default:
			c.o.Metrics.action(d.Action, "success")
		}
	}
	switch d.Action {
	case Skip, Wait:
		log.Debug("no change")
	case Announce:
		err := c.act.Announce(ctx, d, !c.o.Act)
		if err == nil && !c.o.Act {
			c.dryPending[d.Ref] = d.PendingSince
		}
		log.Info("reclaim announced", "at", d.At, "evidence", d.Evidence.describe())
		result(err)
	case Cancel:
		delete(c.dryPending, d.Ref)
		log.Info("pending reclaim cancelled")
		result(c.act.Cancel(ctx, d, !c.o.Act))
	case Reclaim:
		if !c.o.Act {
			// Said once; the workload is then judged as if reclaimed
			// while it stays as it is.
			delete(c.dryPending, d.Ref)
			c.dryReclaimed[d.Ref], c.dryVersion[d.Ref] = now, d.ResourceVersion
			log.Warn("dry run: would reclaim now", "evidence", d.Evidence.describe())
			result(nil)
			return
		}
		c.acted = append(c.acted, now)
		err := c.act.Reclaim(ctx, d)
		if err != nil {
			_ = c.act.Event(ctx, d.Object, "Warning", ReasonFailed, "Reclaim", "the GPU reclaim failed, nothing changed: "+err.Error())
		} else {
			log.Warn("reclaimed", "evidence", d.Evidence.describe())
		}
		result(err)
	case MarkResumed:
		if c.o.Act {
			result(c.act.MarkResumed(ctx, d.Object))
		}
	case NotifyOnly:
		log.Info("idle, not reclaimed: its owner is told")
	}
}

// alert is the Alertmanager alert a decision keeps active: every pending
// reclaim (held ones too), and every idle workload reported only.
func (c *Controller) alert(d Decision) (notify.Alert, bool) {
	labels := map[string]string{"namespace": d.Namespace, "workload": d.Name, "workload_kind": d.Kind, "severity": "warning"}
	ann := map[string]string{"dry_run": strconv.FormatBool(!c.o.Act), "reason": d.Reason}
	switch {
	case d.Action == Announce || d.Action == Wait || (d.Action == Skip && !d.PendingSince.IsZero()):
		labels["alertname"] = AlertPending
		at := d.At
		if at.IsZero() {
			at = d.PendingSince.Add(c.o.Policy.GracePeriod)
		}
		ann["reclaim_at"] = at.UTC().Format(time.RFC3339)
		ann["summary"] = fmt.Sprintf("%s will be %s at %s unless its GPUs are used: idle over the last %s", d.Ref, verb(d.Kind),
			ann["reclaim_at"], promdur.Format(c.o.Policy.Idle.For))
		if d.Action == Skip {
			ann["summary"] = fmt.Sprintf("%s: its pending reclaim is held: %s", d.Ref, d.Reason)
		}
	case d.Action == NotifyOnly:
		labels["alertname"] = AlertIdleBarePod
		ann["summary"] = fmt.Sprintf("%s holds idle GPUs (%s); gpulens does not reclaim a %s: its owner should release them", d.Ref, d.Evidence.describe(), d.Kind)
	default:
		return notify.Alert{}, false
	}
	if d.Evidence != nil {
		ann["evidence"] = d.Evidence.describe()
	}
	return notify.Alert{Labels: labels, Annotations: ann}, true
}

// account counts the reclaimed workloads, and the GPU-hours and dollars
// they released since the last cycle, from their evidence annotations.
func (c *Controller) account(now time.Time, objs []Object) {
	reclaimed := 0
	elapsed := 0.0
	if !c.lastCycle.IsZero() {
		elapsed = now.Sub(c.lastCycle).Hours()
	}
	c.lastCycle = now
	for _, o := range objs {
		if o.Annotations[ReclaimedAtAnnotation] == "" || o.running() {
			continue
		}
		reclaimed++
		var ev Evidence
		if json.Unmarshal([]byte(o.Annotations[EvidenceAnnotation]), &ev) == nil && elapsed > 0 {
			c.o.Metrics.gpuHours.Add(float64(ev.GPUs) * elapsed)
			c.o.Metrics.usd.Add(ev.HourlyUSD * elapsed)
		}
	}
	c.o.Metrics.reclaimed.Set(float64(reclaimed))
}
