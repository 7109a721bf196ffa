package native

import (
	"github.com/gpulens/gpulens/signals"
)

// GPUAttribution implements signals.Schema: gpulens measures every tenant itself,
// so only the relabelling varies, and neither needs a step: a range
// selector over the window reads each sample once. (A per-step form, as
// the DCGM schema needs, was the costliest query of a large fleet's
// analysis.)
func (s Schema) GPUAttribution(o signals.Over) string {
	held := func(matchers ...string) string {
		return "max_over_time(" + s.sel(ContainerGPUAllocationRatio, matchers...) + "[" + o.Range + "])"
	}
	return "max by " + s.by(signals.GPUKey) + " (0 * " + held(`exported_pod!=""`) + " + " + itoa(signals.AttributionPerTenant+signals.AttributionRelabelled) +
		" or 0 * " + held() + " + " + itoa(signals.AttributionPerTenant) + ")"
}
