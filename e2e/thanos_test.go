package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// TestThanosQuery runs the analysis through a real Thanos Query in front of
// two clusters' Prometheus servers, one of them an HA pair, as a fleet that
// outgrew one Prometheus is monitored:
//
//	prometheus a/0 ─ sidecar ─┐
//	prometheus a/1 ─ sidecar ─┼─ thanos query --query.replica-label=replica
//	prometheus b   ─ sidecar ─┘
//
// Cluster a is the e2e fleet (testdata/fleet.yaml), backfilled into both
// replicas; cluster b another fleet on other nodes
// (testdata/thanos/cluster-b.yaml). The Prometheus servers carry the
// cluster (and replica) only as external labels, which the sidecars add.
// It checks that
//   - the analysis through Thanos Query gives every GPU and allocation of
//     both clusters with the figures of its own Prometheus analysed alone,
//     so the fleet's GPU-hours are the sum of the two clusters';
//   - the replica, which Thanos serves (dedup=false shows its series),
//     doubles no GPU-hour: deduplication works under every query;
//   - with the cluster dimension (pipeline.Run, --cluster-label cluster),
//     Thanos Query's store holds clusters a and b, each with every row
//     and figure of its own Prometheus analysed alone, named for it, the
//     replica doubling nothing there either; the team-nlp/llm-train both
//     clusters run is two workloads, each with its scenario's GPU-hours
//     (thanos_clusters_test.go);
//   - with only the replica's sidecar stopped, when the answer is whole
//     but warned about, the analysis fails with a
//     *source.PartialResponseError, with the cluster dimension or without;
//   - with only cluster b's sidecar stopped (the replica's restarted),
//     Thanos Query answers "success" with cluster a's series alone and a
//     warning, and the analysis fails the same way instead of reporting
//     cluster a's usage as the fleet's, or, by cluster, a fleet of
//     cluster a alone, whose own queries are whole.
//
// The window is liveWindow, in which no series ends: Debian's Prometheus 2
// and the Prometheus 3 engine inside Thanos Query then agree exactly on
// every hour figure (prometheus_test.go says where they differ).
//
// The analysis without the cluster dimension (query.Analyze) tells the
// clusters apart by their GPUs, which are on different nodes.
func TestThanosQuery(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	thanos := testenv.Env(t, "GPULENS_TEST_THANOS")
	t.Parallel()
	a := simulated(t)
	bOpenMetrics := simulateFleet(t, filepath.Join("testdata", "thanos", "cluster-b.yaml"))

	dir := t.TempDir()
	backfill := func(name, openMetrics string) string {
		data := filepath.Join(dir, name, "data")
		run(t, time.Minute, promtool, "tsdb", "create-blocks-from", "openmetrics", openMetrics, data)
		return data
	}
	aData := backfill("a0", a.openMetrics)
	// The replica holds the same samples, as two Prometheus servers
	// scraping the same targets do (up to scrape timing, which Thanos's
	// deduplication is for).
	a1Data := filepath.Join(dir, "a1", "data")
	if err := os.CopyFS(a1Data, os.DirFS(aData)); err != nil {
		t.Fatal(err)
	}
	bData := backfill("b", bOpenMetrics)

	promA0 := startPrometheus(t, prometheus, "prometheus-a0", aData, `{cluster: a, replica: "0"}`)
	promA1 := startPrometheus(t, prometheus, "prometheus-a1", a1Data, `{cluster: a, replica: "1"}`)
	promB := startPrometheus(t, prometheus, "prometheus-b", bData, `{cluster: b}`)

	sidecars := map[string]*sidecar{}
	for name, prom := range map[string]string{"a0": promA0, "a1": promA1, "b": promB} {
		sidecars[name] = startSidecar(t, thanos, "sidecar-"+name, prom)
	}
	// Strict endpoints: Thanos Query keeps querying a store whose health
	// check fails, so that its failure shows as a warning. A plain
	// --endpoint is dropped from the fan-out a few seconds after it goes
	// down, and the answer is then smaller with nothing to say so.
	var cfg strings.Builder
	cfg.WriteString("endpoints:\n")
	for _, name := range []string{"a0", "a1", "b"} {
		fmt.Fprintf(&cfg, "  - {address: %q, strict: true}\n", sidecars[name].grpc)
	}
	sdConfig := filepath.Join(dir, "endpoints.yaml")
	if err := os.WriteFile(sdConfig, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	qHTTP, qGRPC := testenv.FreeAddr(t), testenv.FreeAddr(t)
	startServer(t, "thanos-query", thanos, httpURL(qHTTP, "/-/ready"),
		"query",
		"--http-address="+qHTTP,
		"--grpc-address="+qGRPC,
		"--endpoint.sd-config-file="+sdConfig,
		"--query.replica-label=replica",
	)
	thanosURL := httpURL(qHTTP, "")
	at := simStart.Add(time.Hour)
	// The sidecars' store info reaches Thanos Query on its first endpoint
	// update; until then a query sees fewer stores.
	deadline := time.Now().Add(time.Minute)
	for {
		n, _, err := apiInstant(thanosURL, "count(group by (cluster, replica) (gpulens_gpu_up))", at, false)
		if err == nil && n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Thanos Query does not see the three Prometheus servers after a minute (last: %v series, %v)", n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The replica is served: without deduplication cluster a's GPUs
	// count twice, with it once, as in cluster a's Prometheus alone.
	gpusA, _, err := apiInstant(promA0, "count(gpulens_gpu_up)", at, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dedup bool
		want  float64
	}{{false, 2 * gpusA}, {true, gpusA}} {
		got, warnings, err := apiInstant(thanosURL, `count(gpulens_gpu_up{cluster="a"})`, at, c.dedup)
		if err != nil || len(warnings) > 0 || got != c.want {
			t.Errorf("Thanos Query, dedup=%v: %v of cluster a's GPUs (warnings %q, err %v), want %v", c.dedup, got, warnings, err, c.want)
		}
	}

	w := liveWindow
	ra := analyze(t, remote(t, promA0), w)
	rb := analyze(t, remote(t, promB), w)
	rq := analyze(t, remote(t, thanosURL), w)
	checkFirstSample(t, remote(t, thanosURL), 2*time.Hour)
	// The Prometheus servers serve remote read, and add their external
	// labels (cluster, replica) to what it sends, which the analysis
	// takes off again; Thanos Query serves none (StoreAPI only), so every
	// figure through it comes from its engine. The comparisons below hold
	// the two paths to each other.
	if ra.RawPasses == 0 || ra.RawPasses != ra.Passes || rb.RawPasses != rb.Passes {
		t.Errorf("raw passes through the clusters' Prometheus: a %d of %d, b %d of %d; want all", ra.RawPasses, ra.Passes, rb.RawPasses, rb.Passes)
	}
	if rq.RawPasses != 0 {
		t.Errorf("%d passes read from raw samples through Thanos Query, which serves no remote read", rq.RawPasses)
	}
	sumA, sumB, sumQ := gpuHours(ra), gpuHours(rb), gpuHours(rq)
	t.Logf("allocated GPU-hours: cluster a %.4f + cluster b %.4f = %.4f; through Thanos Query %.4f", sumA.allocated, sumB.allocated, sumA.allocated+sumB.allocated, sumQ.allocated)
	if sumA.allocated <= 0 || sumB.allocated <= 0 || len(ra.GPUs) == 0 || len(rb.GPUs) == 0 {
		t.Fatalf("each cluster should have allocated GPU-hours and GPUs: a %+v (%d GPUs), b %+v (%d GPUs)", sumA, len(ra.GPUs), sumB, len(rb.GPUs))
	}
	if !closeTo(sumQ.allocated, sumA.allocated+sumB.allocated) || !closeTo(sumQ.reported, sumA.reported+sumB.reported) ||
		!closeTo(sumQ.held, sumA.held+sumB.held) {
		t.Errorf("fleet through Thanos Query %+v, want the clusters' sum: a %+v + b %+v", sumQ, sumA, sumB)
	}
	compareClusters(t, rq, map[string]*fleetmodel.Result{"a": ra, "b": rb})
	// gpulens's analysis with the cluster dimension (--cluster-label
	// cluster): per cluster, the figures of its own Prometheus.
	checkClusterFigures(t, thanosURL, map[string]string{"a": promA0, "b": promB}, w, rq)

	// The replica's store goes down: its twin still has every sample, yet
	// Thanos Query warns for any store that failed, and a client cannot
	// tell a replica's failure from a cluster's, so the analysis fails
	// too (the conservative side; ARCHITECTURE.md).
	gpusB, _, err := apiInstant(promB, "count(gpulens_gpu_up)", at, true)
	if err != nil {
		t.Fatal(err)
	}
	sidecars["a1"].stop()
	n, warnings, err := apiInstant(thanosURL, "count(gpulens_gpu_up)", at, true)
	if err != nil || n != gpusA+gpusB || len(warnings) == 0 {
		t.Fatalf("with the replica's sidecar down, Thanos Query answered %v GPUs with warnings %q (err %v), want all %v and a warning", n, warnings, err, gpusA+gpusB)
	}
	analyzePartial(t, thanosURL, w, sidecars["a1"].grpc)
	pipelinePartial(t, thanosURL, w, sidecars["a1"].grpc)

	// The replica's store comes back, and Thanos Query answers whole
	// again once it has dialled it.
	sidecars["a1"].start()
	deadline = time.Now().Add(time.Minute)
	for {
		n, warnings, err = apiInstant(thanosURL, "count(gpulens_gpu_up)", at, true)
		if err == nil && n == gpusA+gpusB && len(warnings) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the replica's sidecar restarted, Thanos Query answers %v GPUs with warnings %q (err %v), want all %v and none",
				n, warnings, err, gpusA+gpusB)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Cluster b's store goes down, cluster a's both up: Thanos Query
	// still answers, with cluster a's series and a warning, which the
	// analysis must not take for the fleet. By cluster, it must not
	// take it for a fleet of cluster a alone either: a query scoped to
	// cluster a does not reach b's store, whose external labels do not
	// match, and so is whole and unwarned; only the discovery of the
	// clusters, over every store, can tell that b is missing.
	sidecars["b"].stop()
	n, warnings, err = apiInstant(thanosURL, "count(gpulens_gpu_up)", at, true)
	if err != nil || n != gpusA || len(warnings) == 0 {
		t.Fatalf("with cluster b's sidecar down, Thanos Query answered %v GPUs with warnings %q (err %v), want cluster a's %v and a warning", n, warnings, err, gpusA)
	}
	t.Logf("Thanos Query's warning with cluster b down: %q", warnings)
	analyzePartial(t, thanosURL, w, sidecars["b"].grpc)
	pipelinePartial(t, thanosURL, w, sidecars["b"].grpc)
	// The premise that made the check by cluster above worth making:
	// cluster a's own queries cannot see that b's store is down.
	scopedA, err := query.AnalyzeScoped(context.Background(), remote(t, thanosURL), query.Cluster(vocab.DefaultClusterLabel, "a"), native.Schema{}, w, query.Sharding{})
	if err != nil || len(scopedA.GPUs) != len(ra.GPUs) {
		t.Errorf("cluster a alone through Thanos Query with cluster b's store down: err %v, want it whole and unwarned (Thanos Query "+
			"skips the stores whose external labels do not match): the case of a cluster missing from the discovery is then not tested", err)
	}
}

// analyzePartial checks that the analysis of w through Thanos Query at
// url, with the store at addr down, fails with a *source.PartialResponseError
// that names that store.
func analyzePartial(t *testing.T, url string, w fleetmodel.Window, addr string) {
	t.Helper()
	_, err := query.Analyze(context.Background(), remote(t, url), native.Schema{}, w)
	var partial *source.PartialResponseError
	if !errors.As(err, &partial) {
		t.Fatalf("analysis with the store at %s down: err = %v, want a *source.PartialResponseError", addr, err)
	}
	t.Logf("analysis with the store at %s down: %v", addr, err)
	if !strings.Contains(err.Error(), "partial") || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q should say the answer is partial and name the failed store %s", err, addr)
	}
}

// simulateFleet simulates the scenario at path over the fixture's window and
// exports its samples, as buildFixture does for the e2e fleet; it returns
// the OpenMetrics file.
func simulateFleet(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	sc, err := sim.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := source.OpenEmbedded(filepath.Join(dir, "tsdb"), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n atomic.Int64
	err = fleet.Run(ctx, fleet.Options{Scenario: sc, Start: simStart, End: simEnd, Step: step},
		func(string) fleet.Sink { return fleet.NewTSDBSink(ctx, db, &n) })
	if err != nil {
		t.Fatalf("simulating %s: %v", path, err)
	}
	om := filepath.Join(dir, "window.om")
	samples, err := export(ctx, db, om)
	if err != nil || samples == 0 {
		t.Fatalf("exporting %s: %d samples, %v", path, samples, err)
	}
	return om
}

// startPrometheus serves the backfilled data with the external labels
// given (a YAML flow mapping) and returns its URL.
func startPrometheus(t *testing.T, bin, name, data, externalLabels string) string {
	t.Helper()
	config := filepath.Join(filepath.Dir(data), "prometheus.yml")
	if err := os.WriteFile(config, []byte("global: {evaluation_interval: 1m, external_labels: "+externalLabels+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	startServer(t, name, bin, httpURL(addr, "/-/ready"),
		"--config.file="+config,
		"--storage.tsdb.path="+data,
		"--web.listen-address="+addr,
		"--storage.tsdb.retention.time=100y",
	)
	return httpURL(addr, "")
}

type sidecar struct {
	*server
	grpc string
	// start starts it (again, after stop) on the same addresses.
	start func()
}

// startSidecar runs a Thanos sidecar for the Prometheus at promURL: a
// StoreAPI over its TSDB (through remote read) with its external labels.
// Nothing is uploaded.
func startSidecar(t *testing.T, bin, name, promURL string) *sidecar {
	t.Helper()
	httpAddr, grpcAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	s := &sidecar{grpc: grpcAddr}
	s.start = func() {
		t.Helper()
		s.server = startServer(t, name, bin, httpURL(httpAddr, "/-/ready"),
			"sidecar",
			"--prometheus.url="+promURL,
			"--http-address="+httpAddr,
			"--grpc-address="+grpcAddr,
		)
	}
	s.start()
	return s
}

// apiInstant evaluates a query that returns one sample at ts through the HTTP
// API, with Thanos's dedup parameter, and returns its value and the
// answer's warnings. It reads the API itself, not through source.Remote,
// to see what a client that ignores warnings would get.
func apiInstant(baseURL, q string, ts time.Time, dedup bool) (float64, []string, error) {
	v := url.Values{"query": {q}, "time": {fmt.Sprint(ts.Unix())}, "dedup": {fmt.Sprint(dedup)}}
	resp, err := http.Get(baseURL + "/api/v1/query?" + v.Encode())
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
		Warnings []string `json:"warnings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, nil, fmt.Errorf("%s: %s: %w", q, resp.Status, err)
	}
	if body.Status != "success" {
		return 0, body.Warnings, fmt.Errorf("%s: %s", q, body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, body.Warnings, fmt.Errorf("%s: %d samples, want 1", q, len(body.Data.Result))
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		return 0, body.Warnings, fmt.Errorf("%s: value %q: %w", q, s, err)
	}
	return f, body.Warnings, nil
}

type fleetHours struct{ allocated, reported, held float64 }

// gpuHours are a result's fleet totals: GPU-hours allocated (shares ×
// time), hours the GPUs reported, and hours the allocations were held.
func gpuHours(r *fleetmodel.Result) fleetHours {
	var h fleetHours
	for _, g := range r.GPUs {
		h.allocated += g.AllocatedGPUHours
		h.reported += g.ReportedHours
	}
	for _, a := range r.Allocations {
		h.held += a.HeldHours
	}
	return h
}

func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// compareClusters checks that all, an analysis through Thanos Query, has
// every GPU and allocation of each cluster's own analysis, with the same
// hours, and nothing else.
func compareClusters(t *testing.T, all *fleetmodel.Result, clusters map[string]*fleetmodel.Result) {
	t.Helper()
	gpus := map[fleetmodel.GPUKey]fleetmodel.GPU{}
	for _, g := range all.GPUs {
		gpus[g.GPUKey] = g
	}
	allocs := map[fleetmodel.AllocationKey]fleetmodel.Allocation{}
	for _, a := range all.Allocations {
		allocs[a.AllocationKey] = a
	}
	nGPUs, nAllocs := 0, 0
	names := make([]string, 0, len(clusters))
	for name := range clusters {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := clusters[name]
		nGPUs += len(r.GPUs)
		nAllocs += len(r.Allocations)
		for _, want := range r.GPUs {
			got, ok := gpus[want.GPUKey]
			if !ok {
				t.Errorf("cluster %s: GPU %s on %s missing through Thanos Query", name, want.UUID, want.Node)
				continue
			}
			if !closeTo(got.ReportedHours, want.ReportedHours) || !closeTo(got.AllocatedHours, want.AllocatedHours) ||
				!closeTo(got.AllocatedGPUHours, want.AllocatedGPUHours) || !closeTo(got.UnallocatedHours, want.UnallocatedHours) {
				t.Errorf("cluster %s: GPU %s on %s: reported/allocated/GPU-hours/unallocated %v/%v/%v/%v through Thanos Query, %v/%v/%v/%v alone",
					name, want.UUID, want.Node, got.ReportedHours, got.AllocatedHours, got.AllocatedGPUHours, got.UnallocatedHours,
					want.ReportedHours, want.AllocatedHours, want.AllocatedGPUHours, want.UnallocatedHours)
			}
		}
		for _, want := range r.Allocations {
			got, ok := allocs[want.AllocationKey]
			if !ok {
				t.Errorf("cluster %s: allocation %s/%s on %s missing through Thanos Query", name, want.Namespace, want.Pod, want.UUID)
				continue
			}
			if !closeTo(got.AllocatedGPUHours, want.AllocatedGPUHours) || !closeTo(got.HeldHours, want.HeldHours) || got.Share != want.Share {
				t.Errorf("cluster %s: allocation %s/%s: GPU-hours/held/share %v/%v/%v through Thanos Query, %v/%v/%v alone",
					name, want.Namespace, want.Pod, got.AllocatedGPUHours, got.HeldHours, got.Share,
					want.AllocatedGPUHours, want.HeldHours, want.Share)
			}
		}
	}
	if len(all.GPUs) != nGPUs || len(all.Allocations) != nAllocs {
		t.Errorf("Thanos Query: %d GPUs and %d allocations, the clusters alone %d and %d",
			len(all.GPUs), len(all.Allocations), nGPUs, nAllocs)
	}
}
