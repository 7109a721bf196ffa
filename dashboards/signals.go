package dashboards

import (
	"fmt"

	"github.com/gpulens/gpulens/signals"
	metric "github.com/gpulens/gpulens/signals/native"
)

// chart are the series a dashboard charts, as PromQL over one schema's
// metrics. Every expression returns the normalised labels node, gpu, uuid
// and model (plus gpu_instance and mig_profile for MIG instances, and
// namespace, pod, container and sharing for allocations), whatever the
// schema calls them, so that the dashboards' legends and groupings are the
// same on both. Expressions carry the dashboard variables in their
// selectors ($cluster, $node, $namespace, $pod).
type chart interface {
	// schema is the --schema name, used in file names and uids.
	schema() string
	// clusterValues, nodeValues, namespaceValues and podValues are the
	// variables' queries: label_values(), or query_result() of an
	// expression with the normalised label (see queryVar).
	clusterValues() string
	nodeValues() string
	namespaceValues() string
	podValues() string
	// note is a sentence for the description of a panel that reads the
	// signal ("sm_active", "sm_occupancy", "throttle", "ecc"), where the
	// exporter's default configuration does not emit it; else "".
	note(signal string) string
	// gpus is 1 per physical GPU that answers.
	gpus() string
	// gpuUtil is each physical GPU's load: the device's utilization, or on
	// MIG the slices' activity weighted by their compute share.
	gpuUtil() string
	migUtil() string
	// prof is a GPM/DCGM profiling ratio per GPU: sm_active,
	// sm_occupancy, tensor_active, dram_active.
	prof(field string) string
	// migProf is the same ratio per MIG instance, of the instance.
	migProf(field string) string
	memUsed() string
	memTotal() string
	migMemUsed() string
	migMemTotal() string
	power() string
	temperature() string
	// clock has a clock label, sm or memory, in hertz.
	clock() string
	// throttle is 1 per GPU and active clocks-event reason (label reason).
	throttle() string
	// xidEvents is the number of XID events per GPU (label xid) in
	// $__rate_interval.
	xidEvents() string
	// eccUncorrected is uncorrectable ECC errors per GPU in
	// $__rate_interval.
	eccUncorrected() string
	remappedRows() string
	remapFailed() string
	// alloc is each container's share of the physical GPU it holds.
	alloc() string
	// used is alloc times the container's measured use of it: its fraction
	// of the physical GPU.
	used() string
	// podMemUsed is the memory each container uses on its GPU.
	podMemUsed() string
}

// Common labels of per-GPU results.
const gpuBy = "node, gpu, uuid, model"

// schemas are the two sets of dashboards, by --schema name.
var schemas = map[string]chart{
	"native":        native{},
	"dcgm-exporter": dcgmSignals{},
}

// Schemas lists the accepted --schema names.
func Schemas() []string { return []string{"native", "dcgm-exporter"} }

type native struct{}

const (
	nativeDev = `cluster=~"$cluster", node=~"$node"`
	nativePod = nativeDev + `, namespace=~"$namespace", pod=~"$pod"`
)

func ndev(metric string, extra ...string) string {
	m := nativeDev
	for _, e := range extra {
		m += ", " + e
	}
	return metric + "{" + m + "}"
}

func npod(metric string) string { return metric + "{" + nativePod + "}" }

func (native) schema() string        { return "native" }
func (native) clusterValues() string { return "label_values(" + metric.GPUInfo + ", cluster)" }
func (native) nodeValues() string {
	return `label_values(` + metric.GPUInfo + `{cluster=~"$cluster"}, node)`
}
func (native) namespaceValues() string {
	return `label_values(` + metric.ContainerGPUAllocationRatio + `{cluster=~"$cluster", node=~"$node"}, namespace)`
}
func (native) podValues() string {
	return `label_values(` + metric.ContainerGPUAllocationRatio + `{cluster=~"$cluster", node=~"$node", namespace=~"$namespace"}, pod)`
}
func (native) note(string) string { return "" }

// gpus counts the GPUs that answer: a lost GPU is neither allocated nor
// spare capacity, and dcgm-exporter drops its series altogether.
func (native) gpus() string { return "max by (" + gpuBy + ") (" + ndev(metric.GPUUp) + " == 1)" }

// gpuUtil divides a MIG GPU's weighted slices by its own total: as the
// exporter read it from NVML, else (an older exporter) internal/mig's for
// its model (7 on A100 and Hopper, 4 on A30), never a fixed 7.
func (native) gpuUtil() string {
	total := "max by (node, uuid) (" + ndev(metric.GPUMIGComputeSlices) + ") or " +
		signals.MIGTotal(metric.GPUInfo, `cluster=~"$cluster", node=~"$node", mig_mode!="false", `, signals.LabelModel,
			func(s string) string { return s }, signals.LabelNode, signals.LabelUUID)
	return fmt.Sprintf("max by (%s) (%s) or sum by (%s) (%s * %s) / on (node, uuid) group_left () (%s)", gpuBy, ndev(metric.GPUUtilizationRatio),
		gpuBy, ndev(metric.MIGSMActiveRatio), ndev(metric.MIGComputeSlices), total)
}
func (native) migUtil() string          { return ndev(metric.MIGSMActiveRatio) }
func (native) prof(field string) string { return ndev("gpulens_gpu_" + field + "_ratio") }
func (native) migProf(field string) string {
	return ndev("gpulens_mig_" + field + "_ratio")
}
func (native) memUsed() string     { return ndev(metric.GPUMemoryUsedBytes) }
func (native) memTotal() string    { return ndev(metric.GPUMemoryTotalBytes) }
func (native) migMemUsed() string  { return ndev(metric.MIGMemoryUsedBytes) }
func (native) migMemTotal() string { return ndev(metric.MIGMemoryTotalBytes) }
func (native) power() string       { return ndev(metric.GPUPowerWatts) }
func (native) temperature() string { return ndev(metric.GPUTemperatureCelsius) }
func (native) clock() string       { return ndev(metric.GPUClockHertz) }
func (native) throttle() string {
	return ndev(metric.GPUThrottleActive, `reason!~"gpu_idle|applications_clocks_setting|display_clock_setting"`) + " == 1"
}
func (native) xidEvents() string {
	return "increase(" + ndev(metric.GPUXIDErrorsTotal) + "[$__rate_interval])"
}
func (native) eccUncorrected() string {
	return "increase(" + ndev(metric.GPUECCErrorsTotal, `type="uncorrected"`) + "[$__rate_interval])"
}
func (native) remappedRows() string { return ndev(metric.GPURemappedRows) }
func (native) remapFailed() string  { return ndev(metric.GPURowRemapFailed) }
func (native) alloc() string        { return npod(metric.ContainerGPUAllocationRatio) }
func (native) used() string {
	// One utilization series per allocation: method is the only extra label.
	return npod(metric.ContainerGPUAllocationRatio) + " * ignoring (method) " + npod(metric.ContainerGPUUtilizationRatio)
}
func (native) podMemUsed() string { return npod(metric.ContainerGPUMemoryUsedBytes) }
