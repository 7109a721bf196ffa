package alerts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// The rules for dcgm-exporter's series take every name, label spelling
// and layout rule from signals/dcgm, and the per-allocation and per-GPU
// figures from the analyzer's dcgm-exporter schema, so that they read a
// stock GPU Operator install as the analyzer does: both host label
// spellings (hostname, Hostname), tenants in exported_* under the GPU
// Operator's honorLabels: false, XID codes as separate series
// (err_code), and the shares of MIG instances from internal/mig.
//
// The heavy expressions are recorded once per evaluation, and the alerts
// read the recordings over time: a live rule cannot afford a subquery of
// the analyzer's expressions. The dcgm-exporter dashboards read the
// per-allocation ones too (vocab.RecordDCGMAllocation): inlined, their
// files outgrew what kubectl apply and Argo CD accept.
const (
	recAllocation    = vocab.RecordDCGMAllocation
	recAllocUtil     = vocab.RecordDCGMAllocationUtilization
	recTenant        = "node_gpu:gpulens_dcgm_tenant:present"
	recGPUUtil       = "node_gpu:gpulens_dcgm_gpu_utilization:ratio"
	recGPUMemUsed    = "node_gpu:gpulens_dcgm_gpu_memory_used:bytes"
	recGPUMemTotal   = "node_gpu:gpulens_dcgm_gpu_memory_total:bytes"
	recGPUMemUsedMax = "node_gpu:gpulens_dcgm_gpu_memory_used:ratio_max5m"
)

// resolved records expr under name with its nodes named as the cluster
// names them (dcgm.ResolveHost). ResolveHost reads its input twice, so the
// heavy expression is recorded once as it comes, under name with the
// _hostlabel suffix, and the join reads that recording.
func resolved(name, expr string) []Rule {
	raw := name + vocab.RecordHostLabelSuffix
	return []Rule{{Record: raw, Expr: expr}, {Record: name, Expr: dcgm.ResolveHost(raw)}}
}

// dcgmGPUBy groups device fields per GPU: they repeat on every tenant's
// series of a shared GPU and on every MIG instance, so alerts take the
// max per GPU.
var gpuBy = []string{signals.LabelNode, signals.LabelGPU, signals.LabelUUID}

// sharedWindow is how long a tenant counts as present on a whole GPU. In
// dcgm-exporter's default layout a time-sliced GPU's one pod label flaps
// between its co-tenants from scrape to scrape (the kubelet's list order
// is not stable, dcgm-exporter #340): the co-tenants are the pods seen
// within this window, never one instant's. A rule sees no later samples,
// so it cannot ask, as the analyzer does (dcgm.Held), for both sides.
const sharedWindow = dcgm.FlapWindow

// tenantBy keys a tenant's presence on a GPU.
var tenantBy = []string{signals.LabelNode, signals.LabelUUID, signals.LabelNamespace, signals.LabelPod}

// outsideCSV notes, in an alert's description, the fields it needs that
// the GPU Operator's default counters file does not enable.
func outsideCSV(fields ...string) string {
	var missing []string
	for _, f := range fields {
		if !dcgm.InDefaultCSV(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return " (Needs " + strings.Join(missing, " or ") + ", which the GPU Operator's default counters file, dcp-metrics-included.csv, leaves out: see the runbook.)"
}

// DCGM is the rule file for NVIDIA dcgm-exporter's series.
func DCGM(c criteria.Config) File {
	sch := dcgm.Schema{}
	// dev reads the device's own readings per GPU, its index kept for the
	// descriptions (onGPU).
	dev := dcgm.Schema{Scope: signals.Scope{Keep: signals.LabelGPU}}
	idle, heldFor := c.Idle.MaxAvgUtilization, hours(c.Idle.MinHeldHours)
	// alloc is the per-allocation signals the dashboards read recorded:
	// they keep what the dashboards group and filter by beyond the
	// signal's labels, the GPU's index for legends, the cluster label of
	// a store shared by clusters (a ruler over it, such as Mimir's, sees
	// every cluster's series at once) and the team label.
	alloc := dcgm.Schema{Scope: signals.Scope{Keep: signals.LabelGPU + ", " + vocab.DefaultClusterLabel, KeepTenant: vocab.TeamLabel}}
	// host names every series' node as the cluster does (dcgm.ResolveHost).
	host := dcgm.ResolveHost
	gpu := func(expr string) string { return host(signals.MaxBy(gpuBy, expr)) }
	rangeOf := func(fn signals.Fn, f, rng string) string { return dcgm.Norm(dcgm.RangeOf(fn, f, rng)) }
	// shared is 1 per whole GPU more than one pod held within sharedWindow.
	shared := signals.Above(signals.CountBy(signals.GPUKey, signals.Range(signals.MaxOverTime, recTenant, sharedWindow)), 1)
	// Thermal needs no window: a stub Apply keeps Health from calling nil.
	devHealth := dev.Health(signals.RuleWindow("1h"))
	health := sch.Health(signals.RuleWindow("1h"))
	return File{Groups: []Group{
		{Name: "gpulens-dcgm.recording", Rules: slices.Concat(
			resolved(recAllocation, alloc.Allocation()),
			resolved(recAllocUtil, alloc.Utilization()),
			resolved(recTenant, signals.ZeroOne(signals.MaxBy(tenantBy, dcgm.Norm(dcgm.Tenants(dcgm.Presence(dcgm.FBUsed, dcgm.WholeGPU)))))),
			resolved(recGPUUtil, sch.GPUUtilization()),
			resolved(recGPUMemUsed, sch.GPUMemoryUsed()),
			resolved(recGPUMemTotal, sch.GPUMemoryTotal()),
			[]Rule{{Record: recGPUMemUsedMax, Expr: signals.Div(signals.Range(signals.MaxOverTime, recGPUMemUsed, "5m"), recGPUMemTotal)}},
		)},
		{Name: "gpulens-dcgm.gpu", Rules: []Rule{
			alert(vocab.AlertGPUAllocatedIdle, "warning",
				signals.IdleHourRecorded(recAllocUtil, idle), heldFor,
				"A pod holds a GPU it does not use.",
				byPod+" has used less than "+fmt.Sprintf("%.0f%%", idle*100)+" of its GPU allocation on "+onGPU+" for "+heldFor+"."),
			alert(vocab.AlertSharedGPUMemoryNearlyFull, "warning",
				signals.AndOn(signals.Above(signals.Div(recGPUMemUsed, recGPUMemTotal), c.OOMRisk.WarningRatio), signals.GPUKey, shared), "5m",
				"A shared GPU is close to running out of memory.",
				"Memory of the shared "+onGPU+" is {{ $value | humanizePercentage }} used: its tenants' next allocation may fail with out-of-memory."),
			alert(vocab.AlertSharedGPUMemoryGrowing, "warning",
				signals.AndOn(signals.Above(signals.Sub(signals.Range(signals.PredictLinear, recGPUMemUsed, "1h", strconv.Itoa(int(growthHorizon(c)*3600))), recGPUMemTotal), 0), signals.GPUKey, shared), "15m",
				"A shared GPU's memory grows toward exhaustion.",
				"At the last hour's rate, memory of the shared "+onGPU+fmt.Sprintf(" runs out within %vh.", growthHorizon(c))),
			// DCGM has no "up" per GPU; XID 79 is the GPU falling off the bus.
			alert(vocab.AlertGPULost, "critical", signals.Equal(devHealth.Down, 1), "",
				"A GPU fell off the bus.",
				onGPU+fmt.Sprintf(" reported XID %d (fallen off the bus); its pods are failing.", vocab.XIDFallenOffBus)),
			// The XID field is a gauge of the last code, one series per code
			// since 3.3.6-3.4.2: aggregated per GPU before looking for a change.
			alert(vocab.AlertGPUXIDErrors, "warning",
				signals.Subquery(signals.MaxOverTime, dcgm.XIDChanged(dcgm.On(dcgm.XIDErrors), "1m", gpuBy...), "10m", signals.RuleStep), "",
				"A GPU reported XID errors.",
				onGPU+" reported XID {{ $value }} in the last 10 minutes."),
			alert(vocab.AlertGPUThermalThrottling, "warning",
				signals.Above(over(signals.AvgOverTime, "1h", health.Thermal), c.Thermal.MinRatio), "15m",
				"A GPU slows down because it is too hot.",
				onGPU+" was thermally throttled {{ $value | humanizePercentage }} of the last hour."+outsideCSV(dcgm.ClocksEventReasons, dcgm.ClockThrottleReasons)),
			alert(vocab.AlertGPUPowerThrottling, "info",
				signals.Above(over(signals.AvgOverTime, "1h", host(dev.ThrottledBy(signals.ThrottleHWSlowdown, signals.ThrottleHWPowerBrakeSlowdown))), c.Thermal.MinRatio), "15m",
				"A GPU slows down for a hardware power limit.",
				onGPU+" was slowed down by the hardware (power brake or slowdown) {{ $value | humanizePercentage }} of the last hour."+outsideCSV(dcgm.ClocksEventReasons, dcgm.ClockThrottleReasons)),
			alert(vocab.AlertGPUECCUncorrectable, "critical", signals.Above(host(dev.ECCUncorrectedIn("10m")), 0), "",
				"A GPU had uncorrectable ECC errors.",
				onGPU+" had uncorrectable ECC errors in the last 10 minutes."+outsideCSV(dcgm.ECCDBEVolTotal)),
			alert(vocab.AlertGPURowRemapFailed, "critical", signals.Above(host(dev.RemapFailed()), 0), "",
				"A GPU could not remap a failing memory row.",
				"A row remap failed on "+onGPU+": the GPU should be replaced."+outsideCSV(dcgm.RowRemapFailure)),
		}},
		{Name: "gpulens-dcgm.exporter", Rules: []Rule{
			alert(vocab.AlertExporterDown, "critical",
				signals.TargetDown(".*dcgm.*", dcgm.RangeOf(signals.LastOverTime, dcgm.XIDErrors, "1h")), "5m",
				"Prometheus cannot scrape dcgm-exporter.",
				"{{ $labels.instance }} of job {{ $labels.job }} has been down for 5 minutes: its node's GPUs are not monitored."),
			// dcgm-exporter keeps serving its last values when DCGM stops
			// updating; the power reading stops changing first.
			alert(vocab.AlertExporterStale, "warning", signals.Equal(gpu(rangeOf(signals.Changes, dcgm.PowerUsage, "15m")), 0), "15m",
				"dcgm-exporter serves old data.",
				"The power reading of "+onGPU+" has not changed for 15 minutes: DCGM is probably not updating."),
		}},
		findingsGroup(),
		serveGroup(),
	}}
}
