package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
)

// gpu applies the per-GPU rules; unlike allocations, a GPU can have
// several independent problems (errors and heat and free capacity).
func (d *detector) gpu(g query.GPU) {
	base := func(kind string, sev Severity) Finding {
		return Finding{Kind: kind, Severity: sev, Node: g.Node, GPUUUID: g.UUID, Model: g.Model,
			Evidence: map[string]float64{"coverage": g.Coverage, "reported_hours": g.ReportedHours}, Confidence: confidence(g.Coverage)}
	}
	subject := fmt.Sprintf("%s %s on %s", shortModel(g.Model), g.UUID, g.Node)
	if g.Coverage < d.cfg.MinCoverage || g.Steps < d.cfg.MinSamples {
		f := base(KindInsufficientData, Info)
		f.Summary = fmt.Sprintf("%s reported for %s (%s of the window): too little to judge", subject, hoursOf(g.ReportedHours), pct(g.Coverage))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
		return
	}
	if g.XIDErrors > 0 || g.DownSteps > 0 {
		f := base(KindGPUErrors, Warning)
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
		if g.DownSteps > 0 {
			// A lost GPU is paid for and serves nobody until reset. It can
			// be lost without any XID (NVML_ERROR_GPU_IS_LOST, a hang).
			f.Severity = Critical
			what = append(what, fmt.Sprintf("was lost for %s: drain the node and reset or replace the GPU", hoursOf(down)))
		}
		f.Summary = subject + " " + strings.Join(what, " and ")
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
	if g.WorkloadXIDErrors > 0 {
		// XID 13, 31, 43 and 45 are raised by what a process did (an
		// illegal address, a killed kernel): the GPU is healthy, so no
		// drain or reset, but the tenant's job likely failed.
		f := base(KindWorkloadXID, Info)
		f.Evidence["workload_xid_errors"] = g.WorkloadXIDErrors
		f.Summary = fmt.Sprintf("%s reported %.0f application error(s) (XID %s): a bug or a killed process in the workload, not a GPU fault; check the tenant's logs",
			subject, g.WorkloadXIDErrors, strings.Join(g.WorkloadXIDCodes, ", "))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
	if g.ThrottleSteps >= d.cfg.MinSamples && g.ThermalThrottleRatio >= d.cfg.Thermal.MinRatio {
		f := base(KindThermal, Warning)
		f.Evidence["thermal_throttle_ratio"] = g.ThermalThrottleRatio
		f.Confidence = confidence(float64(g.ThrottleSteps) / math.Max(1, float64(d.res.ExpectedSteps)))
		f.Summary = fmt.Sprintf("%s slowed its clocks for heat %s of the time: check the node's cooling and airflow", subject, pct(g.ThermalThrottleRatio))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
	if g.ReportedHours > 0 && g.UnallocatedHours/g.ReportedHours >= d.cfg.Unallocated.MinRatio {
		ratio := g.UnallocatedHours / g.ReportedHours
		f := base(KindUnallocated, Warning)
		f.Evidence["unallocated_hours"], f.Evidence["unallocated_ratio"] = g.UnallocatedHours, ratio
		f.Summary = fmt.Sprintf("%s sat unallocated for %s (%s of the time it reported): let the node pool scale down", subject, hoursOf(g.UnallocatedHours), pct(ratio))
		d.cost(&f, g.Model, 1, &recommend.Recommendation{CurrentShare: ratio})
		d.add(f)
	}
	if g.Sharing == schema.SharingTimeSlicing || g.Sharing == schema.SharingMPS {
		d.oomRisk(g, base)
	}
}

// oomRisk compares the co-tenants' memory with the device's: their p99
// peaks now, and their linear growth projected over the horizon.
func (d *detector) oomRisk(g query.GPU, base func(string, Severity) Finding) {
	var tenants []recommend.Tenant
	var sum, projected, growth, minShare float64
	horizon := d.cfg.OOMRisk.GrowthHorizonHours
	if horizon == 0 {
		horizon = d.res.Window.Duration().Hours()
	}
	for _, a := range d.res.Allocations {
		if a.Node != g.Node || a.UUID != g.UUID || a.MemorySteps < d.cfg.MinSamples {
			continue
		}
		w, _, res := d.workload(a.Namespace, a.Pod, a.Container)
		proj := math.Max(a.P99MemoryBytes, a.LastMemoryBytes+math.Max(0, a.MemoryGrowthBytesPerHour)*horizon)
		tenants = append(tenants, recommend.Tenant{Usage: recommend.Usage{Workload: w, Model: a.Model, Sharing: a.Sharing,
			Share: a.Share, P95Utilization: a.P95Utilization, P99MemoryBytes: a.P99MemoryBytes, DeviceMemoryBytes: g.MemoryTotalBytes, Resources: res},
			ProjectedMemoryBytes: proj})
		growth = math.Max(growth, a.MemoryGrowthBytesPerHour)
		if minShare == 0 || (a.Share > 0 && a.Share < minShare) {
			minShare = a.Share
		}
		if d.res.Schema == schema.NameDCGM {
			// Every dcgm-exporter co-tenant reports the whole device's
			// memory: the device's use is one of them, not their sum.
			sum, projected = math.Max(sum, a.P99MemoryBytes), math.Max(projected, proj)
		} else {
			sum, projected = sum+a.P99MemoryBytes, projected+proj
		}
	}
	dev := g.MemoryTotalBytes
	if dev == 0 {
		m, _ := recommend.LookupModel(g.Model)
		dev = m.MemoryBytes
	}
	if len(tenants) == 0 || dev == 0 {
		return
	}
	ratio, projRatio := sum/dev, projected/dev
	var sev Severity
	switch {
	case ratio >= d.cfg.OOMRisk.CriticalRatio:
		sev = Critical
	case ratio >= d.cfg.OOMRisk.WarningRatio, projRatio >= d.cfg.OOMRisk.WarningRatio:
		sev = Warning
	default:
		return
	}
	heaviest := slices.MaxFunc(tenants, func(a, b recommend.Tenant) int {
		return cmp.Or(cmp.Compare(a.ProjectedMemoryBytes, b.ProjectedMemoryBytes), cmp.Compare(b.Workload.Name, a.Workload.Name))
	})
	f := base(KindTimesliceOOMRisk, sev)
	f.Evidence["summed_p99_memory_bytes"], f.Evidence["device_memory_bytes"], f.Evidence["memory_ratio"] = sum, dev, ratio
	f.Evidence["projected_memory_bytes"], f.Evidence["max_growth_bytes_per_hour"], f.Evidence["tenants"] = projected, growth, float64(len(tenants))
	f.Evidence["horizon_hours"] = horizon
	f.Namespace, f.Workload, f.WorkloadKind, f.Pod = heaviest.Workload.Namespace, heaviest.Workload.Name, heaviest.Workload.Kind, ""
	replicas := 0
	if minShare > 0 {
		replicas = int(math.Round(1 / minShare))
	}
	f.Recommendation = recommend.RelieveOOM(g.Sharing, replicas, dev, heaviest, d.cfg.Recommend)
	f.Summary = fmt.Sprintf("the %d tenants of %s %s GPU %s need %s of its %s at their p99 peaks (%s)", len(tenants), g.Sharing, shortModel(g.Model), g.UUID,
		gib(sum), gib(dev), pct(ratio))
	if projRatio > ratio && growth > 0 {
		f.Summary += fmt.Sprintf(", and %s within %s at the current growth of %s/h", pct(projRatio), hoursOf(horizon), gib(growth))
	}
	f.Summary += ": " + f.Recommendation.Summary
	if d.res.Schema == schema.NameDCGM {
		// Every tenant reports the device's memory: the total is right,
		// but which tenant holds or grows it is unknown, so the tenant
		// named (and the memory it is said to need) is a guess.
		f.Confidence = confidence(f.Confidence, 0.5)
		f.Summary += " (dcgm-exporter reports the whole device's memory for every tenant: the tenant named is a guess)"
	}
	d.cost(&f, heaviest.Model, heaviest.Usage.Share, f.Recommendation)
	d.add(f)
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
		d.add(Finding{Kind: KindMixedModels, Severity: Warning, Node: node, Confidence: 1,
			Evidence: map[string]float64{"models": float64(len(ms))},
			Summary: fmt.Sprintf("node %s has GPUs of %d models (%s): a pod asking for nvidia.com/gpu gets either; split them into node pools labelled by nvidia.com/gpu.product",
				node, len(ms), strings.Join(ms, ", "))})
	}
}
