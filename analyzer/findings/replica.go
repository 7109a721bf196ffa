package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/vocab"
)

// podUse is one pod's allocations of a workload, pooled.
type podUse struct {
	name              string
	allocs            []fleet.Allocation
	heldHours         float64
	steps             int
	allocationSteps   int
	allocatedGPUHours float64
	utilSteps         int
	utilSum           float64
	memSteps          int
	peakMemory        float64
	// atEnd are the GPUs it held at the window's last step: what scaling
	// it away gives back now.
	atEnd []fleet.GPUKey
}

// claims are the ResourceClaims its allocations came through, sorted.
func (p *podUse) claims() []fleet.ClaimRef {
	var out []fleet.ClaimRef
	for _, a := range p.allocs {
		if a.Claim != (fleet.ClaimRef{}) && !slices.Contains(out, a.Claim) {
			out = append(out, a.Claim)
		}
	}
	slices.SortFunc(out, func(x, y fleet.ClaimRef) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return out
}

func (p *podUse) avg() float64 {
	if p.utilSteps == 0 {
		return 0
	}
	return p.utilSum / float64(p.utilSteps)
}

// replicated are the controllers whose pods are interchangeable replicas
// of one service: an idle one among busy ones is a replica the load does
// not reach. A Job's or a DaemonSet's pods each do their own work.
var replicated = map[string]bool{"StatefulSet": true, "Deployment": true, "ReplicaSet": true}

// splitIdleReplicas judges w's pods one by one where the workload's
// average would hide one: a replica idle by the idle-allocation rule
// (its own average below idle.max_avg_utilization for idle.min_held_hours,
// on min_samples utilization samples) while another replica is busy gets
// its own idle-allocation finding, and w is returned without it, so that
// its GPU is neither averaged into the busy replicas' verdict nor priced
// twice. Only pods still holding GPUs at the window's end are compared:
// an old generation gone in a rollout is history, not a replica.
// Shared GPUs are left whole: a tenant's figures there may be the
// device's (deviceFiguresAny), so one tenant's idleness is not its own.
func (d *detector) splitIdleReplicas(w fleet.Workload, owner workload.Ref, team, src string) fleet.Workload {
	if len(w.Pods) < 2 || !replicated[owner.Kind] || (w.Sharing != vocab.SharingNone && w.Sharing != vocab.SharingMIG) {
		return w
	}
	pods := d.podsOf(w)
	var idle, busy []*podUse
	for _, p := range pods {
		if p.utilSteps < d.cfg.MinSamples {
			continue // its use is unknown, not zero
		}
		if len(p.atEnd) == 0 {
			// A pod gone before the window's end (an old generation of
			// a rollout) is no sibling: a busy one followed by an idle
			// one is one replica whose use changed.
			continue
		}
		if p.avg() >= d.cfg.Idle.MaxAvgUtilization {
			busy = append(busy, p)
		} else if p.heldHours >= d.cfg.Idle.MinHeldHours {
			idle = append(idle, p)
		}
	}
	if len(idle) == 0 || len(busy) == 0 {
		return w // uniform: the workload's own verdict says it
	}
	var busyUtil float64
	var busySteps int
	for _, p := range busy {
		busyUtil += p.utilSum
		busySteps += p.utilSteps
	}
	for _, p := range idle {
		d.idleReplica(w, owner, team, src, p, pods, idle, len(busy), busyUtil/float64(busySteps))
	}
	return without(w, pods, idle)
}

// podsOf pools w's allocations by pod, in w.Pods' order.
func (d *detector) podsOf(w fleet.Workload) []*podUse {
	byPod := map[string]*podUse{}
	var out []*podUse
	for _, pod := range w.Pods {
		p := &podUse{name: pod}
		byPod[pod], out = p, append(out, p)
	}
	if d.byWorkload == nil {
		d.byWorkload = map[fleet.WorkloadKey][]int{}
		for i, a := range d.res.Allocations {
			k := workloadKeyOf(a)
			d.byWorkload[k] = append(d.byWorkload[k], i)
		}
	}
	for _, i := range d.byWorkload[w.WorkloadKey] {
		a := d.res.Allocations[i]
		p, ok := byPod[a.Pod]
		if !ok {
			continue
		}
		p.allocs = append(p.allocs, a)
		p.heldHours, p.steps = max(p.heldHours, a.HeldHours), max(p.steps, a.Steps)
		p.allocationSteps += a.Steps
		p.allocatedGPUHours += a.AllocatedGPUHours
		p.utilSteps += a.UtilizationSteps
		p.utilSum += a.AvgUtilization * float64(a.UtilizationSteps)
		p.memSteps += a.MemorySteps
		p.peakMemory = max(p.peakMemory, a.PeakMemoryBytes)
		if g := (fleet.GPUKey{Cluster: a.Cluster, Node: a.Node, UUID: a.UUID}); a.SinceLastSeen == 0 && !slices.Contains(p.atEnd, g) {
			p.atEnd = append(p.atEnd, g)
		}
	}
	return out
}

// workloadKeyOf is the workload an allocation was grouped into, as the
// engine groups them (query's workloads).
func workloadKeyOf(a fleet.Allocation) fleet.WorkloadKey {
	k := fleet.WorkloadKey{Ref: workload.Ref{Cluster: a.Cluster, Kind: a.WorkloadKind, Namespace: a.Namespace, Name: a.Workload, Container: a.Container},
		Model: a.Model, MIGProfile: a.MIGProfile}
	if k.Name == "" {
		k.Kind, k.Name = "Pod", a.Pod
	}
	return k
}

// idleReplica is the finding on one idle replica p of w, with the advice
// its controller takes: a StatefulSet scaled down by one removes its
// highest ordinal first, so that is the fix where p is it (or every
// replica above p is idle too); otherwise scaling down would remove a
// busy replica, and the question is why the load skips p.
func (d *detector) idleReplica(w fleet.Workload, owner workload.Ref, team, src string, p *podUse, pods, idle []*podUse, busy int, busyAvg float64) {
	f := Finding{
		Kind: vocab.KindIdleAllocation, Severity: Warning,
		Namespace: w.Namespace, Workload: owner.Name, WorkloadKind: owner.Kind, WorkloadSource: src, Container: w.Container,
		Model: w.Model, Team: team, Pod: p.name, Pods: []string{p.name}, AllocationPath: w.AllocationPath,
		Evidence: map[string]float64{
			"held_hours": p.heldHours, "avg_utilization": p.avg(), "utilization_steps": float64(p.utilSteps),
			"gpus": float64(len(p.atEnd)), "workload_pods": float64(len(pods)), "busy_replicas": float64(busy),
			"busy_avg_utilization": busyAvg, "peak_memory_bytes": p.peakMemory,
		},
		Confidence: confidence(float64(p.steps)/float64(max(1, d.res.ExpectedSteps)), float64(p.utilSteps)/float64(max(1, p.allocationSteps))),
	}
	for _, g := range p.atEnd {
		f.GPUs = append(f.GPUs, g.UUID)
	}
	f.Claims = claimNames(p.claims())
	if len(p.atEnd) == 1 {
		f.Node, f.GPUUUID = p.atEnd[0].Node, p.atEnd[0].UUID
		if len(p.allocs) == 1 {
			f.GPUInstance = p.allocs[0].GPUInstance
		}
	}
	holding := holdingOf(w)
	if len(p.atEnd) > 1 {
		holding = fmt.Sprintf("%d × %s", len(p.atEnd), strings.TrimPrefix(holding, "a "))
	}
	f.Summary = fmt.Sprintf("replica %s of %s/%s (%s, %d pods) held %s for %s at %s average use while its %d busy %s averaged %s",
		p.name, w.Namespace, owner.Name, owner.Kind, len(pods), holding, hoursOf(p.heldHours), pct(p.avg()), busy, plural(busy, "replica", "replicas"), pct(busyAvg))
	share := d.share(w) * float64(len(p.atEnd))
	var rec *recommend.Recommendation
	ord, ok := ordinal(owner, p.name)
	top, idleAbove := topOrdinal(owner, ord, pods, idle)
	if ok && owner.Kind == "StatefulSet" && idleAbove {
		f.Evidence["ordinal"] = float64(ord)
		// ord replicas keep ordinals 0..ord-1. --current-replicas makes
		// kubectl refuse where the set's count is not top+1 (a pod
		// missing from the data, .spec.ordinals.start above 0), rather
		// than remove a busy replica.
		scale := fmt.Sprintf("kubectl -n %s scale %s --current-replicas=%d --replicas=%d",
			safetext.ShellArg(w.Namespace), safetext.ShellObject("statefulset", owner.Name), top+1, ord)
		what := "down by one replica"
		if ord < top {
			what = fmt.Sprintf("down to %d replicas, which removes it and the idle replicas above it", ord)
		}
		rec = &recommend.Recommendation{
			Action: recommend.ActionFewerReplicas, Workload: owner,
			Summary: fmt.Sprintf("scale StatefulSet %s/%s %s (%s): a StatefulSet removes its highest ordinals first",
				w.Namespace, owner.Name, what, scale),
			CurrentShare: share, RecommendedShare: 0,
		}
		f.Summary += "; " + rec.Summary
	} else {
		if ok {
			f.Evidence["ordinal"] = float64(ord)
		}
		// Scaling down would remove another, busy replica: no change to
		// make, so the money is what it costs, not a saving.
		f.Summary += "; the replicas share no load: check the Service's endpoints (is the pod among them?), its readiness and the load balancer's balancing"
		if owner.Kind == "StatefulSet" && ok {
			f.Summary += " (scaling the StatefulSet down would remove its highest ordinal, a busy replica, not this one)"
		}
	}
	if w.AllocationPath == vocab.AllocationPathDRA {
		f.Summary += " (" + throughClaims(f.Claims) + ")"
	}
	f.Recommendation = rec
	d.cost(&f, w.Model, share, nil)
	if f.CostKnown && rec != nil {
		perHour, _ := d.prices.PerHour(w.Model)
		f.MonthlySavingsUSD = price.MonthlySavings(rec.CurrentShare, rec.RecommendedShare, perHour)
	}
	d.add(f)
}

// ordinal is a StatefulSet pod's ordinal: its name is the set's name, a
// dash and the ordinal.
func ordinal(owner workload.Ref, pod string) (int, bool) {
	s, ok := strings.CutPrefix(pod, owner.Name+"-")
	if !ok || s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// topOrdinal is the highest ordinal of the set's replicas still held,
// and whether every one of them above ord is idle too: scaling the set
// down then removes them (and then ord) before any busy replica.
func topOrdinal(owner workload.Ref, ord int, pods, idle []*podUse) (int, bool) {
	top, idleAbove := ord, true
	for _, q := range pods {
		n, ok := ordinal(owner, q.name)
		if !ok || n <= ord || len(q.atEnd) == 0 {
			continue
		}
		top = max(top, n)
		idleAbove = idleAbove && slices.Contains(idle, q)
	}
	return top, idleAbove
}

// without is w less the idle pods: its pooled figures over the rest. The
// union of the rest's steps is not known pod by pod, so Steps stay the
// workload's; P95Utilization and P99MemoryBytes are of the busiest
// replica at each step, which an idle one seldom is, and stay too.
func without(w fleet.Workload, pods, idle []*podUse) fleet.Workload {
	out := w
	out.Pods, out.GPUs, out.Claims = nil, nil, nil
	out.AllocationSteps, out.AllocatedGPUHours, out.UtilizationSteps, out.MemorySteps, out.PeakMemoryBytes = 0, 0, 0, 0, 0
	var utilSum float64
	for _, p := range pods {
		if slices.Contains(idle, p) {
			continue
		}
		out.Pods = append(out.Pods, p.name)
		for _, a := range p.allocs {
			if g := (fleet.GPUKey{Cluster: a.Cluster, Node: a.Node, UUID: a.UUID}); !slices.Contains(out.GPUs, g) {
				out.GPUs = append(out.GPUs, g)
			}
		}
		for _, c := range p.claims() {
			if !slices.Contains(out.Claims, c) {
				out.Claims = append(out.Claims, c)
			}
		}
		out.AllocationSteps += p.allocationSteps
		out.AllocatedGPUHours += p.allocatedGPUHours
		out.UtilizationSteps += p.utilSteps
		utilSum += p.utilSum
		out.MemorySteps += p.memSteps
		out.PeakMemoryBytes = max(out.PeakMemoryBytes, p.peakMemory)
	}
	out.AvgUtilization = 0
	if out.UtilizationSteps > 0 {
		out.AvgUtilization = utilSum / float64(out.UtilizationSteps)
	}
	if out.Steps > 0 {
		out.Replicas = float64(out.AllocationSteps) / float64(out.Steps)
	}
	if out.AllocationSteps > 0 {
		out.UtilizationCoverage = min(1, float64(out.UtilizationSteps)/float64(out.AllocationSteps))
	}
	slices.SortFunc(out.Claims, func(x, y fleet.ClaimRef) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	slices.SortFunc(out.GPUs, func(x, y fleet.GPUKey) int { return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID)) })
	if len(out.GPUs) != 1 {
		out.GPUInstance = ""
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
