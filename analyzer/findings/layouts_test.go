package findings

import (
	"path/filepath"
	"testing"

	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
)

// layouts are every way the analyzer is given a fleet's data: gpulens's
// own series (with and without hostPID, through a ServiceMonitor, as a
// backfill without staleness markers) and dcgm-exporter's, in each of
// its pod mappings (one pod per device with a stable or a flapping pod
// label, per-pod copies, the 2025 per-process series with and without
// hostPID), in both host label eras, with its tenants in exported_*
// labels, with the GPU Operator's default counters file, and on an H100
// whose MIG instances have no FB_* rows.
var layouts = func() []mode {
	out := []mode{
		native,
		{schema: schema.Native{}, allocationOnly: true},
		{schema: schema.Native{}, serviceMonitor: true},
		{schema: schema.Native{}, noStaleness: true},
		{schema: schema.Native{}, allocationOnly: true, noStaleness: true},
	}
	dcgmLayouts := []mode{
		{layout: fleet.DCGMNoVirtualGPUs},
		{layout: fleet.DCGMNoVirtualGPUs, flapping: true},
		{layout: fleet.DCGMVirtualGPUs},
		{layout: fleet.DCGMVirtualGPUs2025},
		{layout: fleet.DCGMVirtualGPUs2025, noHostPID: true},
	}
	for _, l := range dcgmLayouts {
		l.schema = schema.DCGM{}
		stock := l
		stock.serviceMonitor, stock.defaultCSV = true, true
		legacy := l
		legacy.legacy = true
		legacyRelabelled := legacy
		legacyRelabelled.serviceMonitor = true
		bare := l
		bare.noMIGMemory, bare.noStaleness = true, true
		stockNoMIG := stock
		stockNoMIG.noMIGMemory = true
		out = append(out, l, stock, legacy, legacyRelabelled, bare, stockNoMIG)
	}
	return out
}()

// TestHealthyInEveryLayout: a healthy fleet gets no warning or critical
// finding in any layout. Its workloads (testdata/layouts/healthy.yaml) are
// a busy trainer on a whole GPU, a well-sized MIG tenant and two inference
// tenants of a time-sliced GPU, none of which has anything to fix; where a
// layout cannot tell a tenant's own use, the analyzer may say so (info),
// never guess a verdict.
func TestHealthyInEveryLayout(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "layouts", "healthy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv := clusterOf(true, "")(s)
	for _, m := range layouts {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			r := runScenario(t, s, m, inv)
			for _, f := range r.Findings {
				if f.Severity != Info {
					t.Errorf("%s %s (pod %q, GPU %s): %s", f.Severity, f.Kind, f.Pod, f.GPUUUID, f.Summary)
				}
			}
			noExporterTenant(t, m, r)
		})
	}
}
