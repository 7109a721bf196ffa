package e2e

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/internal/testenv"
)

// prometheus2 is Debian's Prometheus 2.42 against the embedded engine (the
// prometheus/prometheus module, Prometheus 3). Both run the same PromQL
// code paths on the same float64 samples, and the HTTP API writes floats
// so that they parse back to the same bits, so figures are equal, not
// close, but for one function that Prometheus 3 reimplemented. The differences are all at the edges of ranges:
var prometheus2 = engine{
	name: "prometheus 2.42",
	// Prometheus 2's lookback is the closed [t-5m, t]: a series that ends
	// without a staleness marker is still returned at the 5 steps after
	// its last sample (Prometheus 3's is left-open, (t-5m, t]: 4 steps).
	afterEnd: int(5 * time.Minute / step),
	rel:      0,
	relOf: map[string]float64{
		// avg_over_time: Prometheus 2 keeps a running mean, Prometheus 3
		// a compensated (Kahan) sum divided by the count; a few ulps.
		"AvgUtilization": 1e-14,
	},
	energy: func(t *testing.T, e energyFacts, got float64) {
		t.Helper()
		// Prometheus 2's range selectors are closed, so increase() over the
		// window also sees the sample at its start. A counter with samples
		// at both ends is then not extrapolated at all: the figure is
		// exactly the counter's delta. Prometheus 3 sees the first sample a
		// step later and extrapolates back to the start. Where the counter
		// ended inside the window, both extrapolate, differently.
		if e.whole {
			if got != e.delta {
				t.Errorf("%s: EnergyJoules = %v, want the exact counter delta %v (embedded, extrapolated: %v)",
					e.name, got, e.delta, e.embedded)
			}
			return
		}
		if d := math.Abs(got - e.embedded); d > e.maxStep {
			t.Errorf("%s: EnergyJoules = %v, embedded %v: %v apart, more than one step's energy %v",
				e.name, got, e.embedded, d, e.maxStep)
		}
	},
}

// TestPrometheusBackfill backfills the exported window with promtool,
// serves it with a real Prometheus and checks that the analysis through
// its HTTP API gives the embedded figures.
func TestPrometheusBackfill(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	t.Parallel()
	f := simulated(t)

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	run(t, time.Minute, promtool, "tsdb", "create-blocks-from", "openmetrics", f.openMetrics, data)
	config := filepath.Join(dir, "prometheus.yml")
	// No scrape jobs: the server only serves the backfilled blocks.
	if err := os.WriteFile(config, []byte("global: {evaluation_interval: 1m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	startServer(t, "prometheus", prometheus, httpURL(addr, "/-/ready"),
		"--config.file="+config,
		"--storage.tsdb.path="+data,
		"--web.listen-address="+addr,
		// Retention counts back from the newest block, not from now, but
		// an explicit one keeps a future default from deleting the
		// fixed-date blocks.
		"--storage.tsdb.retention.time=100y",
	)
	src := remote(t, httpURL(addr, ""))
	promql := remoteEngine(t, httpURL(addr, ""))
	checkFirstSample(t, src, 2*time.Hour)
	for _, w := range []fleet.Window{fullWindow, liveWindow} {
		t.Run(describe(w), func(t *testing.T) {
			// Through remote read (streamed XOR chunks), the passes
			// evaluated here by Prometheus 2's rules; then through its
			// engine alone. Both must give the server's figures.
			res := analyze(t, src, w)
			if res.RawPasses == 0 || res.RawPasses != res.Passes {
				t.Errorf("%d of %d passes read through remote read, want all", res.RawPasses, res.Passes)
			}
			compareResult(t, f, res, w, prometheus2)
			res = analyze(t, promql, w)
			if res.RawPasses != 0 {
				t.Errorf("%d passes read through remote read with it disabled", res.RawPasses)
			}
			compareResult(t, f, res, w, prometheus2)
		})
	}
}
