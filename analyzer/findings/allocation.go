package findings

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
)

// allocation applies the per-allocation rules. At most one verdict per
// allocation: the first rule that holds, from the most to the least
// urgent, so one pod does not appear three times for one cause.
func (d *detector) allocation(a query.Allocation) {
	w, team, resources := d.workload(a.Namespace, a.Pod, a.Container)
	f := Finding{
		Namespace: a.Namespace, Workload: w.Name, WorkloadKind: w.Kind, Pod: a.Pod, Container: a.Container,
		Node: a.Node, GPUUUID: a.UUID, GPUInstance: a.GPUInstance, Model: a.Model, Team: team,
		Evidence: map[string]float64{
			"coverage": a.Coverage, "held_hours": a.HeldHours, "share": a.Share,
			"avg_utilization": a.AvgUtilization, "p95_utilization": a.P95Utilization,
			"p99_memory_bytes": a.P99MemoryBytes,
		},
	}
	subject := fmt.Sprintf("%s/%s", a.Namespace, w.Name)
	if a.Coverage < d.cfg.MinCoverage || a.Steps < d.cfg.MinSamples {
		f.Kind, f.Severity = KindInsufficientData, Info
		f.Evidence["steps"] = float64(a.Steps)
		f.Confidence = confidence(a.Coverage)
		f.Summary = fmt.Sprintf("%s was seen for %s (%s of the window, %d samples): too little to judge", subject, hoursOf(a.HeldHours), pct(a.Coverage), a.Steps)
		d.cost(&f, a.Model, d.share(a), nil)
		d.add(f)
		return
	}
	u := recommend.Usage{Workload: w, Model: a.Model, Sharing: a.Sharing, MIGProfile: a.MIGProfile, Share: a.Share,
		P95Utilization: a.P95Utilization, P99MemoryBytes: a.P99MemoryBytes, DeviceMemoryBytes: d.deviceMemory(a.Node, a.UUID),
		Resources: resources}
	utilKnown := a.UtilizationSteps >= d.cfg.MinSamples
	memKnown := a.MemorySteps >= d.cfg.MinSamples
	f.Confidence = confidence(a.Coverage, a.UtilizationCoverage)
	holding := holdingOf(a)
	policy := d.cfg.Recommend

	switch {
	case !utilKnown:
		f.Kind, f.Severity = KindInsufficientData, Info
		f.Evidence["utilization_steps"] = float64(a.UtilizationSteps)
		f.Confidence = confidence(a.Coverage)
		f.Summary = fmt.Sprintf("%s held %s for %s with only %d utilization samples: its use is unknown, not zero", subject, holding, hoursOf(a.HeldHours), a.UtilizationSteps)
		d.cost(&f, a.Model, d.share(a), nil)

	case a.AvgUtilization < d.cfg.Idle.MaxAvgUtilization && a.HeldHours >= d.cfg.Idle.MinHeldHours:
		f.Kind, f.Severity = KindIdleAllocation, Warning
		if memKnown {
			f.Recommendation = recommend.RightSize(u, policy)
		}
		f.Summary = fmt.Sprintf("%s held %s for %s at %s average use", subject, holding, hoursOf(a.HeldHours), pct(a.AvgUtilization))
		if f.Recommendation != nil {
			f.Summary += "; release it when idle or " + f.Recommendation.Summary
		} else {
			f.Summary += "; release it when idle"
		}
		d.cost(&f, a.Model, d.share(a), f.Recommendation)

	case a.Sharing == schema.SharingMIG && memKnown && d.undersized(a, u):
		f.Kind, f.Severity = KindMIGUndersized, Warning
		f.Recommendation = recommend.Upsize(u, policy)
		f.Summary = fmt.Sprintf("%s runs at %s p95 use with a p99 memory peak of %s on its %s slice: too small for it", subject, pct(a.P95Utilization), gib(a.P99MemoryBytes), a.MIGProfile)
		d.cost(&f, a.Model, d.share(a), f.Recommendation)

	case a.Sharing == schema.SharingMIG && memKnown && recommend.RightSize(u, policy) != nil:
		f.Kind, f.Severity = KindMIGOversized, Warning
		f.Recommendation = recommend.RightSize(u, policy)
		f.Summary = fmt.Sprintf("%s uses %s of its %s slice (p95 %s, p99 memory %s); %s", subject, pct(a.AvgUtilization), a.MIGProfile, pct(a.P95Utilization), gib(a.P99MemoryBytes), f.Recommendation.Summary)
		d.cost(&f, a.Model, d.share(a), f.Recommendation)

	case (a.Sharing == schema.SharingTimeSlicing || a.Sharing == schema.SharingMPS) && d.sharedLoad(a, u) >= d.cfg.Training.MinLoad && a.HeldHours >= d.cfg.Training.MinHours:
		load := d.sharedLoad(a, u)
		f.Kind, f.Severity = KindTrainingOnShared, Warning
		f.Evidence["p95_gpu_load"] = load
		f.Recommendation = recommend.Dedicated(u, policy, fmt.Sprintf("its p95 load of %s of the GPU starves the co-tenants of its %s GPU", pct(load), a.Sharing))
		f.Summary = fmt.Sprintf("%s sustains %s p95 load of a %s GPU for %s: training-like load on a shared GPU slows every co-tenant", subject, pct(load), a.Sharing, hoursOf(a.HeldHours))
		if d.copied(a.Node, a.UUID) {
			// dcgm-exporter gives every co-tenant the device's figures,
			// so which tenant is the heavy one is a guess.
			f.Confidence = confidence(f.Confidence, 0.5)
			f.Summary += " (dcgm-exporter measures the whole device: the heavy tenant may be a co-tenant)"
		}
		d.cost(&f, a.Model, d.share(a), f.Recommendation)
		if f.MonthlySavingsUSD < 0 {
			f.Summary += fmt.Sprintf("; a dedicated GPU costs $%.0f more a month: a reliability fix, not a saving", -f.MonthlySavingsUSD)
		}

	case a.Sharing == schema.SharingNone && a.AvgUtilization < d.cfg.Underused.MaxAvgUtilization:
		f.Kind, f.Severity = KindUnderusedGPU, Info
		if memKnown {
			f.Recommendation = recommend.RightSize(u, policy)
		}
		f.Summary = fmt.Sprintf("%s used %s of %s on average (p95 %s) over %s", subject, pct(a.AvgUtilization), holding, pct(a.P95Utilization), hoursOf(a.HeldHours))
		if f.Recommendation != nil {
			f.Severity = Warning
			f.Summary += "; " + f.Recommendation.Summary
		}
		d.cost(&f, a.Model, d.share(a), f.Recommendation)

	default:
		return // well used and well sized: nothing to say
	}
	if f.Recommendation == nil {
		if why := recommend.Unsizable(u); why != "" {
			f.Summary += " (" + why + ")"
		}
	}
	d.add(f)
}

// sharedLoad is the fraction of a time-sliced or MPS GPU a tenant keeps
// busy at its p95. Natively that is its own utilization (measured per
// process, up to 1/share) times its share. Where every tenant is given the
// whole device's utilization (dcgm-exporter's copies), its p95 already is the GPU's
// load: scaling it by the share would cap it at the share, and with two
// replicas or more no tenant could ever reach training.min_load.
func (d *detector) sharedLoad(a query.Allocation, u recommend.Usage) float64 {
	if d.copied(a.Node, a.UUID) {
		return min(1, a.P95Utilization)
	}
	return u.Load()
}

// undersized is p95 load or p99 memory at the configured fraction of the
// slice.
func (d *detector) undersized(a query.Allocation, u recommend.Usage) bool {
	if a.P95Utilization >= d.cfg.MIG.UndersizedRatio {
		return true
	}
	m, ok := recommend.LookupModel(a.Model)
	if !ok {
		return false
	}
	p, ok := m.Profile(a.MIGProfile)
	return ok && a.P99MemoryBytes >= d.cfg.MIG.UndersizedRatio*p.MemoryBytes
}

func (d *detector) share(a query.Allocation) float64 {
	return recommend.Share(a.Model, a.Sharing, a.MIGProfile, a.Share, d.cfg.Recommend.MIGShare)
}

func (d *detector) deviceMemory(node, uuid string) float64 {
	for _, g := range d.res.GPUs {
		if g.Node == node && g.UUID == uuid {
			return g.MemoryTotalBytes
		}
	}
	return 0
}

// holdingOf says what an allocation holds, for sentences: "a whole H100-80GB",
// "a 1/4 time-sliced L4", "a 3g.40gb slice of an A100-80GB".
func holdingOf(a query.Allocation) string {
	m := shortModel(a.Model)
	switch a.Sharing {
	case schema.SharingMIG:
		return fmt.Sprintf("a %s slice of a %s", a.MIGProfile, m)
	case schema.SharingTimeSlicing, schema.SharingMPS:
		if a.Share > 0 {
			return fmt.Sprintf("a 1/%.0f %s share of a %s", 1/a.Share, a.Sharing, m)
		}
		return fmt.Sprintf("a %s share of a %s", a.Sharing, m)
	}
	return "a whole " + m
}
