package native

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/signals"
)

// Health implements signals.Schema.
//
// The exporter creates an XID series with its first event, so increase()
// would miss that event; the count is the last value minus the value at
// the window's start, or all of it when the series is new. An exporter
// restart can only make this an undercount (clamped at 0).
//
// A code's counter that grew since the step before, or appeared (its first
// event), is an XID raised at that step. The step before is the last value
// within the hour before it, so that a scrape gap shorter than that is no
// new event. Only the application's codes are raised: XIDRaised exists to
// name the tenant, and a GPU fault's codes are the GPU's.
func (s Schema) Health(o signals.Over) signals.Health {
	xid := s.sel(GPUXIDErrorsTotal)
	var raised []string
	for _, code := range signals.ApplicationXIDs {
		now := s.sel(GPUXIDErrorsTotal, `xid="`+code+`"`)
		before := "last_over_time(" + now + "[1h] offset " + o.Step + ")"
		raised = append(raised, fmt.Sprintf("0 * max by "+s.by(signals.GPUKey)+" ((%[1]s - %[2]s) > 0 or (%[1]s unless %[2]s)) + %[3]s", now, before, code))
	}
	return signals.Health{
		Down: "min by " + s.by(signals.GPUKey) + " (" + s.sel(GPUUp) + ") == bool 0",
		XIDEvents: fmt.Sprintf("sum by "+s.by([]string{"node", "uuid", "xid"})+" (clamp_min(max_over_time(%[1]s[%[2]s]) - (last_over_time(%[1]s[5m] offset %[2]s) or 0 * max_over_time(%[1]s[%[2]s])), 0))",
			xid, o.Range),
		XIDRaised: "max by " + s.by(signals.GPUKey) + " (" + strings.Join(raised, " or ") + ")",
		Thermal:   `max by ` + s.by(signals.GPUKey) + ` (` + s.sel(GPUThrottleActive, `reason=~".*thermal.*"`) + `)`,
	}
}
