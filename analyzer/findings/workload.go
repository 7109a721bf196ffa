package findings

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// How a workload's owner was found, in the order they are preferred.
const (
	// SourceAPI: the pod's owner references, read from the API server.
	SourceAPI = "api"
	// SourceKubeStateMetrics: kube_pod_owner and its ReplicaSet and Job
	// owners in the metrics store: also for pods deleted since.
	SourceKubeStateMetrics = "kube-state-metrics"
	// SourcePodName: the controller's generated-name form of the pod's
	// name (query.withWorkload); right for the built-in controllers'
	// names, but a DaemonSet's pods read as a Job's.
	SourcePodName = "pod-name"
)

// workload applies the per-workload rules. At most one verdict per
// workload: the first rule that holds, from the most to the least urgent,
// so one workload does not appear three times for one cause. Replicas of
// one shape are judged together, and the money is every replica's.
func (d *detector) workload(w fleet.Workload) {
	w, clusterSharing, fromCluster := d.withClusterSharing(w)
	owner, team, resources, src := d.owner(w)
	d.report.WorkloadSources[src]++
	if !fromCluster {
		w = d.splitIdleReplicas(w, owner, team, src)
	}
	f := Finding{
		Namespace: w.Namespace, Workload: owner.Name, WorkloadKind: owner.Kind, WorkloadSource: src, Container: owner.Container,
		Model: w.Model, Team: team, Pods: w.Pods, AllocationPath: w.AllocationPath, Claims: claimNames(w.Claims),
		Evidence: map[string]float64{
			"coverage": w.Coverage, "held_hours": w.HeldHours, "share": w.Share, "replicas": w.Replicas,
			"pods": float64(len(w.Pods)), "gpus": float64(len(w.GPUs)),
			"avg_utilization": w.AvgUtilization, "p95_utilization": w.P95Utilization,
			"p99_memory_bytes": w.P99MemoryBytes,
		},
	}
	if len(w.Pods) == 1 {
		f.Pod = w.Pods[0]
	}
	for _, g := range w.GPUs {
		f.GPUs = append(f.GPUs, g.UUID)
	}
	if len(w.GPUs) == 1 {
		f.Node, f.GPUUUID = w.GPUs[0].Node, w.GPUs[0].UUID
		f.GPUInstance = w.GPUInstance
	}
	subject := d.subject(w, owner)
	if w.Coverage < d.cfg.MinCoverage || w.Steps < d.cfg.MinSamples {
		f.Kind, f.Severity = vocab.KindInsufficientData, Info
		f.Evidence["steps"] = float64(w.Steps)
		f.Confidence = confidence(w.Coverage)
		f.Summary = fmt.Sprintf("%s was seen for %s (%s of the window, %d samples): too little to judge", subject, hoursOf(w.HeldHours), pct(w.Coverage), w.Steps)
		d.costOf(&f, w, nil)
		d.add(f)
		return
	}
	u := recommend.Usage{Workload: owner, Model: w.Model, Sharing: w.Sharing, MIGProfile: w.MIGProfile, Share: w.Share,
		P95Utilization: w.P95Utilization, P99MemoryBytes: w.P99MemoryBytes, DeviceMemoryBytes: d.deviceMemory(w),
		Resources: resources, ThroughDRA: w.AllocationPath == vocab.AllocationPathDRA, ClaimNames: claimNames(w.Claims)}
	if d.haveInventory() {
		u.Claim = d.inv.GPUClaimOf(w.Namespace, w.Pods)
	}
	utilKnown := w.UtilizationSteps >= d.cfg.MinSamples
	// A tenant the cluster says shares the GPU shows the device's memory,
	// not its own: nothing to size it by.
	memKnown := w.MemorySteps >= d.cfg.MinSamples && !fromCluster
	f.Confidence = confidence(w.Coverage, w.UtilizationCoverage)
	holding := holdingOf(w)
	policy := d.cfg.Recommend

	shared := w.Sharing == vocab.SharingTimeSlicing || w.Sharing == vocab.SharingMPS
	deviceLoad, deviceKnown := d.deviceLoad(w)

	// Where a tenant's figures are not its own (dcgm-exporter's copies, a
	// flapping or one-pod label carrying the device's load, or no
	// per-tenant utilization at all), training-like load on the GPU
	// cannot be pinned on any tenant: it is said once of the GPU, at info,
	// with every tenant a candidate (sharedLoadUnknowable).
	if shared && w.HeldHours >= d.cfg.Training.MinHours {
		switch {
		case utilKnown && d.deviceFiguresAny(w):
			d.loadUnknowable(w, subject, min(1, w.P95Utilization), "p95")
		case !utilKnown && deviceKnown:
			d.loadUnknowable(w, subject, deviceLoad, "average")
		}
	}

	switch {
	case !utilKnown:
		f.Kind, f.Severity = vocab.KindInsufficientData, Info
		f.Evidence["utilization_steps"] = float64(w.UtilizationSteps)
		f.Confidence = confidence(w.Coverage)
		f.Summary = fmt.Sprintf("%s held %s for %s with only %d utilization samples: its use is unknown, not zero", subject, holding, hoursOf(w.HeldHours), w.UtilizationSteps)
		if shared && deviceKnown {
			f.Evidence["gpu_avg_utilization"], f.Evidence["tenant_utilization_unknown"] = deviceLoad, 1
			below := ""
			if deviceLoad < d.cfg.Training.MinLoad {
				below = ", below training-like use"
			}
			f.Summary += fmt.Sprintf(" (%s; its GPU averaged %s load%s, and an idle tenant cannot be told from a busy one)", noTenantUtilization, pct(deviceLoad), below)
		}
		d.costOf(&f, w, nil)

	case w.AvgUtilization < d.cfg.Idle.MaxAvgUtilization && w.HeldHours >= d.cfg.Idle.MinHeldHours:
		f.Kind, f.Severity = vocab.KindIdleAllocation, Warning
		if memKnown {
			f.Recommendation = recommend.RightSize(u, policy)
		}
		f.Summary = fmt.Sprintf("%s held %s for %s at %s average use", subject, holding, hoursOf(w.HeldHours), pct(w.AvgUtilization))
		if f.Recommendation != nil {
			f.Summary += "; release it when idle or " + f.Recommendation.Summary
		} else {
			// Nothing smaller fits (or its memory is unknown): what
			// acting saves is what is released, all of it.
			f.Recommendation = recommend.Release(u, policy, holding)
			f.Summary += "; release it when idle"
		}
		d.costOf(&f, w, f.Recommendation)

	case w.Sharing == vocab.SharingMIG && d.undersized(w, memKnown):
		f.Kind, f.Severity = vocab.KindMIGUndersized, Warning
		f.Recommendation = recommend.Upsize(u, policy)
		if memKnown {
			f.Summary = fmt.Sprintf("%s runs at %s p95 use with a p99 memory peak of %s on its %s slice: too small for it", subject, pct(w.P95Utilization), gib(w.P99MemoryBytes), w.MIGProfile)
		} else {
			// DCGM reports no FB_* for an H100's GPU instances
			// (dcgm-exporter #380, #512): the load alone says it is
			// full, and the larger slice is sized by load only.
			f.Evidence["memory_unknown"] = 1
			f.Summary = fmt.Sprintf("%s runs at %s p95 use on its %s slice: too small for it (its memory is unknown: the exporter reports none for this GPU's MIG instances, so the slice advised is sized by load alone)",
				subject, pct(w.P95Utilization), w.MIGProfile)
		}
		d.costOf(&f, w, f.Recommendation)

	case w.Sharing == vocab.SharingMIG && memKnown && recommend.RightSize(u, policy) != nil:
		f.Kind, f.Severity = vocab.KindMIGOversized, Warning
		f.Recommendation = recommend.RightSize(u, policy)
		f.Summary = fmt.Sprintf("%s uses %s of its %s slice (p95 %s, p99 memory %s); %s", subject, pct(w.AvgUtilization), w.MIGProfile, pct(w.P95Utilization), gib(w.P99MemoryBytes), f.Recommendation.Summary)
		d.costOf(&f, w, f.Recommendation)

	case shared && !d.deviceFiguresAny(w) && u.Load() >= d.cfg.Training.MinLoad && w.HeldHours >= d.cfg.Training.MinHours:
		// The tenant's own load (gpulens-exporter with hostPID,
		// dcgm-exporter's 2025 per-process series): a verdict on it.
		load := u.Load()
		f.Kind, f.Severity = vocab.KindTrainingOnShared, Warning
		f.Evidence["p95_gpu_load"] = load
		f.Recommendation = recommend.Dedicated(u, policy, fmt.Sprintf("its p95 load of %s of the GPU starves the co-tenants of its %s GPU", pct(load), w.Sharing))
		f.Summary = fmt.Sprintf("%s sustains %s p95 load of a %s GPU for %s: training-like load on a shared GPU slows every co-tenant", subject, pct(load), w.Sharing, hoursOf(w.HeldHours))
		d.costOf(&f, w, f.Recommendation)
		if f.MonthlySavingsUSD < 0 {
			f.Summary += fmt.Sprintf("; a dedicated GPU costs $%.0f more a month: a reliability fix, not a saving", -f.MonthlySavingsUSD)
		}

	case w.Sharing == vocab.SharingNone && w.AvgUtilization < d.cfg.Underused.MaxAvgUtilization:
		f.Kind, f.Severity = vocab.KindUnderusedGPU, Info
		if memKnown {
			f.Recommendation = recommend.RightSize(u, policy)
		}
		f.Summary = fmt.Sprintf("%s used %s of %s on average (p95 %s) over %s", subject, pct(w.AvgUtilization), holding, pct(w.P95Utilization), hoursOf(w.HeldHours))
		if f.Recommendation != nil {
			f.Severity = Warning
			f.Summary += "; " + f.Recommendation.Summary
		}
		d.costOf(&f, w, f.Recommendation)

	default:
		return // well used and well sized: nothing to say
	}
	if fromCluster {
		f.Evidence["sharing_from_cluster"], f.Evidence["cluster_replicas"] = 1, float64(clusterSharing.Replicas)
		f.Summary += fmt.Sprintf(" (%s per %s; the exporter shows one tenant per GPU, with the device's figures)", w.Sharing, clusterSharing.Source)
	}
	if f.Recommendation == nil || f.Recommendation.Action == recommend.ActionRelease {
		if why := recommend.Unsizable(u); why != "" {
			f.Summary += " (" + why + ")"
		}
	}
	if w.AllocationPath == vocab.AllocationPathDRA {
		f.Summary += " (" + throughClaims(f.Claims) + ")"
	}
	d.add(f)
}

// owner is the workload's owner and team. The API's owner references win
// where the cluster still knows one of the pods, then kube-state-metrics'
// record of them (which outlives the pods), and otherwise the engine's
// inference from the pod names stands.
func (d *detector) owner(w fleet.Workload) (workload.Ref, string, map[vocab.Resource]int64, string) {
	owner := w.Ref
	if owner.Kind == "" {
		owner.Kind = "Pod"
	}
	if owner.Container == "" {
		// The series carry no container label: the spec's one GPU
		// container, for a patch to name.
		owner.Container = d.gpuContainer(w)
	}
	var team string
	if d.haveInventory() {
		team = d.inv.Namespaces[w.Namespace].Team
		for _, pod := range w.Pods {
			p, ok := d.inv.Pods[inventory.PodKey{Namespace: w.Namespace, Name: pod}]
			if !ok || p.WorkloadName == "" || p.WorkloadInferred {
				continue
			}
			owner.Kind, owner.Name = p.WorkloadKind, p.WorkloadName
			return owner, team, p.GPURequests, SourceAPI
		}
	}
	for _, pod := range w.Pods {
		if o, ok := d.res.PodOwners[fleet.PodRef{Namespace: w.Namespace, Name: pod}]; ok && o.Name != "" {
			owner.Kind, owner.Name = o.Kind, o.Name
			return owner, team, d.requests(w), SourceKubeStateMetrics
		}
	}
	return owner, team, d.requests(w), SourcePodName
}

// gpuContainer is the GPU container (inventory.Pod.GPUContainer) of any
// of the workload's pods the cluster still knows.
func (d *detector) gpuContainer(w fleet.Workload) string {
	if !d.haveInventory() {
		return ""
	}
	for _, pod := range w.Pods {
		if p, ok := d.inv.Pods[inventory.PodKey{Namespace: w.Namespace, Name: pod}]; ok && p.GPUContainer != "" {
			return p.GPUContainer
		}
	}
	return ""
}

// requests are the GPU resources of any of the workload's pods the
// cluster still knows.
func (d *detector) requests(w fleet.Workload) map[vocab.Resource]int64 {
	if !d.haveInventory() {
		return nil
	}
	for _, pod := range w.Pods {
		if p, ok := d.inv.Pods[inventory.PodKey{Namespace: w.Namespace, Name: pod}]; ok && p.GPURequests != nil {
			return p.GPURequests
		}
	}
	return nil
}

// subject names the workload in sentences: "shop/web", or with its pods
// when there were several, "shop/web (Deployment, 3 pods on 3 GPUs)".
func (d *detector) subject(w fleet.Workload, owner workload.Ref) string {
	s := fmt.Sprintf("%s/%s", w.Namespace, owner.Name)
	if len(w.Pods) <= 1 {
		return s
	}
	var parts []string
	parts = append(parts, owner.Kind, fmt.Sprintf("%d pods", len(w.Pods)))
	if len(w.GPUs) > 1 {
		parts[len(parts)-1] += fmt.Sprintf(" on %d GPUs", len(w.GPUs))
	}
	if r := w.Replicas; r >= 1.5 {
		parts = append(parts, fmt.Sprintf("%.1f at a time", r))
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// costOf prices a workload: every replica held at once pays, and every
// one of them gets the recommendation.
func (d *detector) costOf(f *Finding, w fleet.Workload, rec *recommend.Recommendation) {
	d.cost(f, w.Model, d.share(w)*max(1, w.Replicas), nil)
	if f.CostKnown && rec != nil {
		perHour, _ := d.prices.PerHour(w.Model)
		f.MonthlySavingsUSD = price.MonthlySavings(rec.CurrentShare, rec.RecommendedShare, perHour*max(1, w.Replicas))
	}
}

// noTenantUtilization says why a tenant of a shared GPU has no utilization
// of its own while its GPU does.
const noTenantUtilization = "no per-tenant utilization on a shared GPU: gpulens-exporter without hostPID measures allocations only"

// deviceLoad is the highest average utilization of the workload's GPUs
// that reported enough of it: every tenant's own use is at most that.
func (d *detector) deviceLoad(w fleet.Workload) (float64, bool) {
	var load float64
	known := false
	for _, k := range w.GPUs {
		if g, ok := d.gpus[k]; ok && g.UtilizationSteps >= d.cfg.MinSamples {
			load, known = max(load, g.AvgUtilization), true
		}
	}
	return load, known
}

// undersized is p95 load or p99 memory at the configured fraction of the
// slice. Load alone decides where the slice's memory is unknown: a slice
// busy at its limit is too small whatever its memory.
func (d *detector) undersized(w fleet.Workload, memKnown bool) bool {
	if w.P95Utilization >= d.cfg.MIG.UndersizedRatio {
		return true
	}
	if !memKnown {
		return false
	}
	m, ok := price.LookupModel(w.Model)
	if !ok {
		return false
	}
	p, ok := m.Profile(w.MIGProfile)
	return ok && w.P99MemoryBytes >= d.cfg.MIG.UndersizedRatio*p.MemoryBytes
}

func (d *detector) share(w fleet.Workload) float64 {
	return price.Share(w.Model, w.Sharing, w.MIGProfile, w.Share, d.cfg.Recommend.MIGShare)
}

// deviceMemory is the memory of the workload's GPUs (the smallest, when
// replicas sit on GPUs that report differently).
func (d *detector) deviceMemory(w fleet.Workload) float64 {
	var out float64
	for _, k := range w.GPUs {
		if g, ok := d.gpus[k]; ok && g.MemoryTotalBytes > 0 && (out == 0 || g.MemoryTotalBytes < out) {
			out = g.MemoryTotalBytes
		}
	}
	return out
}

// holdingOf says what each of a workload's allocations holds, for
// sentences: "a whole H100-80GB", "a 1/4 time-sliced L4", "a 3g.40gb slice
// of an A100-80GB", "a H100-80GB through shared ResourceClaim ns/name".
func holdingOf(w fleet.Workload) string {
	m := shortModel(w.Model)
	switch w.Sharing {
	case vocab.SharingMIG:
		return fmt.Sprintf("a %s slice of a %s", w.MIGProfile, m)
	case vocab.SharingTimeSlicing, vocab.SharingMPS:
		if w.AllocationPath == vocab.AllocationPathDRA && len(w.Claims) == 1 {
			// Pods sharing one ResourceClaim: no device plugin time-slices
			// the GPU (SharingSharedClaim).
			return fmt.Sprintf("a %s through shared ResourceClaim %s", m, w.Claims[0])
		}
		if w.Share > 0 {
			return fmt.Sprintf("a 1/%.0f %s share of a %s", 1/w.Share, w.Sharing, m)
		}
		return fmt.Sprintf("a %s share of a %s", w.Sharing, m)
	}
	return "a whole " + m
}
