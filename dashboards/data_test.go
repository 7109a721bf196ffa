package dashboards

import (
	"context"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/internal/fleet"
)

// The demo fleet (sim.Default, 4 nodes, 32 GPUs, every sharing mode) in
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
	dcgm   *fleet.DCGMSink
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
			return tee{
				native: fleet.NewTSDBSink(ctx, dbs["native"], &n).WithTarget("gpulens-exporter", node+":9845"),
				dcgm:   fleet.NewDCGMSink(fleet.NewTSDBSink(ctx, dbs["dcgm-exporter"], &n).WithTarget("dcgm-exporter", node+":9400")),
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("simulated %d samples", n.Load())
	return dbs
}

// gpuSeries matches the metrics of GPUs, MIG instances and containers, as
// opposed to `gpulens serve`'s findings, which the simulation does not
// produce.
var gpuSeries = regexp.MustCompile(`\b(gpulens_(gpu|mig|container)_[a-z_]+|DCGM_FI_[A-Z_]+)\b`)

var legendLabel = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)

func TestPanelsReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	dbs := demoFleet(t)
	t.Run("mig", func(t *testing.T) { migNeverAddsParent(t, dbs) })
	t.Run("figures", func(t *testing.T) { consistentFigures(t, dbs) })
	t.Run("variables", func(t *testing.T) { variablesFindValues(t, dbs) })
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
					vec, err := db.Query(context.Background(), substitute(q.expr), dataEnd)
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
	for schema, s := range schemas {
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
		// 32 GPUs, less the L4 that fell off the bus.
		if len(seen) != 31 {
			t.Errorf("%s: %d GPUs with a load, want 31", schema, len(seen))
		}
	}
}
