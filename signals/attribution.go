package signals

import (
	"fmt"
	"time"

	"github.com/gpulens/gpulens/internal/promdur"
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

// Lookback is Prometheus's default lookback delta: how long a series with
// no staleness marker stays visible after its last sample.
const Lookback = 5 * time.Minute

// SustainSteps is how many steps in a row a layout must hold at step to
// count: one more than a series can linger for the lookback.
func SustainSteps(step time.Duration) int { return int(Lookback/step) + 1 }

// SustainRange is the range of SustainSteps steps of step, less a
// millisecond, so that Prometheus 2's closed and Prometheus 3's left-open
// subquery ranges both hold exactly SustainSteps steps.
func SustainRange(step string) string {
	st, err := promdur.Parse(step)
	if err != nil {
		return step // the caller's step is its own PromQL; let the engine say what is wrong
	}
	return fmt.Sprintf("%dms", (time.Duration(SustainSteps(st))*st - time.Millisecond).Milliseconds())
}
