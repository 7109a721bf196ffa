package signals_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/gpulens/gpulens/analyzer/source"
)

var at = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// loadFixtures opens an embedded TSDB holding the given exposition files
// scraped once at at.
func loadFixtures(t *testing.T, files ...string) *source.Embedded {
	t.Helper()
	e, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	app := e.Appender(context.Background())
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := source.AppendExposition(app, data, "", at); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestByName(t *testing.T) {
	for _, name := range []string{"native", "dcgm-exporter"} {
		s, err := source.SchemaByName(name, nil)
		if err != nil || s.Name() != name {
			t.Errorf("source.SchemaByName(%q) = %v, %v", name, s, err)
		}
	}
	if _, err := source.SchemaByName("dcgm", nil); err == nil || !strings.Contains(err.Error(), "native, dcgm-exporter") {
		t.Errorf("source.SchemaByName(unknown) = %v, want an error listing the schemas", err)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		want    string
		wantErr []string
	}{
		{"native", []string{"testdata/native.prom"}, native.SchemaName, nil},
		{"dcgm-exporter", []string{"testdata/dcgm-exporter.prom"}, dcgm.SchemaName, nil},
		{"both prefers native", []string{"testdata/dcgm-exporter.prom", "testdata/native.prom"}, native.SchemaName, nil},
		{"neither", nil, "", []string{"no GPU metrics in embedded TSDB at ", "gpulens_gpu_info", "DCGM_FI_DEV_FB_USED", "native", "dcgm-exporter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := loadFixtures(t, tt.files...)
			s, err := source.Detect(context.Background(), src, at.Add(-time.Hour), at.Add(time.Hour), nil)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Detect = %s, want an error", s.Name())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil || s.Name() != tt.want {
				t.Fatalf("Detect = %v, %v; want %s", s, err, tt.want)
			}
		})
	}
}

// fixtureWindow is the last five minutes up to the fixtures' one scrape.
var fixtureWindow = signals.Over{Range: "5m", Step: "1m", Apply: func(fn signals.Fn, expr string) string {
	return signals.Subquery(fn, expr, "5m", "1m")
}}

func expressions(s signals.Schema) map[string]string {
	return map[string]string{
		"Allocation": s.Allocation(), "Utilization": s.Utilization(), "MemoryUsed": s.MemoryUsed(),
		"GPU": s.GPU(), "GPUUtilization": s.GPUUtilization(), "GPUMemoryTotal": s.GPUMemoryTotal(),
		"GPUEnergy": s.GPUEnergy("1h", "1m"), "GPUAttribution": s.GPUAttribution(fixtureWindow),
	}
}

func TestExpressionsParse(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for _, s := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
		for name, expr := range expressions(s) {
			e, err := p.ParseExpr(expr)
			if err != nil {
				t.Errorf("%s.%s does not parse: %v\n%s", s.Name(), name, err, expr)
				continue
			}
			if e.Type() != parser.ValueTypeVector {
				t.Errorf("%s.%s is a %s, want an instant vector", s.Name(), name, e.Type())
			}
		}
	}
}

// row renders a sample as its normalised labels and value, for comparison.
type row struct {
	labels string
	value  float64
}

func query(t *testing.T, src source.Source, expr string, keep []string) []row {
	t.Helper()
	vec, err := src.Query(context.Background(), expr, at)
	if err != nil {
		t.Fatalf("%v\n%s", err, expr)
	}
	var rows []row
	for _, s := range vec {
		var parts []string
		for _, k := range keep {
			if v := s.Metric[model.LabelName(k)]; v != "" {
				parts = append(parts, k+"="+string(v))
			}
		}
		if len(parts) != len(s.Metric) {
			t.Errorf("series %v has labels beyond %v", s.Metric, keep)
		}
		rows = append(rows, row{strings.Join(parts, ","), float64(s.Value)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].labels < rows[j].labels })
	return rows
}

// TestSchemasAgree evaluates both schemas over the same fleet, as each
// exporter reports it, and expects identical normalised answers.
func TestSchemasAgree(t *testing.T) {
	nativeSrc := loadFixtures(t, "testdata/native.prom")
	dcgmSrc := loadFixtures(t, "testdata/dcgm-exporter.prom")
	signals := []struct {
		name string
		expr func(signals.Schema) string
		keep []string
	}{
		{"allocation", signals.Schema.Allocation, signals.AllocationLabels},
		{"utilization", signals.Schema.Utilization, signals.UsageLabels},
		{"memory used", signals.Schema.MemoryUsed, signals.UsageLabels},
		{"gpu", signals.Schema.GPU, signals.GPULabels},
		{"gpu utilization", signals.Schema.GPUUtilization, signals.GPULabels},
		{"gpu memory total", signals.Schema.GPUMemoryTotal, signals.GPULabels},
	}
	for _, sig := range signals {
		t.Run(sig.name, func(t *testing.T) {
			n := query(t, nativeSrc, sig.expr(native.Schema{}), sig.keep)
			d := query(t, dcgmSrc, sig.expr(dcgm.Schema{}), sig.keep)
			if len(n) == 0 || len(n) != len(d) {
				t.Fatalf("native %d series, dcgm-exporter %d:\nnative: %v\ndcgm:   %v", len(n), len(d), n, d)
			}
			for i := range n {
				if n[i].labels != d[i].labels || math.Abs(n[i].value-d[i].value) > 1e-9 {
					t.Errorf("native %v != dcgm-exporter %v", n[i], d[i])
				}
			}
		})
	}
}

func TestDCGMAllocation(t *testing.T) {
	src := loadFixtures(t, "testdata/dcgm-exporter.prom")
	got := map[string]row{}
	for _, r := range query(t, src, dcgm.Schema{}.Allocation(), signals.AllocationLabels) {
		for _, part := range strings.Split(r.labels, ",") {
			if pod, ok := strings.CutPrefix(part, "pod="); ok {
				got[pod] = r
			}
		}
	}
	want := []struct {
		pod, sharing, profile string
		share                 float64
	}{
		{"trainer-0", "none", "", 1},
		{"inference-a", "time-slicing", "", 0.5},
		{"inference-b", "time-slicing", "", 0.5},
		{"mig-a", "mig", "3g.40gb", 3.0 / 7},
		{"mig-b", "mig", "2g.20gb", 2.0 / 7},
		{"mig-c", "mig", "1g.10gb", 1.0 / 7},
		// A30 has 4 compute slices.
		{"a30-a", "mig", "2g.12gb", 2.0 / 4},
		{"a30-b", "mig", "1g.6gb", 1.0 / 4},
	}
	if len(got) != len(want) {
		t.Errorf("got %d allocations, want %d (the unallocated GPU is none): %v", len(got), len(want), got)
	}
	for _, w := range want {
		r, ok := got[w.pod]
		if !ok {
			t.Errorf("no allocation for pod %s", w.pod)
			continue
		}
		if math.Abs(r.value-w.share) > 1e-12 || !strings.Contains(r.labels, "sharing="+w.sharing) ||
			(w.profile != "" && !strings.Contains(r.labels, "mig_profile="+w.profile)) {
			t.Errorf("pod %s: %v, want share %v, sharing %s, profile %q", w.pod, r, w.share, w.sharing, w.profile)
		}
	}
}

func TestDCGMHostnameSpellings(t *testing.T) {
	src := loadFixtures(t, "testdata/dcgm-exporter.prom")
	rows := query(t, src, dcgm.Schema{}.GPU(), signals.GPULabels)
	var nodes []string
	for _, r := range rows {
		nodes = append(nodes, strings.Split(r.labels, ",")[0])
	}
	// node-1 spells it Hostname, node-2 hostname.
	if strings.Join(nodes, " ") != "node=node-1 node=node-1 node=node-1 node=node-2 node=node-3" {
		t.Errorf("GPUs by node = %v", nodes)
	}
}

// TestRelabelledAgree reads each fixture as a prometheus-operator
// ServiceMonitor would have stored it (honorLabels false: exported_* and
// the target's labels; honorLabels true: the target's labels where the
// exporter set none) and expects the same normalised answers as from the
// plain scrape: no GPU is allocated to the exporter's own pod.
func TestRelabelledAgree(t *testing.T) {
	tests := []struct {
		schema          signals.Schema
		plain, scraped  string
		exporterPodName string
	}{
		{native.Schema{}, "testdata/native.prom", "testdata/native.servicemonitor.prom", "gpulens-exporter"},
		{dcgm.Schema{}, "testdata/dcgm-exporter.prom", "testdata/dcgm-exporter.servicemonitor.prom", "nvidia-dcgm-exporter"},
		{dcgm.Schema{}, "testdata/dcgm-exporter.prom", "testdata/dcgm-exporter.honorlabels.prom", "nvidia-dcgm-exporter"},
	}
	for _, tt := range tests {
		t.Run(tt.scraped, func(t *testing.T) {
			plain, scraped := loadFixtures(t, tt.plain), loadFixtures(t, tt.scraped)
			for name, expr := range expressions(tt.schema) {
				if name == "GPUEnergy" {
					continue // increase() needs two scrapes; the fixtures are one
				}
				keep := signals.GPULabels
				switch name {
				case "GPUAttribution":
					keep = signals.GPUKey
				case "Allocation":
					keep = signals.AllocationLabels
				case "Utilization", "MemoryUsed":
					keep = signals.UsageLabels
				}
				want, got := query(t, plain, expr, keep), query(t, scraped, expr, keep)
				if name == "GPUAttribution" && strings.Contains(tt.scraped, "servicemonitor") {
					// The one intended difference: the relabelling is
					// seen, on every GPU a tenant holds.
					for i := range want {
						want[i].value += signals.AttributionRelabelled
					}
				}
				if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(got) {
					t.Errorf("%s:\nplain   %v\nscraped %v", name, want, got)
				}
				for _, r := range got {
					if strings.Contains(r.labels, tt.exporterPodName) {
						t.Errorf("%s names the exporter as a tenant: %v", name, r)
					}
				}
			}
		})
	}
}

// TestDCGMLayouts reads one scrape of each dcgm-exporter pod-mapping
// layout (testdata/layouts.py writes them from dcgm-exporter's code) and
// checks what each lets the schema tell about the time-sliced GPU of
// inference-a and inference-b: 20000 MiB and 50% on the device, of which
// 12000 MiB and 30% are inference-a's processes' and the rest
// inference-b's.
func TestDCGMLayouts(t *testing.T) {
	const shared = "GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e61"
	type tenant struct{ share, util, mem float64 }
	tests := []struct {
		file        string
		attribution float64
		tenants     map[string]tenant
	}{
		// Only the last pod listed is mapped: the GPU reads as held whole.
		{"testdata/dcgm-exporter.no-virtual-gpus.prom", signals.AttributionOneTenant,
			map[string]tenant{"inference-b": {1, 0.5, 20000 * mib}}},
		// Copies: each tenant gets the device's figures.
		{"testdata/dcgm-exporter.prom", signals.AttributionCopies,
			map[string]tenant{"inference-a": {0.5, 0.5, 20000 * mib}, "inference-b": {0.5, 0.5, 20000 * mib}}},
		// Per process: each tenant's own, utilization of its half.
		{"testdata/dcgm-exporter.virtual-gpus-2025.prom", signals.AttributionPerProcess,
			map[string]tenant{"inference-a": {0.5, 0.6, 12000 * mib}, "inference-b": {0.5, 0.4, 8000 * mib}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src := loadFixtures(t, tt.file)
			values := func(expr string, keep []string) map[string]float64 {
				out := map[string]float64{}
				for _, r := range query(t, src, expr, keep) {
					if !strings.Contains(r.labels, shared) {
						continue
					}
					pod := ""
					for _, part := range strings.Split(r.labels, ",") {
						if p, ok := strings.CutPrefix(part, "pod="); ok {
							pod = p
						}
					}
					out[pod] = r.value
				}
				return out
			}
			share, util, mem := values(dcgm.Schema{}.Allocation(), signals.AllocationLabels), values(dcgm.Schema{}.Utilization(), signals.UsageLabels), values(dcgm.Schema{}.MemoryUsed(), signals.UsageLabels)
			if len(share) != len(tt.tenants) {
				t.Errorf("tenants %v, want %v", share, tt.tenants)
			}
			for pod, w := range tt.tenants {
				if math.Abs(share[pod]-w.share) > 1e-12 || math.Abs(util[pod]-w.util) > 1e-12 || mem[pod] != w.mem {
					t.Errorf("%s: share %v, utilization %v, memory %v; want %+v", pod, share[pod], util[pod], mem[pod], w)
				}
			}
			if got := values(dcgm.Schema{}.GPUAttribution(fixtureWindow), signals.GPUKey)[""]; got != tt.attribution {
				t.Errorf("attribution %v, want %v", got, tt.attribution)
			}
			// Whatever the layout, the device's own figures.
			if got := values(dcgm.Schema{}.GPUMemoryTotal(), signals.GPULabels)[""]; got != (20000+60920+640)*mib {
				t.Errorf("memory total %v, want %v", got, (20000+60920+640)*mib)
			}
			if got := values(dcgm.Schema{}.GPUUtilization(), signals.GPULabels)[""]; got != 0.5 {
				t.Errorf("GPU utilization %v, want 0.5", got)
			}
		})
	}
}

// TestNativeMIGTotalFromNVML: a MIG GPU's utilization weighs its slices
// by the total the exporter read from NVML, so a model the catalog lacks
// is still known; without that series, and outside the catalog, it is
// unknown rather than divided by a guessed 7.
func TestNativeMIGTotalFromNVML(t *testing.T) {
	const gpu = `node="n",gpu="0",uuid="GPU-x",model="NVIDIA Future GPU"`
	base := "gpulens_gpu_info{" + gpu + `,mig_mode="true"} 1
gpulens_mig_compute_slices{` + gpu + `,gpu_instance="1",mig_profile="2g.40gb"} 2
gpulens_mig_sm_active_ratio{` + gpu + `,gpu_instance="1",mig_profile="2g.40gb"} 0.6
`
	for _, tt := range []struct {
		name, extra string
		want        []row
	}{
		{"total from NVML", "gpulens_gpu_mig_compute_slices{" + gpu + "} 8\n", []row{{"node=n,uuid=GPU-x,model=NVIDIA Future GPU", 0.6 * 2 / 8}}},
		{"unknown", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "m.prom")
			if err := os.WriteFile(f, []byte(base+tt.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			got := query(t, loadFixtures(t, f), native.Schema{}.GPUUtilization(), signals.GPULabels)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("GPU utilization %v, want %v", got, tt.want)
			}
		})
	}
}

const mib = 1 << 20

// TestErasAgree: the same fleet as dcgm-exporter 4.9 writes it (DCGM 4.7's
// names and base units, testdata/eras.py), and with one node upgraded and
// the others not, reads as under the names before: every expression,
// same series, same values. Values compared to 1e-9 relative: a percent
// read as a ratio is the same float (x/100 either way), bytes are MiB
// times 2^20.
func TestErasAgree(t *testing.T) {
	legacy := loadFixtures(t, "testdata/dcgm-exporter.prom")
	for _, file := range []string{"testdata/dcgm-exporter.4.9.prom", "testdata/dcgm-exporter.upgrading.prom"} {
		t.Run(file, func(t *testing.T) {
			renamed := loadFixtures(t, file)
			for name, expr := range expressions(dcgm.Schema{}) {
				if name == "GPUEnergy" {
					continue // increase() needs two scrapes; the fixtures are one
				}
				keep := []string{"node", "uuid", "model", "namespace", "pod", "container", "gpu_instance", "mig_profile", "sharing"}
				want, got := query(t, legacy, expr, keep), query(t, renamed, expr, keep)
				if len(want) == 0 || len(got) != len(want) {
					t.Fatalf("%s: %d series, want %d:\ngot  %v\nwant %v", name, len(got), len(want), got, want)
				}
				for i := range want {
					if got[i].labels != want[i].labels || math.Abs(got[i].value-want[i].value) > 1e-9*math.Max(1, math.Abs(want[i].value)) {
						t.Errorf("%s: %v, want %v", name, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestDetectUnreadNames: a store whose dcgm-exporter series are under
// other names is not "an exporter not scraped": the refusal names what
// it saw and the --dcgm-fields lines that would read it; with that map
// the same store reads as the names before (issue 42, case 6).
func TestDetectUnreadNames(t *testing.T) {
	tests := []struct {
		file    string
		wantErr []string
	}{
		{"testdata/dcgm-exporter.1.x.prom", []string{"no GPU metrics gpulens can read in", "5 metric families that look like dcgm-exporter's",
			"dcgm_fb_used", "--use-old-namespace", "--dcgm-fields FILE", "DCGM_FI_DEV_FB_USED: dcgm_fb_used", "DCGM_FI_DEV_GPU_UTIL: dcgm_gpu_utilization"}},
		{"testdata/dcgm-exporter.lowercase.prom", []string{"6 metric families", "DCGM_FI_DEV_FB_USED: dcgm_fi_dev_fb_used", "DCGM_FI_DEV_FB_RESERVED: dcgm_fi_dev_fb_reserved"}},
	}
	for _, tt := range tests {
		src := loadFixtures(t, tt.file)
		_, err := source.Detect(context.Background(), src, at.Add(-time.Hour), at.Add(time.Hour), nil)
		var unread *source.UnreadNamesError
		if !errors.As(err, &unread) {
			t.Fatalf("%s: Detect error %v, want an UnreadNamesError", tt.file, err)
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tt.file, err, w)
			}
		}
		if strings.Contains(err.Error(), "is the exporter scraped") {
			t.Errorf("%s: error blames the scrape: %v", tt.file, err)
		}
	}

	fields, err := dcgm.LoadFieldMap("testdata/lowercase.fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	renamed, legacy := loadFixtures(t, "testdata/dcgm-exporter.lowercase.prom"), loadFixtures(t, "testdata/dcgm-exporter.prom")
	s, err := source.Detect(context.Background(), renamed, at.Add(-time.Hour), at.Add(time.Hour), fields)
	if err != nil || s.Name() != dcgm.SchemaName {
		t.Fatalf("Detect with the map = %v, %v", s, err)
	}
	for name, expr := range expressions(s) {
		if name == "GPUEnergy" {
			continue
		}
		keep := []string{"node", "uuid", "model", "namespace", "pod", "container", "gpu_instance", "mig_profile", "sharing"}
		want, got := query(t, legacy, expressions(dcgm.Schema{})[name], keep), query(t, renamed, expr, keep)
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s through the map:\ngot  %v\nwant %v", name, got, want)
		}
	}
}
