package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/recommend"
)

// gpu applies the per-GPU rules; unlike allocations, a GPU can have
// several independent problems (errors and heat and free capacity).
func (d *detector) gpu(g fleet.GPU) {
	base := func(kind vocab.Kind, sev Severity) Finding {
		return Finding{Kind: kind, Severity: sev, Node: g.Node, GPUUUID: g.UUID, Model: g.Model,
			Evidence: map[string]float64{"coverage": g.Coverage, "reported_hours": g.ReportedHours}, Confidence: confidence(g.Coverage)}
	}
	subject := fmt.Sprintf("%s %s on %s", shortModel(g.Model), g.UUID, g.Node)
	absence, gone := d.absenceOf(g) // absent.go
	scant := g.Coverage < d.cfg.MinCoverage || g.Steps < d.cfg.MinSamples
	if scant && !gone {
		f := base(vocab.KindInsufficientData, Info)
		f.Summary = fmt.Sprintf("%s reported for %s (%s of the window): too little to judge", subject, hoursOf(g.ReportedHours), pct(g.Coverage))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
		return
	}
	if g.XIDErrors > 0 || g.DownSteps > 0 || gone {
		f := base(vocab.KindGPUErrors, Warning)
		down := d.res.Window.Step.Hours() * float64(g.DownSteps)
		f.Evidence["xid_errors"], f.Evidence["down_hours"] = g.XIDErrors, down
		var what []string
		if g.XIDErrors > 0 {
			xid := fmt.Sprintf("had %.0f XID error(s)", g.XIDErrors)
			if len(g.XIDCodes) > 0 {
				xid += " (XID " + strings.Join(g.XIDCodes, ", ") + ")"
			}
			what = append(what, xid)
		}
		switch {
		case gone:
			// Gone from a node that kept reporting: its absence, to the
			// window's end, is how long it has been lost, whatever the
			// steps its lost state was reported for (absenceClause).
			f.Evidence["absent_hours"], f.Evidence["last_seen_unix"] = absence.For.Hours(), float64(absence.LastSeen.Unix())
			f.Evidence["node_gpus_reporting"] = float64(absence.Reporting)
			if g.DownSteps > 0 || fellOff(g) {
				f.Severity = Critical
				f.Evidence["lost_hours"] = absence.For.Hours()
				what = append(what, "was lost and "+absenceClause(absence)+": drain the node and reset or replace the GPU")
			} else if d.podBound(g) {
				f.Severity = Info
				f.Evidence["pod_bound"] = 1
				what = append(what, "stopped reporting with its last pod: "+absenceClause(absence)+
					": lost without an XID 79, or, where dcgm-exporter runs --kubernetes-virtual-gpus before its 2025 releases (series only for a GPU a pod holds), no longer held; check nvidia-smi on the node")
			} else {
				// dcgm-exporter has no up signal and drops a lost GPU's
				// blank readings, so a GPU lost without XID 79 only
				// vanishes; so does one taken out of service.
				what = append(what, "stopped reporting: "+absenceClause(absence)+": lost without an XID 79, or taken out of service; check nvidia-smi and the kernel log on the node")
			}
		case g.DownSteps > 0:
			// A lost GPU is paid for and serves nobody until reset. It can
			// be lost without any XID (NVML_ERROR_GPU_IS_LOST, a hang).
			f.Severity = Critical
			what = append(what, fmt.Sprintf("was lost for %s: drain the node and reset or replace the GPU", hoursOf(down)))
		}
		f.Summary = subject + " " + strings.Join(what, " and ")
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
	if scant {
		// Gone too early in the window for its figures to be judged.
		return
	}
	d.workloadXID(g, base, subject) // xid.go
	if g.ThrottleSteps >= d.cfg.MinSamples && g.ThermalThrottleRatio >= d.cfg.Thermal.MinRatio {
		f := base(vocab.KindThermal, Warning)
		f.Evidence["thermal_throttle_ratio"] = g.ThermalThrottleRatio
		f.Confidence = confidence(float64(g.ThrottleSteps) / math.Max(1, float64(d.res.ExpectedSteps)))
		f.Summary = fmt.Sprintf("%s slowed its clocks for heat %s of the time: check the node's cooling and airflow", subject, pct(g.ThermalThrottleRatio))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
	d.unallocatedCapacity(g, base)
	if sharing, cluster, fromCluster := d.sharingOf(g); sharing == vocab.SharingTimeSlicing || sharing == vocab.SharingMPS {
		d.oomRisk(g, sharing, cluster, fromCluster, base)
	}
}

// oomRisk judges a shared GPU by the memory in use on it at each step:
// the device's own figure where the exporter reports it, whoever holds the
// memory, and otherwise the tenants present at each step, summed. Both are
// taken at the p99 over steps, and grown along the device's trend over the
// horizon, up to the device's size: past it the GPU is out of memory, and
// the finding says when. Tenants that take turns never add up: a sum of
// peaks reached at different times measures nothing, and neither does a
// sum of copies of the device's figure (fleet.AttributionCopies): where
// every tenant reports the device's memory, the split between them is
// unknown and the device's figure is given once. fromCluster says the
// sharing mode is the cluster's (cluster), as the data shows the GPU held
// whole. A GPU several pods use through one ResourceClaim is its own mode
// (sharedClaimOf), advised through the claim.
func (d *detector) oomRisk(g fleet.GPU, sharing vocab.Sharing, cluster inventory.NodeSharing, fromCluster bool, base func(vocab.Kind, Severity) Finding) {
	horizon := d.cfg.OOMRisk.GrowthHorizonHours
	if horizon == 0 {
		horizon = d.res.Window.Duration().Hours()
	}
	copies := d.copied(g.Node, g.UUID)
	var tenants, unmeasured []recommend.Tenant
	var minShare, tenantsGrowth float64
	var pods []string
	// tenantAt and unmeasuredAt are the allocations (indexes) behind
	// tenants and unmeasured.
	var tenantAt, unmeasuredAt []int
	for i, a := range d.res.Allocations {
		if a.Node != g.Node || a.UUID != g.UUID {
			continue
		}
		pods = append(pods, a.Pod)
		if a.Share > 0 && (minShare == 0 || a.Share < minShare) {
			minShare = a.Share
		}
		if a.MemorySteps < d.cfg.MinSamples {
			// Allocation-only attribution (no hostPID): the tenant is
			// known, its memory is not. Held longest first.
			w, res := d.podOwner(a)
			unmeasuredAt = append(unmeasuredAt, i)
			unmeasured = append(unmeasured, recommend.Tenant{Usage: recommend.Usage{Workload: w, Model: a.Model, Sharing: a.Sharing,
				Share: a.Share, DeviceMemoryBytes: g.MemoryTotalBytes, Resources: res}, ProjectedMemoryBytes: a.HeldHours})
			continue
		}
		tenantsGrowth += math.Max(0, a.MemoryGrowthBytesPerHour)
		w, res := d.podOwner(a)
		proj := math.Max(a.P99MemoryBytes, a.LastMemoryBytes+math.Max(0, a.MemoryGrowthBytesPerHour)*horizon)
		tenantAt = append(tenantAt, i)
		tenants = append(tenants, recommend.Tenant{Usage: recommend.Usage{Workload: w, Model: a.Model, Sharing: a.Sharing,
			Share: a.Share, P95Utilization: a.P95Utilization, P99MemoryBytes: a.P99MemoryBytes, DeviceMemoryBytes: g.MemoryTotalBytes, Resources: res},
			ProjectedMemoryBytes: proj})
	}
	dev := g.MemoryTotalBytes
	if dev == 0 {
		m, _ := price.LookupModel(g.Model)
		dev = m.MemoryBytes
	}
	// Without per-tenant memory the device's own figures still judge the
	// GPU, never skipped silently; only the tenant to move is unknown.
	blind := len(tenants) == 0 && len(unmeasured) > 0 && g.MemoryUsedSteps >= d.cfg.MinSamples
	if blind {
		tenants, tenantAt = unmeasured, unmeasuredAt
	}
	if len(tenants) == 0 || dev == 0 {
		return
	}
	// Without the device's own series, the tenants' per-step sum stands
	// in, growing at their growth rates added up; never a sum of copies.
	inUse, measure := g.TenantsMemoryP99Bytes, "the tenants' summed memory"
	last, growth := g.TenantsMemoryP99Bytes, tenantsGrowth
	if g.MemoryUsedSteps >= d.cfg.MinSamples {
		inUse, measure = g.MemoryUsedP99Bytes, "device memory"
		last, growth = g.MemoryUsedLastBytes, g.MemoryUsedGrowthBytesPerHour
	} else if copies {
		return
	}
	projected := math.Max(inUse, last+math.Max(0, growth)*horizon)
	// A projection past the device is an OOM before the horizon: it is
	// said as the time to it, and no figure exceeds the device.
	toFull := -1.0
	if projected >= dev && growth > 0 {
		toFull = math.Max(0, (dev-last)/growth)
	}
	projected = math.Min(projected, dev)
	inUse = math.Min(inUse, dev)
	ratio, projRatio := inUse/dev, projected/dev
	// The tenant Kubernetes saw die with the GPU full is the one that ran
	// out, whoever holds the most now (oom_restarts.go); the GPU did run
	// out, whatever its p99.
	died, dead := d.ranOut(g, dev)
	deadAt := slices.Index(tenantAt, died.alloc)
	dead = dead && deadAt >= 0
	var sev Severity
	switch {
	case ratio >= d.cfg.OOMRisk.CriticalRatio, dead:
		sev = Critical
	case ratio >= d.cfg.OOMRisk.WarningRatio, projRatio >= d.cfg.OOMRisk.WarningRatio:
		sev = Warning
	default:
		return
	}
	heaviest := slices.MaxFunc(tenants, func(a, b recommend.Tenant) int {
		return cmp.Or(cmp.Compare(a.ProjectedMemoryBytes, b.ProjectedMemoryBytes), cmp.Compare(b.Workload.Name, a.Workload.Name))
	})
	if dead {
		heaviest = tenants[deadAt]
		heaviest.RanOut = fmt.Sprintf("its container died %d time(s) with the GPU's memory full", len(died.restarts))
	}
	if blind || copies {
		// What the unknown tenant holds is at most what the device holds:
		// the device's figure, once.
		heaviest.ProjectedMemoryBytes, heaviest.P99MemoryBytes, heaviest.MemoryUnknown = projected, inUse, true
	}
	f := base(vocab.KindTimesliceOOMRisk, sev)
	f.Sharing = sharing
	f.Evidence["memory_in_use_p99_bytes"], f.Evidence["device_memory_bytes"], f.Evidence["memory_ratio"] = inUse, dev, ratio
	f.Evidence["device_memory_used_p99_bytes"], f.Evidence["device_memory_used_last_bytes"] = g.MemoryUsedP99Bytes, g.MemoryUsedLastBytes
	f.Evidence["device_memory_growth_bytes_per_hour"] = g.MemoryUsedGrowthBytesPerHour
	if copies {
		// Each tenant's series is a copy of the device's: their sum
		// counts the device once per tenant.
		f.Evidence["tenant_memory_unknown"] = 1
	} else {
		f.Evidence["tenants_memory_p99_bytes"] = g.TenantsMemoryP99Bytes
	}
	f.Evidence["projected_memory_bytes"], f.Evidence["horizon_hours"] = projected, horizon
	if toFull >= 0 {
		f.Evidence["hours_to_full"] = toFull
	}
	f.Evidence["tenants"], f.Evidence["peak_tenants"] = float64(len(pods)), float64(g.CoTenants)
	f.Namespace, f.Workload, f.WorkloadKind, f.Pod = heaviest.Workload.Namespace, heaviest.Workload.Name, heaviest.Workload.Kind, ""
	slices.Sort(pods)
	pods = slices.Compact(pods)
	f.Pods = pods
	if fromCluster {
		d.oomRiskUnseen(&f, g, cluster, measure, inUse, dev, ratio, projRatio, growth, horizon, toFull)
		return
	}
	if claim, ok := d.sharedClaimOf(g); ok && len(pods) > 1 {
		d.sharedClaimOOM(&f, g, claim, heaviest, measure, inUse, dev, ratio, projRatio, growth, horizon, toFull, projected, blind, copies)
		return
	}
	replicas := 0
	if minShare > 0 {
		replicas = int(math.Round(1 / minShare))
	}
	f.Recommendation = recommend.RelieveOOM(sharing, replicas, dev, heaviest, d.cfg.Recommend)
	f.Summary = fmt.Sprintf("%s %s GPU %s: %s at its p99 is %s of its %s (%s; %d tenants, at most %d at once)", sharing, shortModel(g.Model), g.UUID,
		measure, gib(inUse), gib(dev), pct(ratio), len(pods), g.CoTenants)
	f.Summary += growthClause(projRatio, ratio, growth, horizon, toFull)
	f.Summary += ": " + f.Recommendation.Summary
	if dead {
		// Named by its deaths, the tenant is no guess; what it holds may
		// still be unknown (tenant_memory_unknown).
		f.Evidence["oom_restarts"] = float64(len(died.restarts))
		f.Summary += d.deathsClause(died, dev)
		if blind {
			f.Evidence["tenant_memory_unknown"] = 1
		}
	} else if copies {
		// The device's memory is right, but which tenant holds or grows
		// it is unknown when every tenant reports the device's figures,
		// so the tenant named is a guess.
		f.Confidence = confidence(f.Confidence, 0.5)
		f.Summary += " (dcgm-exporter reports the whole device's memory for every tenant: the tenant named is a guess)"
	}
	if blind && !dead {
		f.Evidence["tenant_memory_unknown"] = 1
		f.Confidence = confidence(f.Confidence, 0.5)
		f.Summary += " (no per-tenant memory: the exporter runs without hostPID, allocation-only; the tenant named is the one held longest, not the one known to grow)"
	}
	d.cost(&f, heaviest.Model, heaviest.Usage.Share, f.Recommendation)
	d.add(f)
}

// growthClause is the projection's part of an OOM summary, when it grows:
// the share of the device it reaches within the horizon, or, where it
// reaches the whole device (toFull ≥ 0), when it runs out.
func growthClause(projRatio, ratio, growth, horizon, toFull float64) string {
	switch {
	case toFull >= 0:
		return fmt.Sprintf(", and at its trend of +%s/h it runs out within %s", gib(growth), hoursOf(toFull))
	case projRatio > ratio && growth > 0:
		return fmt.Sprintf(", and %s within %s at its trend of +%s/h", pct(projRatio), hoursOf(horizon), gib(growth))
	}
	return ""
}

// oomRiskUnseen completes f for a GPU the cluster says is shared and whose
// data shows one tenant (readClusterSharing): the device's memory judges
// it as on any shared GPU, but the tenants are not seen, so none is named
// and no tenant is patched. The GPU's whole cost is at risk: an OOM takes
// every tenant down.
func (d *detector) oomRiskUnseen(f *Finding, g fleet.GPU, cluster inventory.NodeSharing, measure string, inUse, dev, ratio, projRatio, growth, horizon, toFull float64) {
	f.Namespace, f.Workload, f.WorkloadKind = "", "", ""
	f.Evidence["sharing_from_cluster"], f.Evidence["cluster_replicas"] = 1, float64(cluster.Replicas)
	f.Evidence["tenant_memory_unknown"] = 1
	f.Confidence = confidence(f.Confidence, 0.5)
	replicas := "replicas"
	if cluster.Replicas > 0 {
		replicas = fmt.Sprintf("%d replicas", cluster.Replicas)
	}
	f.Summary = fmt.Sprintf("%s %s GPU %s (%s per %s): %s at its p99 is %s of its %s (%s)", cluster.Strategy, shortModel(g.Model), g.UUID,
		replicas, cluster.Source, measure, gib(inUse), gib(dev), pct(ratio))
	f.Summary += growthClause(projRatio, ratio, growth, horizon, toFull)
	f.Summary += fmt.Sprintf(": find the tenant whose memory grows before the GPU runs out (the exporter shows one pod per GPU, %s, with the device's figures: "+
		"the other tenants, and which of them holds the memory, are not in the data; dcgm-exporter --kubernetes-virtual-gpus (2025 releases) or gpulens-exporter measure each tenant)",
		strings.Join(f.Pods, ", "))
	d.cost(f, g.Model, 1, nil)
	d.add(*f)
}

// mixedModels flags nodes whose GPUs are of more than one model: the
// scheduler cannot tell them apart, so a pod lands on either.
func (d *detector) mixedModels() {
	models := map[string][]string{}
	for _, g := range d.res.GPUs {
		if g.Model != "" && !slices.Contains(models[g.Node], g.Model) {
			models[g.Node] = append(models[g.Node], g.Model)
		}
	}
	for _, node := range sortedKeys(models) {
		ms := models[node]
		if len(ms) < 2 {
			continue
		}
		slices.Sort(ms)
		d.add(Finding{Kind: vocab.KindMixedModels, Severity: Warning, Node: node, Confidence: 1,
			Evidence: map[string]float64{"models": float64(len(ms))},
			Summary: fmt.Sprintf("node %s has GPUs of %d models (%s): a pod asking for nvidia.com/gpu gets either; split them into node pools labelled by nvidia.com/gpu.product",
				node, len(ms), strings.Join(ms, ", "))})
	}
}
