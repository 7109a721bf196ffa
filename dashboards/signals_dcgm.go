package dashboards

import (
	"fmt"
	"strings"
)

// dcgm reads dcgm-exporter's series (its default counters plus the
// profiling and ECC fields of its dcp-metrics-included.csv), as the GPU
// Operator deploys it with the Kubernetes pod mapping on.
//
// Labels are normalised with label_replace: Hostname (or hostname, as
// some versions spell it) becomes node, UUID uuid, modelName model,
// GPU_I_ID and GPU_I_PROFILE gpu_instance and mig_profile. When Prometheus
// scrapes dcgm-exporter without honor_labels, its own pod's labels take
// pod and namespace, and the workload's move to exported_pod and
// exported_namespace: those win when present, and the variables filter on
// whichever the series has.
//
// Under --kubernetes-virtual-gpus a shared GPU's device fields repeat on
// every tenant's series, and on MIG the device-wide fields repeat on every
// instance: device panels take the max per GPU, never the sum.
type dcgm struct{}

const dcgmDev = `cluster=~"$cluster", Hostname=~"$node"`

const mib = 1 << 20

// normalise renames dcgm-exporter's labels to the dashboards' ones.
func normalise(expr string) string {
	for _, r := range [][2]string{
		{"node", "Hostname"}, {"node", "hostname"}, {"uuid", "UUID"}, {"model", "modelName"},
		{"gpu_instance", "GPU_I_ID"}, {"mig_profile", "GPU_I_PROFILE"},
		{"pod", "exported_pod"}, {"namespace", "exported_namespace"}, {"container", "exported_container"},
	} {
		// (.+): an absent source label must not blank a target set by the
		// other spelling.
		expr = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, "(.+)")`, expr, r[0], r[1])
	}
	return expr
}

func ddev(metric string, extra ...string) string {
	return normalise(metric + "{" + strings.Join(append([]string{dcgmDev}, extra...), ", ") + "}")
}

// dpod selects the series of devices a pod holds, with the pod and
// namespace either as dcgm-exporter set them or moved to exported_* by
// the scrape. Without honor_labels a device no pod holds carries the
// exporter's own pod (the scrape target's) in pod: notExporterPod keeps
// it from reading as allocated. The labels are left as stored: callers
// aggregate by rawPod and normalise once (byPod).
func dpod(metric string, extra ...string) string {
	m := strings.Join(append([]string{dcgmDev}, extra...), ", ")
	return fmt.Sprintf(`(%[1]s{%[2]s, exported_pod!="", exported_pod=~"$pod", exported_namespace=~"$namespace"} or %[1]s{%[2]s, exported_pod="", pod!="", %[3]s, pod=~"$pod", namespace=~"$namespace"})`, metric, m, notExporterPod)
}

// rawPod are dcgm-exporter's names, in every spelling, of the labels
// podBy normalises: pod expressions aggregate by them and are normalised
// once at the end, which keeps them a fraction of the size of normalising
// every selector (the allocation alone has seven).
const (
	rawPod    = "Hostname, hostname, gpu, UUID, modelName, GPU_I_ID, GPU_I_PROFILE, namespace, pod, container, exported_namespace, exported_pod, exported_container"
	rawGPUKey = "Hostname, hostname, UUID"
)

func rawMax(expr string) string { return "max by (" + rawPod + ") (" + expr + ")" }

// byPod normalises a raw per-pod expression onto podBy (and extra labels).
func byPod(expr string, extra ...string) string {
	return "max by (" + strings.Join(append([]string{podBy}, extra...), ", ") + ") (" + normalise(expr) + ")"
}

// notExporterPod matches the pod names of dcgm-exporter's DaemonSet, as
// the GPU Operator (nvidia-dcgm-exporter-*) and dcgm-exporter's own chart
// (dcgm-exporter-*) name them.
const notExporterPod = `pod!~"(nvidia-)?dcgm-exporter-.*"`

// maxGPU collapses repeated device fields onto one series per GPU.
func maxGPU(expr string) string { return "max by (" + gpuBy + ") (" + expr + ")" }

const (
	dcgmWhole = `GPU_I_ID=""`
	dcgmMIG   = `GPU_I_ID!=""`
	migBy     = gpuBy + ", gpu_instance, mig_profile"
	podBy     = gpuBy + ", gpu_instance, mig_profile, namespace, pod, container"
)

func (dcgm) schema() string         { return "dcgm-exporter" }
func (dcgm) variableMetric() string { return "DCGM_FI_DEV_FB_USED" }
func (dcgm) nodeLabel() string      { return "Hostname" }
func (dcgm) podMetric() string      { return "DCGM_FI_DEV_FB_USED" }
func (dcgm) gpus() string           { return "0 * " + maxGPU(ddev("DCGM_FI_DEV_FB_USED")) + " + 1" }
func (dcgm) gpuUtil() string {
	// DCGM_FI_DEV_GPU_UTIL is absent on MIG instances (#353): there the
	// slices' graphics-engine activity, weighted by their sevenths.
	var slices []string
	for _, n := range []int{1, 2, 3, 4, 7} {
		slices = append(slices, fmt.Sprintf("max by (%s) (%s) * %d / 7", migBy,
			ddev("DCGM_FI_PROF_GR_ENGINE_ACTIVE", dcgmMIG, fmt.Sprintf(`GPU_I_PROFILE=~"%dg[.].*"`, n)), n))
	}
	return maxGPU(ddev("DCGM_FI_DEV_GPU_UTIL", dcgmWhole)) + " / 100 or sum by (" + gpuBy + ") (" +
		strings.Join(slices, " or ") + ")"
}
func (dcgm) migUtil() string {
	return "max by (" + migBy + ") (" + ddev("DCGM_FI_PROF_GR_ENGINE_ACTIVE", dcgmMIG) + ")"
}

var dcgmProf = map[string]string{
	"sm_active":     "DCGM_FI_PROF_SM_ACTIVE",
	"sm_occupancy":  "DCGM_FI_PROF_SM_OCCUPANCY",
	"tensor_active": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
	"dram_active":   "DCGM_FI_PROF_DRAM_ACTIVE",
}

// prof reads the whole GPU's ratio only: on MIG the profiling fields are
// per instance and are charted as such (migProf), never added to the GPU.
func (dcgm) prof(field string) string { return maxGPU(ddev(dcgmProf[field], dcgmWhole)) }
func (dcgm) migProf(field string) string {
	return "max by (" + migBy + ") (" + ddev(dcgmProf[field], dcgmMIG) + ")"
}
func (dcgm) memUsed() string {
	return fmt.Sprintf("%s * %d", maxGPU(ddev("DCGM_FI_DEV_FB_USED", dcgmWhole)), mib)
}
func (dcgm) memTotal() string {
	return fmt.Sprintf("(%s + %s + (%s or 0 * %s)) * %d", maxGPU(ddev("DCGM_FI_DEV_FB_USED", dcgmWhole)),
		maxGPU(ddev("DCGM_FI_DEV_FB_FREE", dcgmWhole)), maxGPU(ddev("DCGM_FI_DEV_FB_RESERVED", dcgmWhole)),
		maxGPU(ddev("DCGM_FI_DEV_FB_USED", dcgmWhole)), mib)
}
func (dcgm) migMemUsed() string {
	return fmt.Sprintf("max by (%s) (%s) * %d", migBy, ddev("DCGM_FI_DEV_FB_USED", dcgmMIG), mib)
}
func (dcgm) migMemTotal() string {
	return fmt.Sprintf("max by (%[1]s) (%[2]s + %[3]s) * %[4]d", migBy, ddev("DCGM_FI_DEV_FB_USED", dcgmMIG),
		ddev("DCGM_FI_DEV_FB_FREE", dcgmMIG), mib)
}
func (dcgm) power() string       { return maxGPU(ddev("DCGM_FI_DEV_POWER_USAGE")) }
func (dcgm) temperature() string { return maxGPU(ddev("DCGM_FI_DEV_GPU_TEMP")) }
func (dcgm) clock() string {
	return fmt.Sprintf(`label_replace(%s, "clock", "sm", "", "") * 1e6 or label_replace(%s, "clock", "memory", "", "") * 1e6`,
		maxGPU(ddev("DCGM_FI_DEV_SM_CLOCK")), maxGPU(ddev("DCGM_FI_DEV_MEM_CLOCK")))
}

// throttleBits are NVML's clocks-event reasons that cost performance, as
// bits of DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.
var throttleBits = []struct {
	reason string
	bit    int
}{
	{"sw_power_cap", 0x4}, {"hw_slowdown", 0x8}, {"sw_thermal_slowdown", 0x20},
	{"hw_thermal_slowdown", 0x40}, {"hw_power_brake_slowdown", 0x80},
}

func (dcgm) throttle() string {
	var parts []string
	for _, b := range throttleBits {
		parts = append(parts, fmt.Sprintf(`label_replace(floor(%s / %d) %% 2 == 1, "reason", %q, "", "")`,
			maxGPU(ddev("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")), b.bit, b.reason))
	}
	return strings.Join(parts, " or ")
}

// xidEvents: DCGM_FI_DEV_XID_ERRORS is the last XID code seen, a gauge:
// changes() counts new events (increase() would read a code going from
// 13 to 79 as 66 errors). The code itself is only in the value, so the
// series is labelled xid="any".
func (dcgm) xidEvents() string {
	return fmt.Sprintf(`label_replace(changes((%s)[$__rate_interval:1m]), "xid", "any", "", "")`,
		maxGPU(ddev("DCGM_FI_DEV_XID_ERRORS")))
}
func (dcgm) eccUncorrected() string {
	return "increase((" + maxGPU(ddev("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")) + ")[$__rate_interval:1m])"
}
func (dcgm) remappedRows() string {
	return fmt.Sprintf(`label_replace(%s, "type", "uncorrectable", "", "") or label_replace(%s, "type", "correctable", "", "")`,
		maxGPU(ddev("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")), maxGPU(ddev("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS")))
}
func (dcgm) remapFailed() string { return maxGPU(ddev("DCGM_FI_DEV_ROW_REMAP_FAILURE")) }

// alloc: dcgm-exporter has no allocation series. A pod on a MIG instance
// holds its sevenths; pods sharing a whole GPU split it evenly, since the
// replica count is unknown (docs/ARCHITECTURE.md, dcgm-exporter clusters).
func (dcgm) alloc() string {
	pods := rawMax(dpod("DCGM_FI_DEV_FB_USED", dcgmWhole))
	var parts []string
	for _, n := range []int{1, 2, 3, 4, 7} {
		parts = append(parts, fmt.Sprintf(`label_replace(0 * %s + %d / 7, "sharing", "mig", "", "")`,
			rawMax(dpod("DCGM_FI_DEV_FB_USED", dcgmMIG, fmt.Sprintf(`GPU_I_PROFILE=~"%dg[.].*"`, n))), n))
	}
	share := fmt.Sprintf("(0 * %[1]s + 1) / on (%[2]s) group_left () count by (%[2]s) (%[1]s)", pods, rawGPUKey)
	parts = append(parts,
		fmt.Sprintf(`label_replace(%s == 1, "sharing", "none", "", "")`, share),
		fmt.Sprintf(`label_replace(%s < 1, "sharing", "time-slicing", "", "")`, share))
	return byPod(strings.Join(parts, " or "), "sharing")
}

// used: on a shared GPU DCGM copies the device's utilization to every
// tenant; times the even share, the tenants together add up to the device.
func (d dcgm) used() string {
	util := byPod(rawMax(dpod("DCGM_FI_DEV_GPU_UTIL", dcgmWhole)) + " / 100 or " + rawMax(dpod("DCGM_FI_PROF_GR_ENGINE_ACTIVE", dcgmMIG)))
	return d.alloc() + " * on (" + podBy + ") group_left () " + util
}
func (dcgm) podMemUsed() string {
	return fmt.Sprintf("%s * %d", byPod(dpod("DCGM_FI_DEV_FB_USED")), mib)
}
