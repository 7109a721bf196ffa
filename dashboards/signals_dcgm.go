package dashboards

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// dcgmSignals reads dcgm-exporter's series through signals/dcgm, the
// same description the analyzer and the rules read: both host label
// spellings, tenants in exported_* under the GPU Operator's honorLabels:
// false (the exporter's own pod is no tenant), XID codes as series of
// their own, and MIG shares from internal/mig's geometry. Every
// expression comes out with the dashboards' labels (node, gpu, uuid,
// model, gpu_instance, mig_profile, namespace, pod, container).
//
// Under --kubernetes-virtual-gpus a shared GPU's device fields repeat on
// every tenant's series, and on MIG the device-wide fields repeat on every
// instance: device panels take the max per GPU, never the sum.
type dcgmSignals struct{}

const mib = 1 << 20

// sel is a field's selection under the dashboards' variables.
func sel(field string, m ...string) dcgm.Sel {
	s := dcgm.On(field, append([]string{`cluster=~"$cluster"`}, m...)...)
	s.Node = "$node"
	return s
}

// ddev is every series of a field, normalised.
func ddev(field string, m ...string) string { return dcgm.Any(sel(field, m...)) }

// dpod is the series of a field that a pod holds, normalised, filtered by
// the namespace and pod variables.
func dpod(field string, m ...string) string {
	s := sel(field, m...)
	s.Namespace, s.Pod = "$namespace", "$pod"
	return dcgm.Norm(dcgm.Tenants(s))
}

// maxGPU collapses repeated device fields onto one series per GPU.
func maxGPU(expr string) string { return "max by (" + gpuBy + ") (" + expr + ")" }

// byPod is the max of a per-pod expression by the pod labels.
func byPod(expr string, extra ...string) string {
	return "max by (" + strings.Join(append([]string{podBy}, extra...), ", ") + ") (" + expr + ")"
}

const (
	migBy = gpuBy + ", gpu_instance, mig_profile"
	podBy = gpuBy + ", gpu_instance, mig_profile, namespace, pod, container"
)

// migGroups is, per slice group of internal/mig, a matcher of its models
// and instances of n slices, with n and the group's total.
func migGroups(each func(matchers string, n, total int) string) []string {
	var out []string
	for _, g := range signals.SliceGroups {
		for _, n := range g.Slices {
			out = append(out, each(dcgm.AnyMIG+", "+dcgm.Profile(n)+", "+signals.ModelIn(dcgm.LabelModel, g), n, g.Total))
		}
	}
	return out
}

func (dcgmSignals) schema() string { return "dcgm-exporter" }

// The variables read the normalised labels, so a node variable lists
// hostname and Hostname alike, and the namespace and pod variables list
// tenants, not the exporter's own pod.
func (dcgmSignals) clusterValues() string { return "label_values(" + dcgm.FBUsed + ", cluster)" }
func (dcgmSignals) nodeValues() string {
	return `query_result(count by (node) (` + dcgm.Any(dcgm.On(dcgm.FBUsed, `cluster=~"$cluster"`)) + `))`
}
func (dcgmSignals) namespaceValues() string {
	s := sel(dcgm.FBUsed)
	return `query_result(count by (namespace) (` + dcgm.Norm(dcgm.Tenants(s)) + `))`
}
func (dcgmSignals) podValues() string {
	s := sel(dcgm.FBUsed)
	s.Namespace = "$namespace"
	return `query_result(count by (pod) (` + dcgm.Norm(dcgm.Tenants(s)) + `))`
}
func (dcgmSignals) gpus() string { return "0 * " + maxGPU(ddev(dcgm.FBUsed)) + " + 1" }
func (dcgmSignals) gpuUtil() string {
	// GPU utilization (dcgm.GPUUtil) is absent on MIG instances (#353): the
	// slices' graphics-engine activity, weighted by their share.
	slices := migGroups(func(m string, n, total int) string {
		return fmt.Sprintf("max by (%s) (%s) * %d / %d", migBy, ddev(dcgm.GREngineActive, m), n, total)
	})
	return maxGPU(ddev(dcgm.GPUUtil, dcgm.WholeGPU)) + " / 100 or sum by (" + gpuBy + ") (" +
		strings.Join(slices, " or ") + ")"
}
func (dcgmSignals) migUtil() string {
	return "max by (" + migBy + ") (" + ddev(dcgm.GREngineActive, dcgm.AnyMIG) + ")"
}

var dcgmProf = map[string]string{
	"sm_active":     dcgm.SMActive,
	"sm_occupancy":  dcgm.SMOccupancy,
	"tensor_active": dcgm.TensorActive,
	"dram_active":   dcgm.DRAMActive,
}

// prof reads the whole GPU's ratio only: on MIG the profiling fields are
// per instance and are charted as such (migProf), never added to the GPU.
func (dcgmSignals) prof(field string) string { return maxGPU(ddev(dcgmProf[field], dcgm.WholeGPU)) }
func (dcgmSignals) migProf(field string) string {
	return "max by (" + migBy + ") (" + ddev(dcgmProf[field], dcgm.AnyMIG) + ")"
}

// noteFields are the fields each noted signal reads.
var noteFields = map[string][]string{
	"sm_active":    {dcgm.SMActive},
	"sm_occupancy": {dcgm.SMOccupancy},
	"throttle":     {dcgm.ClocksEventReasons, dcgm.ClockThrottleReasons},
	"ecc":          {dcgm.ECCDBEVolTotal},
}

func (dcgmSignals) note(signal string) string {
	fields := noteFields[signal]
	if len(fields) == 0 || dcgm.InDefaultCSV(fields[0]) {
		return ""
	}
	return " Needs " + strings.Join(fields, " or ") + ", which the GPU Operator's default counters file (dcp-metrics-included.csv) leaves out: empty on a stock install."
}

func (dcgmSignals) memUsed() string {
	return fmt.Sprintf("%s * %d", maxGPU(ddev(dcgm.FBUsed, dcgm.WholeGPU)), mib)
}
func (dcgmSignals) memTotal() string {
	return fmt.Sprintf("(%s + %s + (%s or 0 * %s)) * %d", maxGPU(ddev(dcgm.FBUsed, dcgm.WholeGPU)),
		"min by ("+gpuBy+") ("+ddev(dcgm.FBFree, dcgm.WholeGPU)+")", maxGPU(ddev(dcgm.FBReserved, dcgm.WholeGPU)),
		maxGPU(ddev(dcgm.FBUsed, dcgm.WholeGPU)), mib)
}
func (dcgmSignals) migMemUsed() string {
	return fmt.Sprintf("max by (%s) (%s) * %d", migBy, ddev(dcgm.FBUsed, dcgm.AnyMIG), mib)
}
func (dcgmSignals) migMemTotal() string {
	return fmt.Sprintf("(max by (%[1]s) (%[2]s) + min by (%[1]s) (%[3]s)) * %[4]d", migBy, ddev(dcgm.FBUsed, dcgm.AnyMIG),
		ddev(dcgm.FBFree, dcgm.AnyMIG), mib)
}
func (dcgmSignals) power() string       { return maxGPU(ddev(dcgm.PowerUsage)) }
func (dcgmSignals) temperature() string { return maxGPU(ddev(dcgm.GPUTemp)) }
func (dcgmSignals) clock() string {
	return fmt.Sprintf(`label_replace(%s, "clock", "sm", "", "") * 1e6 or label_replace(%s, "clock", "memory", "", "") * 1e6`,
		maxGPU(ddev(dcgm.SMClock)), maxGPU(ddev(dcgm.MemClock)))
}

// throttleBits are NVML's clocks-event reasons that cost performance.
var throttleBits = []struct {
	reason string
	bit    int
}{
	{"sw_power_cap", dcgm.ThrottleSWPowerCap}, {"hw_slowdown", dcgm.ThrottleHWSlowdown}, {"sw_thermal_slowdown", dcgm.ThrottleSWThermal},
	{"hw_thermal_slowdown", dcgm.ThrottleHWThermal}, {"hw_power_brake_slowdown", dcgm.ThrottleHWPowerBrake},
}

func (dcgmSignals) throttle() string {
	reasons := dcgm.ThrottleReasons(`cluster=~"$cluster"`)
	var hosts []string
	for _, h := range dcgm.HostLabels {
		hosts = append(hosts, reasons[:len(reasons)-1]+`, `+h+`=~"$node"}`)
	}
	bits := maxGPU(dcgm.Norm("(" + strings.Join(hosts, " or ") + ")"))
	var parts []string
	for _, b := range throttleBits {
		parts = append(parts, fmt.Sprintf(`label_replace(floor(%s / %d) %% 2 == 1, "reason", %q, "", "")`, bits, b.bit, b.reason))
	}
	return strings.Join(parts, " or ")
}

// xidEvents: the XID field is the last code seen, one series per code
// (err_code) on current releases: aggregated per GPU, a change to a
// non-zero code is an event. The code is the value; the series is
// labelled xid="any".
func (dcgmSignals) xidEvents() string {
	return fmt.Sprintf(`label_replace(sum_over_time((%s)[$__rate_interval:1m]), "xid", "any", "", "")`,
		dcgm.XIDEvent(sel(dcgm.XIDErrors), "1m", strings.Split(gpuBy, ", ")...))
}
func (dcgmSignals) eccUncorrected() string {
	return "increase((" + maxGPU(ddev(dcgm.ECCDBEVolTotal)) + ")[$__rate_interval:1m])"
}
func (dcgmSignals) remappedRows() string {
	return fmt.Sprintf(`label_replace(%s, "type", "uncorrectable", "", "") or label_replace(%s, "type", "correctable", "", "")`,
		maxGPU(ddev(dcgm.UncorrectableRemappedRows)), maxGPU(ddev(dcgm.CorrectableRemappedRows)))
}
func (dcgmSignals) remapFailed() string { return maxGPU(ddev(dcgm.RowRemapFailure)) }

// alloc: dcgm-exporter has no allocation series. A pod on a MIG instance
// holds its profile's share of its model's slices (internal/mig); pods
// sharing a whole GPU split it evenly, since the replica count is unknown
// (docs/ARCHITECTURE.md, dcgm-exporter clusters).
func (dcgmSignals) alloc() string {
	pods := byPod(dpod(dcgm.FBUsed, dcgm.WholeGPU))
	parts := migGroups(func(m string, n, total int) string {
		return signals.SetLabel(fmt.Sprintf("0 * %s + %d / %d", byPod(dpod(dcgm.FBUsed, m)), n, total), signals.LabelSharing, signals.SharingMIG)
	})
	share := fmt.Sprintf("(0 * %[1]s + 1) / on (node, uuid) group_left () count by (node, uuid) (%[1]s)", pods)
	parts = append(parts,
		signals.SetLabel(share+" == 1", signals.LabelSharing, signals.SharingNone),
		signals.SetLabel(share+" < 1", signals.LabelSharing, signals.SharingTimeSlicing))
	return byPod(strings.Join(parts, " or "), "sharing")
}

// used: on a shared GPU DCGM copies the device's utilization to every
// tenant; times the even share, the tenants together add up to the device.
func (d dcgmSignals) used() string {
	util := byPod(dpod(dcgm.GPUUtil, dcgm.WholeGPU)) + " / 100 or " + byPod(dpod(dcgm.GREngineActive, dcgm.AnyMIG))
	return d.alloc() + " * on (" + podBy + ") group_left () (" + util + ")"
}
func (dcgmSignals) podMemUsed() string {
	return fmt.Sprintf("%s * %d", byPod(dpod(dcgm.FBUsed)), mib)
}
