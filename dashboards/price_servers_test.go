package dashboards

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// TestUnknownCostOnServers: on a real Prometheus and a real
// VictoriaMetrics, every dollar figure of the fleet and team dashboards
// of both schemas that holds a GPU of a model without a price is no value,
// and a figure of priced GPUs only is its own dollars. VictoriaMetrics
// drops NaN samples and its sum skips them
// (https://docs.victoriametrics.com/victoriametrics/metricsql/ "NaN"),
// so there a NaN price alone made a team's and the fleet's total the
// priced part, a smaller figure that reads as the whole.
//
// The scenario, constant over two hours (T-2h..T, a sample a minute),
// the dashboards read at T over a one-hour range (60 steps of a minute):
//
//	team vmnan55-a: a1 holds GPU-a (H100, node n1), used 0.25 of it
//	team vmnan55-b: b1 holds GPU-b (vmnan55-X, node n2), used 0.5;
//	                b2 holds GPU-c (H100, node n2), used 0
//	GPU-d (H100, node n1) nobody holds
//
// serve prices the H100 at $2 a GPU-hour and not vmnan55-X. So, at the
// default $gpu_hourly_price (NaN), team a cost 1 GPU × $2 × 1 h = $2 and
// left unused 1 × $2 × (1 - 0.25) = $1.50; team b has no figure (b1's
// model unpriced), nor the fleet's totals; on node n1 alone the fleet
// held $2 an hour (× 730 = $1,460 a month), left $1.50 an hour unused
// ($1,095) and $2 an hour unallocated (GPU-d, $1,460). At a flat $4:
// team b cost $4 + $2 = $6 and left $4 × 0.5 + $2 × 1 = $4 unused; the
// fleet held ($2 + $4 + $2) × 730 = $5,840, left ($1.50 + $4) × 730 =
// $4,015 unused and GPU-d's $1,460 unallocated.
//
// It starts its own servers, as e2e's TestVictoriaMetricsImport does:
// the shared test Prometheus takes no writes, and a store of its own has
// no other test's price series.
func TestUnknownCostOnServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and VictoriaMetrics")
	}
	prom := testenv.LookPath(t, "prometheus")
	promtool := testenv.LookPath(t, "promtool")
	vm := testenv.LookPath(t, "victoria-metrics")
	data := filepath.Join(t.TempDir(), "data.om")
	if err := os.WriteFile(data, []byte(unpricedScenario(dataEnd)), 0o600); err != nil {
		t.Fatal(err)
	}

	// Prometheus: the scenario backfilled as blocks (promtool tsdb
	// create-blocks-from openmetrics), a retention that keeps its date.
	promDir := t.TempDir()
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", data, promDir).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := testenv.FreeAddr(t)
	startProc(t, "http://"+promAddr+"/-/ready", prom, "--config.file="+cfg, "--storage.tsdb.path="+promDir,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+promAddr)

	// VictoriaMetrics: imported as Prometheus text (OpenMetrics'
	// timestamps in seconds, which its parser reads as such), flushed so
	// that it is searchable at once.
	vmAddr := testenv.FreeAddr(t)
	startProc(t, "http://"+vmAddr+"/health", vm, "-storageDataPath="+t.TempDir(), "-httpListenAddr="+vmAddr,
		"-retentionPeriod=100y", "-search.disableCache")
	body, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	httpPost(t, "http://"+vmAddr+"/api/v1/import/prometheus", string(body))
	httpPost(t, "http://"+vmAddr+"/internal/force_flush", "")

	type want struct {
		panel, ref, node, team string
		atNaN, atFlat          float64 // NaN: no value
	}
	unknown := math.NaN()
	wants := []want{
		{"GPU-hours by team", "D", ".*", "vmnan55-a", 2, 2},
		{"GPU-hours by team", "E", ".*", "vmnan55-a", 1.5, 1.5},
		{"GPU-hours by team", "D", ".*", "vmnan55-b", unknown, 6},
		{"GPU-hours by team", "E", ".*", "vmnan55-b", unknown, 4},
		{"Held capacity", "A", ".*", "", unknown, 5840},
		{"Held but unused capacity", "A", ".*", "", unknown, 4015},
		{"Unallocated capacity", "A", ".*", "", unknown, 1460},
		{"Held capacity", "A", "n1", "", 1460, 1460},
		{"Held but unused capacity", "A", "n1", "", 1095, 1095},
		{"Unallocated capacity", "A", "n1", "", 1460, 1460},
	}
	for _, srv := range []struct{ name, url string }{{"prometheus", "http://" + promAddr}, {"victoria-metrics", "http://" + vmAddr}} {
		src, err := source.NewRemote(source.RemoteOptions{URL: srv.url, Timeout: time.Minute, DisableRemoteRead: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = src.Close() })
		// A team's dollars are over the range's steps: 60 minutes on
		// VictoriaMetrics and Prometheus 3, 61 on Prometheus 2, whose
		// subqueries include both ends of the range (Prometheus 3.0's
		// release notes: "left-open" ranges).
		v, err := src.Query(context.Background(), signals.Steps("1h", "1m"), dataEnd)
		if err != nil || len(v) != 1 || (v[0].Value != 60 && v[0].Value != 61) {
			t.Fatalf("%s: steps of an hour: %v %v, want 60 or 61", srv.name, v, err)
		}
		steps := float64(v[0].Value)
		t.Logf("%s: %v steps in an hour's subquery", srv.name, steps)
		for _, schema := range Schemas() {
			fleet, team := panelQueries(t, schema, "gpulens-fleet-"+schema), panelQueries(t, schema, "gpulens-team-"+schema)
			for _, w := range wants {
				qs := fleet
				if w.team != "" {
					qs = team
				}
				expr, ok := qs[w.panel+"/"+w.ref]
				if !ok {
					t.Fatalf("%s: no query %s of %q", schema, w.ref, w.panel)
				}
				expr = strings.ReplaceAll(expr, `"$node"`, strconv.Quote(w.node))
				for _, price := range []struct {
					value string
					want  float64
				}{{unknownPrice, w.atNaN}, {"4", w.atFlat}} {
					if w.team != "" {
						price.want *= steps / 60
					}
					where := fmt.Sprintf("%s, %s: %s %s, node %s, $gpu_hourly_price %s", srv.name, schema, w.panel, w.ref, w.node, price.value)
					v, err := src.Query(context.Background(), substitute(strings.ReplaceAll(expr, "$gpu_hourly_price", price.value)), dataEnd)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					got, found := math.NaN(), false
					for _, s := range v {
						if w.team == "" || string(s.Metric[model.LabelName(signals.LabelNamespace)]) == w.team {
							got, found = float64(s.Value), true
						}
					}
					switch {
					case math.IsNaN(price.want) && found:
						t.Errorf("%s: %s = %v, want no value (a model without a price)", where, w.team, got)
					case !math.IsNaN(price.want) && (!found || math.Abs(got-price.want) > 1e-9*price.want):
						t.Errorf("%s: %s = %v (found %v), want $%v", where, w.team, got, found, price.want)
					}
				}
			}
		}
	}
}

// unpricedScenario is TestUnknownCostOnServers' series in OpenMetrics,
// a sample a minute over the two hours to end: the allocations, their use
// and the GPUs under both schemas' names (gpulens-exporter's; the rule
// file's recordings and dcgm-exporter's frame buffer series), and serve's
// price of the H100.
func unpricedScenario(end time.Time) string {
	type series struct {
		name, labels string
		value        float64
	}
	alloc := func(team, pod, uuid, model, node string) string {
		return fmt.Sprintf(`node=%q,namespace=%q,pod=%q,container="main",uuid=%q,model=%q,sharing="none",gpu="0"`, node, team, pod, uuid, model)
	}
	use := func(team, pod, uuid, model, node string) string {
		return fmt.Sprintf(`node=%q,namespace=%q,pod=%q,container="main",uuid=%q,model=%q,gpu="0"`, node, team, pod, uuid, model)
	}
	gpu := func(uuid, model, node string) string {
		return fmt.Sprintf(`node=%q,uuid=%q,model=%q,gpu="0"`, node, uuid, model)
	}
	// dcgm-exporter's GPUs by its frame buffer series, its labels.
	dcgmGPU := func(uuid, model, node string) string {
		return fmt.Sprintf(`Hostname=%q,UUID=%q,modelName=%q,gpu="0"`, node, uuid, model)
	}
	allocs := func(name string, labels func(team, pod, uuid, model, node string) string, a, b1, b2 float64) []series {
		return []series{
			{name, labels("vmnan55-a", "a1", "GPU-a", "H100", "n1"), a},
			{name, labels("vmnan55-b", "b1", "GPU-b", "vmnan55-X", "n2"), b1},
			{name, labels("vmnan55-b", "b2", "GPU-c", "H100", "n2"), b2},
		}
	}
	gpus := func(name string, labels func(uuid, model, node string) string, v float64) []series {
		return []series{
			{name, labels("GPU-a", "H100", "n1"), v},
			{name, labels("GPU-b", "vmnan55-X", "n2"), v},
			{name, labels("GPU-c", "H100", "n2"), v},
			{name, labels("GPU-d", "H100", "n1"), v},
		}
	}
	// The dcgm-exporter panels read the rule file's recordings of the
	// allocations and their use (recorded), with the labels normalised.
	dcgmRec := recorded["dcgm-exporter"]
	families := [][]series{
		allocs(native.ContainerGPUAllocationRatio, alloc, 1, 1, 1),
		allocs(native.ContainerGPUUtilizationRatio, use, 0.25, 0.5, 0),
		gpus(native.GPUInfo, gpu, 1),
		allocs(dcgmRec.allocation, alloc, 1, 1, 1),
		allocs(dcgmRec.utilization, use, 0.25, 0.5, 0),
		gpus(dcgm.FBUsed, dcgmGPU, 1000),
		{{vocab.SeriesPriceGPUHour, `job="gpulens-serve",model="H100"`, 2}},
	}
	var b strings.Builder
	for _, f := range families {
		fmt.Fprintf(&b, "# TYPE %s gauge\n", f[0].name)
		for _, s := range f {
			for ts := end.Add(-2 * time.Hour); !ts.After(end); ts = ts.Add(time.Minute) {
				fmt.Fprintf(&b, "%s{%s} %v %d\n", s.name, s.labels, s.value, ts.Unix())
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// panelQueries is the dashboard uid's queries by "panel title/ref".
func panelQueries(t *testing.T, schema, uid string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range generatedOnce(t)[schema] {
		if *d.Uid != uid {
			continue
		}
		for _, q := range queries(t, d) {
			out[q.panel+"/"+q.ref] = q.expr
		}
	}
	if len(out) == 0 {
		t.Fatalf("no dashboard %s", uid)
	}
	return out
}

// startProc runs bin until the test ends, once ready answers 200.
func startProc(t *testing.T, ready, bin string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(bin)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("%s not ready at %s:\n%s", bin, ready, out)
		}
	}
}

func httpPost(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
}
