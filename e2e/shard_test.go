package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/signals/native"
)

// lowLimit is the sample limit the servers below are started with. On
// the simulated window (3 nodes, 8 GPUs, 6 hours of minutes) the
// unsharded query set needs more in one query on every engine, and a
// shard of one node or one namespace needs less; TestShardsOnLowLimits
// checks both on the embedded engine first, so a change of fixture that
// breaks the premise fails there, not as a puzzling server error.
var lowLimit = envInt("GPULENS_E2E_LOW_LIMIT", 6000)

// vmLimit is VictoriaMetrics'. It counts another thing: the raw samples
// one query reads (before any subquery step), which is below Prometheus's
// points held at once.
var vmLimit = envInt("GPULENS_E2E_VM_LIMIT", 4000)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// tiny is one node per shard, and one namespace split at every workload
// boundary of its pods.
var tiny = query.Sharding{MaxNodes: 1, MaxNamespaces: 1, MaxPods: 1}

// TestShardsOnLowLimits serves the simulated window from a Prometheus
// started with --query.max-samples and a VictoriaMetrics started with
// -search.maxSamplesPerQuery, both at lowLimit: the unsharded analysis
// must be refused with the server's own limit error, and the sharded one
// must give the embedded TSDB's figures (unsharded, no limit), within
// each engine's documented differences (compare).
func TestShardsOnLowLimits(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	vm := testenv.LookPath(t, "victoria-metrics")
	f := simulated(t)
	ctx := context.Background()

	// The premise, on the embedded engine over the same samples.
	low, err := source.OpenEmbedded(filepath.Dir(f.openMetrics)+"/tsdb", source.EmbeddedOptions{ReadOnly: true, MaxSamples: lowLimit})
	if err != nil {
		t.Fatal(err)
	}
	defer low.Close()
	if _, err := query.Analyze(ctx, low, native.Schema{}, fullWindow); err == nil || !strings.Contains(err.Error(), "too many samples") {
		t.Fatalf("embedded engine at %d samples: unsharded analysis gave %v, want the limit error", lowLimit, err)
	}
	if _, err := query.AnalyzeSharded(ctx, low, native.Schema{}, fullWindow, tiny); err != nil {
		t.Fatalf("embedded engine at %d samples: sharded analysis: %v", lowLimit, err)
	}

	t.Run("prometheus", func(t *testing.T) {
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		run(t, time.Minute, promtool, "tsdb", "create-blocks-from", "openmetrics", f.openMetrics, data)
		config := filepath.Join(dir, "prometheus.yml")
		if err := os.WriteFile(config, []byte("global: {evaluation_interval: 1m}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		addr := testenv.FreeAddr(t)
		startServer(t, "prometheus", prometheus, httpURL(addr, "/-/ready"),
			"--config.file="+config, "--storage.tsdb.path="+data, "--web.listen-address="+addr,
			"--storage.tsdb.retention.time=100y", "--query.max-samples="+strconv.Itoa(lowLimit))
		// The server's limit binds its engine; remote read streams chunks
		// under no sample limit (the analysis's own sharding bounds that
		// path), so the engine is asked here.
		shardsOnServer(t, f, remoteEngine(t, httpURL(addr, "")), prometheus2, "query processing would load too many samples into memory")
	})
	t.Run("victoriametrics", func(t *testing.T) {
		addr := testenv.FreeAddr(t)
		startServer(t, "victoria-metrics", vm, httpURL(addr, "/health"),
			"-storageDataPath="+t.TempDir(), "-httpListenAddr="+addr, "-retentionPeriod=100y", "-search.disableCache",
			"-search.maxSamplesPerQuery="+strconv.Itoa(vmLimit))
		body, err := os.ReadFile(f.openMetrics)
		if err != nil {
			t.Fatal(err)
		}
		post(t, httpURL(addr, "/api/v1/import/prometheus"), "text/plain", body)
		post(t, httpURL(addr, "/internal/force_flush"), "text/plain", nil)
		shardsOnServer(t, f, remote(t, httpURL(addr, "")), victoriaMetrics, "maxSamplesPerQuery")
	})
}

func shardsOnServer(t *testing.T, f *fixture, src source.Source, e engine, limitErr string) {
	t.Helper()
	ctx := context.Background()
	for _, w := range []fleet.Window{fullWindow} {
		t.Run(describe(w), func(t *testing.T) {
			if _, err := query.Analyze(ctx, src, native.Schema{}, w); err == nil || !strings.Contains(err.Error(), limitErr) {
				t.Fatalf("%s: unsharded analysis gave %v, want the server's limit error (%q)", e.name, err, limitErr)
			}
			got, err := query.AnalyzeSharded(ctx, src, native.Schema{}, w, tiny)
			if err != nil {
				t.Fatalf("%s: sharded analysis: %v", e.name, err)
			}
			if got.Shards < 4 {
				t.Errorf("%s: %d shards, want one per node and namespace", e.name, got.Shards)
			}
			compareResult(t, f, got, w, e)
		})
	}
}
