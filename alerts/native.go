package alerts

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// nat is the native schema with the GPU's index kept, which the alerts'
// descriptions name (onGPU).
var nat = native.Schema{Scope: signals.Scope{Keep: signals.LabelGPU}}

// sharedGPU is 1 per physical GPU that time-slicing or MPS shares: there,
// tenants' memory is not isolated and one tenant's growth OOMs the others.
var sharedGPU = signals.MaxBy(gpuBy,
	native.Schema{Scope: signals.Scope{Matchers: string(signals.MatchAnyOf(signals.LabelSharing, string(vocab.SharingTimeSlicing), string(vocab.SharingMPS))), Keep: signals.LabelGPU}}.Allocation())

// over is fn of a signal's expression over rng, at the rules' one-minute
// resolution.
func over(fn signals.Fn, rng, expr string) string {
	return signals.Subquery(fn, expr, rng, signals.RuleStep)
}

// health has no window: a stub keeps Health from needing one.
var health = nat.Health(signals.RuleWindow("1h"))

// exporterBuildInfo is the exporter's build information, which only
// gpulens-exporter writes whatever its job is called.
const exporterBuildInfo = "gpulens_exporter_build_info"

// byNamespace sums per namespace.
var byNamespace = []string{signals.LabelNamespace}

// Native is the rule file for gpulens-exporter's series (docs/METRICS.md).
func Native(c criteria.Config) File {
	idle, held := c.Idle.MaxAvgUtilization, hours(c.Idle.MinHeldHours)
	return File{Groups: []Group{
		{Name: "gpulens.recording", Rules: []Rule{
			{Record: "node_gpu:" + native.GPUUtilizationRatio + ":avg5m", Expr: over(signals.AvgOverTime, "5m", nat.GPUUtilization())},
			{Record: "node_gpu:gpulens_gpu_memory_used_ratio:max5m",
				Expr: signals.Div(over(signals.MaxOverTime, "5m", nat.GPUMemoryUsed()), nat.GPUMemoryTotal())},
			{Record: "namespace_pod:" + native.ContainerGPUUtilizationRatio + ":avg5m",
				Expr: over(signals.AvgOverTime, "5m", nat.Utilization())},
			{Record: "namespace:" + native.ContainerGPUAllocationRatio + ":sum",
				Expr: signals.SumBy(byNamespace, nat.Allocation())},
			{Record: "namespace:gpulens_container_gpu_used_ratio:sum",
				Expr: signals.SumBy(byNamespace, signals.Used(nat))},
		}},
		{Name: "gpulens.gpu", Rules: []Rule{
			alert(vocab.AlertGPUAllocatedIdle, "warning",
				// Under honorLabels: false the tenant is in exported_*; the
				// description names it, not the exporter's pod.
				// The sharing mode joins from the allocation, for routes and
				// for the reader: an idle tenant of a shared GPU costs less.
				signals.GroupLeft(signals.Paren(signals.IdleHour(nat.Utilization(), idle)), "+",
					append(slices.Clone(signals.AllocationKeyLabels), signals.LabelGPU), []string{signals.LabelSharing}, signals.Paren(signals.Zero(nat.Allocation()))), held,
				"A pod holds a GPU it does not use.",
				byPod+" has used less than "+fmt.Sprintf("%.0f%%", idle*100)+" of its GPU allocation on "+onGPU+" for "+held+"."),
			alert(vocab.AlertSharedGPUMemoryNearlyFull, "warning",
				signals.AndOn(signals.Above(signals.MaxBy(gpuBy, signals.Div(nat.GPUMemoryUsed(), nat.GPUMemoryTotal())), c.OOMRisk.WarningRatio),
					signals.GPUKey, sharedGPU), "5m",
				"A shared GPU is close to running out of memory.",
				"Memory of the shared "+onGPU+" is {{ $value | humanizePercentage }} used: its tenants' next allocation may fail with out-of-memory."),
			alert(vocab.AlertSharedGPUMemoryGrowing, "warning",
				signals.AndOn(signals.Above(signals.MaxBy(gpuBy, signals.Sub(signals.Subquery(signals.PredictLinear, nat.GPUMemoryUsed(), "1h", signals.RuleStep, strconv.Itoa(int(growthHorizon(c)*3600))),
					nat.GPUMemoryTotal())), 0), signals.GPUKey, sharedGPU), "15m",
				"A shared GPU's memory grows toward exhaustion.",
				"At the last hour's rate, memory of the shared "+onGPU+fmt.Sprintf(" runs out within %vh.", growthHorizon(c))),
			alert(vocab.AlertGPULost, "critical", signals.Equal(health.Down, 1), "5m",
				"A GPU stopped answering.",
				onGPU+" has not answered NVML for 5 minutes (lost or hung); its pods are failing."),
			alert(vocab.AlertGPUXIDErrors, "warning",
				signals.Above(nat.XIDEventsIn("10m"), 0), "",
				"A GPU reported XID errors.",
				onGPU+" reported XID {{ $labels.xid }} in the last 10 minutes."),
			alert(vocab.AlertGPUThermalThrottling, "warning",
				signals.Above(over(signals.AvgOverTime, "1h", health.Thermal), c.Thermal.MinRatio), "15m",
				"A GPU slows down because it is too hot.",
				onGPU+" was thermally throttled {{ $value | humanizePercentage }} of the last hour."),
			alert(vocab.AlertGPUPowerThrottling, "info",
				signals.Above(over(signals.AvgOverTime, "1h", nat.ThrottledBy(signals.ThrottleHWSlowdown, signals.ThrottleHWPowerBrakeSlowdown)), c.Thermal.MinRatio), "15m",
				"A GPU slows down for a hardware power limit.",
				onGPU+" was slowed down by the hardware (power brake or slowdown) {{ $value | humanizePercentage }} of the last hour."),
			alert(vocab.AlertGPUECCUncorrectable, "critical",
				signals.Above(nat.ECCUncorrectedIn("10m"), 0), "",
				"A GPU had uncorrectable ECC errors.",
				onGPU+" had uncorrectable ECC errors in the last 10 minutes."),
			alert(vocab.AlertGPURowRemapFailed, "critical", signals.Equal(nat.RemapFailed(), 1), "",
				"A GPU could not remap a failing memory row.",
				"A row remap failed on "+onGPU+": the GPU should be replaced."),
		}},
		{Name: "gpulens.exporter", Rules: []Rule{
			// By job name, or, whatever the job is called, by the exporter's
			// own series in the last hour.
			alert(vocab.AlertExporterDown, "critical",
				signals.TargetDown(".*gpulens-exporter.*", signals.Range(signals.LastOverTime, exporterBuildInfo, "1h")), "5m",
				"Prometheus cannot scrape gpulens-exporter.",
				"{{ $labels.instance }} of job {{ $labels.job }} has been down for 5 minutes: its node's GPUs are not monitored."),
			alert(vocab.AlertExporterStale, "warning", signals.Above(signals.Since(native.ExporterLastCollectionTimestampSeconds), 120), "5m",
				"gpulens-exporter serves old data.",
				"{{ $labels.instance }} has not read its GPUs for more than 2 minutes."),
			alert(vocab.AlertAttributionDown, "warning", signals.Equal(native.ExporterPodResourcesUp, 0), "10m",
				"gpulens-exporter cannot tell which pod holds which GPU.",
				"{{ $labels.instance }} cannot read the kubelet's pod-resources socket: no per-pod series."),
			// Only where per-process attribution was asked for: the chart's
			// ServiceMonitor labels those targets process_attribution="requested".
			alert(vocab.AlertAttributionAllocationOnly, "warning", signals.Equal(signals.Select(native.ExporterAttributionMode, signals.MatchEq("mode", "allocation-only"), signals.MatchEq("process_attribution", "requested")), 1), "10m",
				"gpulens-exporter cannot measure pods on shared GPUs.",
				"{{ $labels.instance }} was deployed for per-process attribution but runs in allocation-only mode (no host /proc or no pod informer): shared GPUs get allocation series only."),
		}},
		findingsGroup(),
		serveGroup(),
	}}
}

// findingsGroup alerts on the analyzer's own critical findings, from the
// series `gpulens serve` exposes; it is the same for both schemas.
func findingsGroup() Group {
	return Group{Name: "gpulens.findings", Rules: []Rule{
		alert(vocab.AlertCriticalFinding, "critical", signals.Equal(signals.MaxBy([]string{"kind", "namespace", "workload", "node", "gpu_uuid"}, signals.Select(vocab.SeriesFinding, signals.MatchEq("severity", "critical"))), 1), "",
			"gpulens found a critical problem.",
			"gpulens serve reports a critical {{ $labels.kind }} finding for {{ $labels.namespace }}/{{ $labels.workload }} on {{ $labels.node }} ({{ $labels.gpu_uuid }})."),
	}}
}
