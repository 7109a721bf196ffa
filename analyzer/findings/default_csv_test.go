package findings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// TestStockCountersFile: a stock GPU Operator install emits only its
// default counters file (dcp-metrics-included.csv), which leaves the
// throttle reasons out. The gpu-errors scenario's thermal throttling is
// then not in the data: the report must say the thermal rule could not
// run, and which fields it needs, rather than report no throttling. The
// other planted problems (the XIDs, the lost GPU) stay found.
func TestStockCountersFile(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "scenarios", "gpu-errors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	full := runScenario(t, s, dcgmOnePod, nil)
	m := dcgmOnePod
	m.defaultCSV = true
	stock := runScenario(t, s, m, nil)
	skipped := strings.Join(stock.Skipped, "\n")
	if !strings.Contains(skipped, string(vocab.KindThermal)+": needs DCGM_FI_DEV_CLOCKS_EVENT_REASONS or DCGM_FI_DEV_CLOCK_THROTTLE_REASONS") {
		t.Errorf("skipped %q: want the thermal rule, naming its fields", stock.Skipped)
	}
	for _, f := range stock.Findings {
		if f.Kind == vocab.KindThermal {
			t.Errorf("a thermal finding without throttle data: %s", f.Summary)
		}
	}
	for _, f := range full.Findings {
		if f.Kind == vocab.KindThermal {
			continue
		}
		found := false
		for _, g := range stock.Findings {
			found = found || (g.Kind == f.Kind && g.GPUUUID == f.GPUUUID && g.Workload == f.Workload)
		}
		if !found {
			t.Errorf("%s on %s %s is lost with the default counters file", f.Kind, f.GPUUUID, f.Workload)
		}
	}
}
