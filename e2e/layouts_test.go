package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/internal/openmetrics"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// TestDCGMLayoutsOnServers runs the fleet as dcgm-exporter would have
// exposed it in each pod-mapping layout, scraped through a ServiceMonitor
// (exported_* labels and Prometheus's up), into the embedded TSDB and into
// real Prometheus and VictoriaMetrics, and checks that the servers read the
// layout-dependent answers the same way: who holds what at which share,
// how each GPU's tenants are attributed, which XIDs were new, and the
// device's memory. The window ends before any series does, so lookback
// differences do not enter.
func TestDCGMLayoutsOnServers(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	vm := testenv.LookPath(t, "victoria-metrics")
	sc, err := sim.Load(filepath.Join("testdata", "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	end := simStart.Add(2*time.Hour + 50*time.Minute)
	w := fleetmodel.Window{Start: simStart, End: end, Step: step}
	for _, layout := range []fleet.DCGMLayout{fleet.DCGMNoVirtualGPUs, fleet.DCGMVirtualGPUs, fleet.DCGMVirtualGPUs2025} {
		t.Run(layout.String(), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			db, err := source.OpenEmbedded(filepath.Join(dir, "tsdb"), source.EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n atomic.Int64
			if err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: simStart, End: end, Step: step}, func(node string) fleet.Sink {
				tsdb := fleet.NewTSDBSink(ctx, db, &n)
				if layout == fleet.DCGMNoVirtualGPUs {
					// A stock install's flapping pod label: on data without
					// staleness markers, as the servers' backfill is, the
					// rows of the co-tenants labelled before linger for the
					// lookback with older device values, and the device's
					// figure is the highest of them (utilization 1.6% higher
					// here), so the embedded store is written the same way.
					tsdb = tsdb.WithoutStaleness()
				}
				d := fleet.NewDCGMSink(fleet.NewServiceMonitorSink(tsdb, fleet.DCGMTarget(node)))
				d.Layout = layout // a stock install: the one-pod layout's label flaps
				return d
			}); err != nil {
				t.Fatal(err)
			}
			om := filepath.Join(dir, "window.om")
			q, err := db.Querier(simStart.UnixMilli(), end.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(om)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := openmetrics.Write(ctx, out, q, "DCGM_.+|up"); err != nil {
				t.Fatal(err)
			}
			out.Close()
			q.Close()
			want := summarize(t, db, w)

			// Prometheus 2.42 on promtool's blocks.
			data := filepath.Join(dir, "data")
			run(t, time.Minute, promtool, "tsdb", "create-blocks-from", "openmetrics", om, data)
			config := filepath.Join(dir, "prometheus.yml")
			if err := os.WriteFile(config, []byte("global: {evaluation_interval: 1m}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := testenv.FreeAddr(t)
			startServer(t, "prometheus", prometheus, httpURL(addr, "/-/ready"), "--config.file="+config,
				"--storage.tsdb.path="+data, "--web.listen-address="+addr, "--storage.tsdb.retention.time=100y")
			diff(t, "prometheus 2.42", summarize(t, remote(t, httpURL(addr, "")), w), want)

			// VictoriaMetrics 1.79, imported.
			vaddr := testenv.FreeAddr(t)
			startServer(t, "victoria-metrics", vm, httpURL(vaddr, "/health"), "-storageDataPath="+t.TempDir(),
				"-httpListenAddr="+vaddr, "-retentionPeriod=100y", "-search.disableCache")
			body, err := os.ReadFile(om)
			if err != nil {
				t.Fatal(err)
			}
			post(t, httpURL(vaddr, "/api/v1/import/prometheus"), "text/plain", body)
			post(t, httpURL(vaddr, "/internal/force_flush"), "text/plain", nil)
			diff(t, "victoria-metrics 1.79", summarize(t, remote(t, httpURL(vaddr, "")), w), want)
		})
	}
}

// summarize is the layout-dependent part of an analysis, one line per
// allocation and GPU; shares and memory to 9 significant digits
// (VictoriaMetrics stores 12).
func summarize(t *testing.T, src source.Source, w fleetmodel.Window) []string {
	t.Helper()
	res, err := query.Analyze(context.Background(), src, dcgm.Schema{}, w)
	if err != nil {
		t.Fatalf("%s: %v", src.Describe(), err)
	}
	var out []string
	for _, a := range res.Allocations {
		out = append(out, fmt.Sprintf("alloc %s/%s %s %s share=%.9g steps=%d util=%.6g mem=%.9g", a.Namespace, a.Pod, a.UUID, a.Sharing,
			a.Share, a.Steps, a.AvgUtilization, a.PeakMemoryBytes))
	}
	for _, g := range res.GPUs {
		out = append(out, fmt.Sprintf("gpu %s %s attribution=%s xid=%v %v workload-xid=%v %v total=%.9g used-peak=%.9g", g.Node, g.UUID,
			g.Attribution, g.XIDErrors, g.XIDCodes, g.WorkloadXIDErrors, g.WorkloadXIDCodes, g.MemoryTotalBytes, g.MemoryUsedPeakBytes))
	}
	if len(res.Allocations) == 0 || len(res.GPUs) == 0 {
		t.Fatalf("%s: %d allocations, %d GPUs", src.Describe(), len(res.Allocations), len(res.GPUs))
	}
	return out
}

// diff reports the lines of got and want that differ.
func diff(t *testing.T, name string, got, want []string) {
	t.Helper()
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("%s: %s", name, l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("%s lacks (embedded): %s", name, l)
		}
	}
}
