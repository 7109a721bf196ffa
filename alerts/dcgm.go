package alerts

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/findings"
)

// dcgm-exporter's labels: Hostname, gpu, UUID, modelName; pod and
// namespace when a pod holds the device. Device fields repeat on every
// tenant's series of a shared GPU (--kubernetes-virtual-gpus) and on every
// MIG instance, so alerts on them take the max per GPU.
const (
	dcgmGPU   = "Hostname, gpu, UUID"
	dcgmOnGPU = "{{ $labels.Hostname }} GPU {{ $labels.gpu }} ({{ $labels.UUID }})"
	// dcgmShared: a whole GPU (no GPU_I_ID) held by more than one pod.
	dcgmShared = `count by (Hostname, gpu, UUID) (DCGM_FI_DEV_FB_USED{` + held + `, GPU_I_ID=""}) > 1`
	// held: a pod holds the device. Scraped without honor_labels, a device
	// no pod holds carries dcgm-exporter's own pod in pod, and the
	// workload's pod moves to exported_pod; the rules expect honor_labels
	// (see docs/runbooks.md) and never mistake the exporter for a tenant.
	held = `pod!="", pod!~"(nvidia-)?dcgm-exporter-.*"`
)

// DCGM is the rule file for NVIDIA dcgm-exporter's series.
func DCGM(c findings.Config) File {
	idle, heldFor := c.Idle.MaxAvgUtilization, hours(c.Idle.MinHeldHours)
	used := "max by (" + dcgmGPU + ") (DCGM_FI_DEV_FB_USED)"
	total := "max by (" + dcgmGPU + ") (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)"
	return File{Groups: []Group{
		{Name: "gpulens-dcgm.recording", Rules: []Rule{
			{Record: "node_gpu:DCGM_FI_DEV_GPU_UTIL:avg5m", Expr: "avg by (" + dcgmGPU + ", modelName) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[5m])) / 100"},
			{Record: "node_gpu:DCGM_FI_DEV_FB_USED:ratio_max5m",
				Expr: "max_over_time((" + used + ")[5m:1m]) / " + total},
			{Record: "namespace_pod:DCGM_FI_PROF_GR_ENGINE_ACTIVE:avg5m",
				Expr: `avg by (namespace, pod, Hostname, gpu, UUID, GPU_I_ID) (avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + held + `}[5m]))`},
		}},
		{Name: "gpulens-dcgm.gpu", Rules: []Rule{
			alert("GPUAllocatedIdle", "warning",
				fmt.Sprintf(`max by (namespace, pod, Hostname, gpu, UUID, GPU_I_ID) (avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{`+held+`}[1h])) < %v`, idle), heldFor,
				"A pod holds a GPU it does not use.",
				byPod+" has kept "+dcgmOnGPU+fmt.Sprintf(" below %.0f%% busy for ", idle*100)+heldFor+"."),
			alert("SharedGPUMemoryNearlyFull", "warning",
				fmt.Sprintf("%s / %s > %v and on (%s) %s", used, total, c.OOMRisk.WarningRatio, dcgmGPU, dcgmShared), "5m",
				"A shared GPU is close to running out of memory.",
				"Memory of the shared "+dcgmOnGPU+" is {{ $value | humanizePercentage }} used: its tenants' next allocation may fail with out-of-memory."),
			alert("SharedGPUMemoryGrowing", "warning",
				fmt.Sprintf("predict_linear((%s)[1h:1m], %d) - %s > 0 and on (%s) %s", used, int(growthHorizon(c)*3600), total, dcgmGPU, dcgmShared), "15m",
				"A shared GPU's memory grows toward exhaustion.",
				"At the last hour's rate, memory of the shared "+dcgmOnGPU+fmt.Sprintf(" runs out within %vh.", growthHorizon(c))),
			// DCGM has no "up" per GPU; XID 79 is the GPU falling off the bus.
			alert("GPULost", "critical", "max by ("+dcgmGPU+") (DCGM_FI_DEV_XID_ERRORS) == 79", "",
				"A GPU fell off the bus.",
				dcgmOnGPU+" reported XID 79 (fallen off the bus); its pods are failing."),
			// The XID field is a gauge of the last code: changes(), not increase().
			alert("GPUXIDErrors", "warning", "max by ("+dcgmGPU+") (changes(DCGM_FI_DEV_XID_ERRORS[10m])) > 0", "",
				"A GPU reported XID errors.",
				dcgmOnGPU+" reported a new XID error in the last 10 minutes."),
			alert("GPUThermalThrottling", "warning",
				fmt.Sprintf("avg_over_time((floor(max by (%s) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) / 32) %% 4 > bool 0)[1h:1m]) > %v", dcgmGPU, c.Thermal.MinRatio), "15m",
				"A GPU slows down because it is too hot.",
				dcgmOnGPU+" was thermally throttled {{ $value | humanizePercentage }} of the last hour."),
			alert("GPUPowerThrottling", "info",
				fmt.Sprintf("avg_over_time((floor(max by (%s) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) / 8) %% 2 + floor(max by (%s) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) / 128) %% 2 > bool 0)[1h:1m]) > %v", dcgmGPU, dcgmGPU, c.Thermal.MinRatio), "15m",
				"A GPU slows down for a hardware power limit.",
				dcgmOnGPU+" was slowed down by the hardware (power brake or slowdown) {{ $value | humanizePercentage }} of the last hour."),
			alert("GPUECCUncorrectable", "critical", "max by ("+dcgmGPU+") (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m])) > 0", "",
				"A GPU had uncorrectable ECC errors.",
				dcgmOnGPU+" had uncorrectable ECC errors in the last 10 minutes."),
			alert("GPURowRemapFailed", "critical", "max by ("+dcgmGPU+") (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0", "",
				"A GPU could not remap a failing memory row.",
				"A row remap failed on "+dcgmOnGPU+": the GPU should be replaced."),
		}},
		{Name: "gpulens-dcgm.exporter", Rules: []Rule{
			alert("ExporterDown", "critical",
				`up{job=~".*dcgm.*"} == 0 or (up == 0 and on (job, instance) last_over_time(DCGM_FI_DEV_XID_ERRORS[1h]))`, "5m",
				"Prometheus cannot scrape dcgm-exporter.",
				"{{ $labels.instance }} of job {{ $labels.job }} has been down for 5 minutes: its node's GPUs are not monitored."),
			// dcgm-exporter keeps serving its last values when DCGM stops
			// updating; the power reading stops changing first.
			alert("ExporterStale", "warning", "max by ("+dcgmGPU+") (changes(DCGM_FI_DEV_POWER_USAGE[15m])) == 0", "15m",
				"dcgm-exporter serves old data.",
				"The power reading of "+dcgmOnGPU+" has not changed for 15 minutes: DCGM is probably not updating."),
		}},
		findingsGroup(),
	}}
}
