package schema

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// Attribution codes: how an exporter's per-tenant series of one GPU relate
// to the device, as GPUAttribution reports them. Higher codes say less
// about which tenant did what; over a window the highest seen holds.
const (
	// AttributionOneTenant: each device series carries at most one pod.
	// On a time-sliced GPU that is one arbitrary tenant (dcgm-exporter
	// without --kubernetes-virtual-gpus): the GPU reads as held whole.
	AttributionOneTenant = 1
	// AttributionPerTenant: each tenant's series are its own processes'
	// (gpulens; dcgm-exporter's 2025 per-process series beside the
	// device's), or its own MIG instance's.
	AttributionPerTenant = 2
	// AttributionCopies: every tenant's series repeat the device's values
	// (dcgm-exporter's --kubernetes-virtual-gpus before 2025): the device
	// total is known, who used it is not.
	AttributionCopies = 3
	// AttributionPerProcess is AttributionPerTenant read from
	// dcgm-exporter's 2025 per-process series, beside the device's.
	AttributionPerProcess = 4
	// AttributionRelabelled is added to the code when the GPU's tenant
	// series came through a ServiceMonitor with honorLabels: false, their
	// tenants in exported_* labels.
	AttributionRelabelled = 10
)

// withRelabelled adds AttributionRelabelled to code, per GPU, where metric
// (its labels normalised by rename) has series with exported_pod.
func withRelabelled(code, metric string, rename func(string) string) string {
	key := by(GPUKey)
	relabelled := "clamp_max(count by " + key + " (" + rename(metric+`{exported_pod!=""}`) + "), 1) * " + itoa(AttributionRelabelled)
	return "(" + code + ") + on " + key + " (" + relabelled + " or 0 * (" + code + "))"
}

// GPUAttribution implements Schema: gpulens measures every tenant itself,
// so only the relabelling varies, and neither needs a step: a range
// selector over the window reads each sample once. (A per-step form, as
// the DCGM schema needs, was the costliest query of a large fleet's
// analysis.)
func (Native) GPUAttribution(o Over) string {
	held := func(matchers string) string {
		return "max_over_time(" + native.ContainerGPUAllocationRatio + matchers + "[" + o.Range + "])"
	}
	return "max by " + by(GPUKey) + " (0 * " + held(`{exported_pod!=""}`) + " + " + itoa(AttributionPerTenant+AttributionRelabelled) +
		" or 0 * " + held("") + " + " + itoa(AttributionPerTenant) + ")"
}

// GPUAttribution implements Schema. Per GPU and step, from FB_USED: a
// device series beside per-pod ones is the 2025 per-process layout; two
// pods or more without one are copies; one pod alone is one tenant. MIG
// instances are each their tenant's own. The window's code is the highest
// that lasted SustainSteps steps in a row: where the data has no staleness
// markers (a backfill, federation, a copy), a pod that ended stays visible
// for the lookback beside the one that replaced it, and one such step must
// not make a whole GPU's week read as copies.
func (d DCGM) GPUAttribution(o Over) string {
	return o.Apply("max_over_time", fmt.Sprintf("min_over_time((%s)[%s:%s])", d.StepAttribution(), sustainRange(o.Step), o.Step))
}

// Lookback is Prometheus's default lookback delta: how long a series with
// no staleness marker stays visible after its last sample.
const Lookback = 5 * time.Minute

// SustainSteps is how many steps in a row a layout must hold at step to
// count: one more than a series can linger for the lookback.
func SustainSteps(step time.Duration) int { return int(Lookback/step) + 1 }

// sustainRange is the range of SustainSteps steps of step, less a
// millisecond, so that Prometheus 2's closed and Prometheus 3's left-open
// subquery ranges both hold exactly SustainSteps steps.
func sustainRange(step string) string {
	d, err := model.ParseDuration(step)
	if err != nil {
		return step // the caller's step is its own PromQL; let the engine say what is wrong
	}
	st := time.Duration(d)
	return fmt.Sprintf("%dms", (time.Duration(SustainSteps(st))*st - time.Millisecond).Milliseconds())
}

// StepAttribution is the attribution code at one step, for readers that
// apply the sustain rule themselves (query's passes, in Go).
func (DCGM) StepAttribution() string {
	key := by(GPUKey)
	pods := "count by " + key + " (count by (node, uuid, namespace, pod) (" + norm(dcgmHeld(dcgm.FBUsed, wholeGPU)) + "))"
	device := "count by " + key + " (" + norm(dcgmDevice(dcgm.FBUsed, wholeGPU)) + ")"
	mig := "count by " + key + " (" + norm(migTenants(anyMIG)) + ")"
	// Written so that each signal is read once (PromQL has no variables,
	// and VictoriaMetrics refuses queries over 16 KiB by default): a held
	// GPU with a device row is per-process, less one (copies) where its
	// pod rows are unmapped; without one, one tenant, plus two (copies)
	// where more than one pod holds it.
	withDevice := fmt.Sprintf("(%d - ((0 * %s + %d) or 0 * %s)) and on %s %s", AttributionPerProcess, unmapped(),
		AttributionPerProcess-AttributionCopies, device, key, pods)
	withoutDevice := fmt.Sprintf("%d + %d * clamp_max(%s - 1, 1)", AttributionOneTenant, AttributionCopies-AttributionOneTenant, pods)
	return withRelabelled(union([]string{
		"(" + withDevice + ") or (" + withoutDevice + ")",
		"0 * " + mig + " + " + itoa(AttributionPerTenant),
	}), dcgm.FBUsed, norm)
}

var itoa = signals.Itoa
