package dashboards

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// The demo fleet (sim.Default, 6 nodes, 38 GPUs, every sharing mode) in
// two short windows instead of a week, which would take minutes: the last
// two hours, and an hour a week earlier for the week-over-week panels.
// Its faults (an XID 13, an L4 falling off the bus) are moved into the
// windows so that the health panels have something to show.
var (
	dataEnd    = time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	dataWindow = 2 * time.Hour
	dataStep   = time.Minute
)

// tee writes the native series to one sink and through a DCGMSink to
// another: the same samples under both schemas.
type tee struct {
	native fleet.Sink
	dcgm   fleet.Sink
}

func (t tee) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	if err := t.native.Append(ts, name, lbls, v); err != nil {
		return err
	}
	return t.dcgm.Append(ts, name, lbls, v)
}

func (t tee) EndStep(ts time.Time) error {
	if err := t.native.EndStep(ts); err != nil {
		return err
	}
	return t.dcgm.EndStep(ts)
}

func (t tee) Close() error {
	if err := t.native.Close(); err != nil {
		return err
	}
	return t.dcgm.Close()
}

// demoFleet simulates the windows into two embedded TSDBs, by schema.
func demoFleet(t *testing.T) map[string]*source.Embedded {
	t.Helper()
	ctx := context.Background()
	dbs := map[string]*source.Embedded{}
	for _, s := range Schemas() {
		db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		dbs[s] = db
	}
	stock, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stock.Close() })
	dbs[stockDB] = stock
	sc := sim.Default()
	for i := range sc.Nodes {
		for j := range sc.Nodes[i].Faults {
			sc.Nodes[i].Faults[j].At = sim.Duration(30*time.Minute + time.Duration(j)*10*time.Minute)
		}
	}
	var n atomic.Int64
	for _, w := range []struct{ start, end time.Time }{
		{dataEnd.Add(-7*24*time.Hour - time.Hour), dataEnd.Add(-7 * 24 * time.Hour)},
		{dataEnd.Add(-dataWindow), dataEnd},
	} {
		err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: w.start, End: w.end, Step: dataStep}, func(node string) fleet.Sink {
			full := dcgmSink(fleet.NewTSDBSink(ctx, dbs["dcgm-exporter"], &n).WithTarget("dcgm-exporter", node+":9400"))
			// Every field, as with a counters file of the user's own;
			// stockDB has the default one.
			full.Install.DefaultCSV = false
			exporters := tee{
				native: fleet.NewTSDBSink(ctx, dbs["native"], &n).WithTarget("gpulens-exporter", node+":9845"),
				dcgm: tee{
					native: full,
					dcgm:   upgraded(dcgmSink(fleet.NewTSDBSink(ctx, dbs[stockDB], &n).WithTarget("dcgm-exporter", node+":9400"))),
				},
			}
			// The HAMi node's HAMi series, beside either exporter's.
			hamiTarget := func(db string) fleet.Sink {
				return fleet.NewTSDBSink(ctx, dbs[db], &n).WithTarget("hami-vgpu-monitor", node+":9394")
			}
			return fleet.NewHAMiSink(exporters, tee{native: hamiTarget("native"), dcgm: tee{native: hamiTarget("dcgm-exporter"), dcgm: hamiTarget(stockDB)}}, sc, node)
		})
		if err != nil {
			t.Fatal(err)
		}
		// The rule file's recordings of the window, which the
		// dcgm-exporter panels read, as a Prometheus evaluating it would
		// have written them.
		for _, db := range []string{"dcgm-exporter", stockDB} {
			recordRules(t, dbs[db], "dcgm-exporter", w.start, w.end)
		}
	}
	t.Logf("simulated %d samples", n.Load())
	return dbs
}

// gpuSeries matches the metrics of GPUs, MIG instances and containers,
// HAMi's (their current names; the forms read both eras), and the rule
// files' recordings of them, as opposed to `gpulens serve`'s
// findings, which the simulation does not produce.
var gpuSeries = regexp.MustCompile(`\b(gpulens_(gpu|mig|container)_[a-z_]+|DCGM_FI_[A-Z_]+|[a-z_]+:gpulens_dcgm_[a-z_]+:[a-z_]+|hami_[a-z_]+)\b`)

var legendLabel = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)

func TestPanelsReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	dbs := demoFleet(t)
	t.Run("mig", func(t *testing.T) { migNeverAddsParent(t, dbs) })
	t.Run("figures", func(t *testing.T) { consistentFigures(t, dbs) })
	t.Run("hami", func(t *testing.T) { hamiFigures(t, dbs) })
	t.Run("hami held", func(t *testing.T) { hamiHeld(t, dbs) })
	t.Run("variables", func(t *testing.T) { variablesFindValues(t, dbs) })
	t.Run("signals", func(t *testing.T) { signalsAgree(t, dbs) })
	t.Run("recorded", func(t *testing.T) { recordedEqualsInline(t, dbs) })
	t.Run("dcgm-exporter stock install", func(t *testing.T) { stockInstallPanels(t, dbs[stockDB]) })
	// Last: it adds serve's price series to the stores.
	defer t.Run("priced by model", func(t *testing.T) { pricedByModel(t, dbs) })
	for schema, ds := range generated(t) {
		t.Run(schema, func(t *testing.T) {
			db := dbs[schema]
			checked := 0
			for _, d := range ds {
				for _, q := range queries(t, d) {
					if !gpuSeries.MatchString(q.expr) {
						continue
					}
					checked++
					where := q.dashboard + " / " + q.panel + " / " + q.ref
					vec, err := queryPriced(db, q.expr)
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					if len(vec) == 0 {
						t.Errorf("%s: no data\n%s", where, substitute(q.expr))
						continue
					}
					legendLabelsPresent(t, where, q.legend, vec)
				}
			}
			if checked < 40 {
				t.Errorf("only %d queries chart GPU series", checked)
			}
		})
	}
}

// queryPriced is expr at dataEnd with the tests' variables; a dollar
// figure with nothing at the default $gpu_hourly_price (NaN: a GPU of a
// model without a price, knownOverRange makes it no value) at a flat
// price of $4, where every figure has one.
func queryPriced(db *source.Embedded, expr string) (model.Vector, error) {
	vec, err := db.Query(context.Background(), substitute(expr), dataEnd)
	if err != nil || len(vec) > 0 || !strings.Contains(expr, "$gpu_hourly_price") {
		return vec, err
	}
	return db.Query(context.Background(), substitute(strings.ReplaceAll(expr, "$gpu_hourly_price", "4")), dataEnd)
}

// legendLabelsPresent: every label a legend names is set on every series,
// so that no two nodes' "GPU 0" read the same (dcgm-exporter #630).
func legendLabelsPresent(t *testing.T, where, legend string, vec model.Vector) {
	t.Helper()
	for _, m := range legendLabel.FindAllStringSubmatch(substitute(legend), -1) {
		for _, s := range vec {
			if s.Metric[model.LabelName(m[1])] == "" {
				t.Errorf("%s: legend %q, but %v has no %s", where, legend, s.Metric, m[1])
				return
			}
		}
	}
}

// migNeverAddsParent: the per-GPU load has one series per physical GPU
// on both schemas, and a MIG GPU's is its slices' weighted activity, never
// above 1 (a parent added to its slices would double it).
func migNeverAddsParent(t *testing.T, dbs map[string]*source.Embedded) {
	for schema, sch := range schemaSet {
		s := newChart(sch, vocab.DefaultClusterLabel)
		vec, err := dbs[schema].Query(context.Background(), substitute(s.gpuUtil()), dataEnd)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, v := range vec {
			key := string(v.Metric["node"]) + "/" + string(v.Metric["uuid"])
			if seen[key] || v.Value > 1 || v.Value < 0 {
				t.Errorf("%s: %v = %v: duplicate or out of [0, 1]", schema, v.Metric, v.Value)
			}
			seen[key] = true
		}
		// 38 GPUs (4 of them on the DRA node, 2 on the HAMi node), less
		// the L4 that fell off the bus.
		if want := 38 - 1; len(seen) != want {
			t.Errorf("%s: %d GPUs with a load, want %d", schema, len(seen), want)
		}
	}
}

// dcgmSink is dcgm-exporter with --kubernetes-virtual-gpus as 2025
// releases lay it out: every co-tenant of a shared GPU is seen, and an
// unheld GPU keeps its series (without virtual GPUs, the default, a shared
// GPU shows one tenant and the co-tenant panels would have nothing).
func dcgmSink(inner fleet.Sink) *fleet.DCGMSink {
	d := fleet.NewDCGMSink(inner)
	d.Layout = fleet.DCGMVirtualGPUs2025
	return d
}

// nameRegex is a selection of metric names by a regex (a field's names
// in every era: signals/dcgm).
var nameRegex = regexp.MustCompile(`__name__=~"([^"]+)"`)

// dcgmFieldsOf are the dcgm-exporter fields expr reads, whether named or
// matched by a regex over their names.
func dcgmFieldsOf(expr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\bDCGM_FI_[A-Z0-9_]+\b`).FindAllString(expr, -1) {
		if f, ok := dcgm.FieldOf(m); ok {
			out = append(out, f.Key)
		}
	}
	for _, m := range nameRegex.FindAllStringSubmatch(expr, -1) {
		re := regexp.MustCompile("^(?:" + m[1] + ")$")
		for _, f := range dcgm.Fields() {
			for _, sp := range f.Spellings {
				if re.MatchString(sp.Name) {
					out = append(out, f.Key)
				}
			}
		}
	}
	return out
}

// upgraded is d upgraded to dcgm-exporter 4.10 half-way through the
// last window: its names and units before, DCGM 4.7's after (issue 42),
// so the stock install's panels are read at the end in 4.10's names.
func upgraded(d *fleet.DCGMSink) *fleet.DCGMSink {
	at := dataEnd.Add(-dataWindow / 2)
	d.Install.EraOf = func(_ string, ts time.Time) dcgm.Era {
		if ts.Before(at) {
			return dcgm.EraLegacy
		}
		return dcgm.Era410
	}
	return d
}

// stockDB is the key of demoFleet's dcgm-exporter data as a stock GPU
// Operator install writes it: the default counters file only, upgraded
// to 4.10 in the window (upgraded).
const stockDB = "dcgm-exporter stock"

// stockInstallPanels: on a stock install's data every dcgm-exporter panel
// whose fields the default counters file has returns data, and every
// other one is empty and says so in its description, naming the fields.
func stockInstallPanels(t *testing.T, db *source.Embedded) {
	empty, full := 0, 0
	for _, d := range generated(t)["dcgm-exporter"] {
		for _, q := range queries(t, d) {
			if !gpuSeries.MatchString(q.expr) {
				continue
			}
			where := q.dashboard + " / " + q.panel + " / " + q.ref
			inCSV := true
			for _, f := range dcgmFieldsOf(q.expr) {
				inCSV = inCSV && dcgm.InDefaultCSV(f)
			}
			vec, err := queryPriced(db, q.expr)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			switch {
			case inCSV && len(vec) == 0:
				t.Errorf("%s: no data on a stock install, whose counters file has every field it reads\n%s", where, substitute(q.expr))
			case !inCSV && !strings.Contains(q.desc, "default counters file"):
				t.Errorf("%s reads a field outside the default counters file, and its description %q does not say so", where, q.desc)
			case inCSV:
				full++
			default:
				empty++
			}
		}
	}
	if full < 30 || empty == 0 {
		t.Errorf("%d queries with data on a stock install, %d noted as outside its counters file: want both", full, empty)
	}
}
