package signals_test

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"testing"
)

// TestQueriesFitVictoriaMetrics: VictoriaMetrics refuses a query longer
// than -search.maxQueryLen, 16 KiB by default. Every expression the
// analysis sends is checked here with the widest window wrapper it gets,
// so that a schema change that outgrows the limit fails here rather than
// against a user's store. `go test ./signals -run FitVictoria -v`
// prints the lengths.
func TestQueriesFitVictoriaMetrics(t *testing.T) {
	const limit = 16 * 1024
	o := signals.Over{Range: "604800s", Step: "60s", Apply: func(fn signals.Fn, e string) string { return signals.Subquery(fn, e, "604799999ms", "60s") }}
	// dcgm.Schema.Fit's tenant fields: a counters file without FB_USED, or
	// trimmed to GR_ENGINE_ACTIVE, reads its tenants from those; counters
	// files that differ between nodes (MixedNames) from any of them.
	// Counters files that differ between nodes, on a store of every
	// name but 4.9's: a store within an upgrade to 4.9 holds both eras'
	// names of the three fields, and its union is longer than the limit
	// (MixedNames).
	mixed := dcgm.Schema{}
	mixed.MixedNames = mixed.MixedNamesOf([]string{dcgm.FBUsed, dcgm.GPUUtil, dcgm.GREngineActive, "dcgm_fb_used", "dcgm_gpu_utilization"})
	for _, s := range []signals.Schema{native.Schema{}, dcgm.Schema{}, dcgm.Schema{TenantField: dcgm.GPUUtil}, dcgm.Schema{TenantField: dcgm.GREngineActive}, mixed} {
		h := s.Health(o)
		exprs := map[string]string{
			"allocation": s.Allocation(), "utilization": s.Utilization(), "memory": s.MemoryUsed(), "gpu": s.GPU(),
			"gpu utilization": s.GPUUtilization(), "gpu memory total": s.GPUMemoryTotal(), "gpu memory used": s.GPUMemoryUsed(),
			"gpu energy": s.GPUEnergy("604800s", "60s"), "gpu attribution": s.GPUAttribution(o), "claims": o.Apply("count_over_time", s.Claims()),
			"down": h.Down, "xid events": h.XIDEvents, "xid raised": h.XIDRaised, "thermal": h.Thermal,
		}
		for name, e := range exprs {
			t.Logf("%s %s: %d bytes", s.Name(), name, len(e))
			if len(e) > limit {
				t.Errorf("%s %s is %d bytes, over VictoriaMetrics' default -search.maxQueryLen of %d", s.Name(), name, len(e), limit)
			}
		}
	}
}
