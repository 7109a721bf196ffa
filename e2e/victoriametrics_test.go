package e2e

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/internal/testenv"
)

// victoriaMetrics is Debian's VictoriaMetrics 1.79 against the embedded
// engine. MetricsQL is not PromQL; on this query set the differences are:
var victoriaMetrics = engine{
	name: "victoria-metrics 1.79",
	// VictoriaMetrics has no fixed lookback: it keeps returning a series
	// for about one scrape interval (estimated from the samples) after its
	// last sample, here one step.
	afterEnd: 1,
	// VictoriaMetrics stores values as decimals of 12 significant digits
	// (a share of 3/7 comes back as 0.428571428571), and sums in another
	// order; every float figure is within 1e-11 of the embedded one.
	rel: 1e-11,
	energy: func(t *testing.T, e energyFacts, got float64) {
		t.Helper()
		// MetricsQL's increase() does not extrapolate: it is the last value
		// minus the last one before the window, the counter's exact delta,
		// where Prometheus extrapolates (up to one step's energy away).
		if d := math.Abs(got - e.delta); d > 1e-11*e.counter {
			t.Errorf("%s: EnergyJoules = %v, want the exact counter delta %v (embedded, extrapolated: %v)",
				e.name, got, e.delta, e.embedded)
		}
	},
}

// TestVictoriaMetricsImport imports the exported window into a fresh
// VictoriaMetrics and checks that the analysis through its Prometheus API
// gives the embedded figures, within the differences above.
//
// It starts its own server rather than using GPULENS_TEST_VICTORIAMETRICS_URL
// so that it owns the data (no series of other runs or tests in the same
// window), its retention and its cache settings.
func TestVictoriaMetricsImport(t *testing.T) {
	vm := testenv.LookPath(t, "victoria-metrics")
	t.Parallel()
	f := simulated(t)

	addr := testenv.FreeAddr(t)
	startServer(t, "victoria-metrics", vm, httpURL(addr, "/health"),
		"-storageDataPath="+t.TempDir(),
		"-httpListenAddr="+addr,
		// VictoriaMetrics drops samples older than its retention counted
		// from now (default one month); the window has a fixed date.
		"-retentionPeriod=100y",
		// The rollup cache would keep answers across imports.
		"-search.disableCache",
	)
	body, err := os.ReadFile(f.openMetrics)
	if err != nil {
		t.Fatal(err)
	}
	// The file has OpenMetrics timestamps, in seconds. The endpoint's
	// documented format is Prometheus text with milliseconds, but its
	// parser reads a timestamp in [-2^31, 2^31) as seconds (OpenMetrics)
	// and multiplies it by 1000: no conversion is needed until 2038. The
	// comparison below fails if the samples land elsewhere in time.
	post(t, httpURL(addr, "/api/v1/import/prometheus"), "text/plain", body)
	// Imported rows are buffered for up to a second before they are
	// searchable; force_flush makes them so now.
	post(t, httpURL(addr, "/internal/force_flush"), "text/plain", nil)

	src := remote(t, httpURL(addr, ""))
	checkFirstSample(t, src, 24*time.Hour)
	for _, w := range []fleet.Window{fullWindow, liveWindow} {
		t.Run(describe(w), func(t *testing.T) {
			// VictoriaMetrics serves no remote read (it refuses the path):
			// every figure comes from its MetricsQL engine.
			res := analyze(t, src, w)
			if res.RawPasses != 0 {
				t.Errorf("%d passes read from raw samples through VictoriaMetrics, which serves no remote read", res.RawPasses)
			}
			compareResult(t, f, res, w, victoriaMetrics)
		})
	}
}
