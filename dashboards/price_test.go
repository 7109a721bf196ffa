package dashboards

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// pricedByModel: on both schemas (dcgm-exporter names the model
// modelName, the signals model), the cost panels price each allocation
// and each GPU's unheld part at its model's price from serve's series,
// and a model without one at $gpu_hourly_price when the user sets it (4
// here). At the variable's default (NaN, grafanaVars) the unpriced model's
// dollars are unknown, and so is every sum that holds them: the panel's
// figure is no value (knownOverRange), never a made-up price nor a
// partial sum (docs/MONEY.md; TestUnknownCostOnServers has the same on
// a real Prometheus and VictoriaMetrics). The expected dollars
// are the allocations' and GPUs' own series times a price chosen here,
// summed in Go.
func pricedByModel(t *testing.T, dbs map[string]*source.Embedded) {
	ctx := context.Background()
	const flat = 4.0
	for _, schema := range Schemas() {
		db := dbs[schema]
		s := newChart(schemaSet[schema], vocab.DefaultClusterLabel)
		gpus := at(t, db, s.gpu.GPU())
		var models []string
		for _, g := range gpus {
			if m := string(g.Metric[signals.LabelModel]); m != "" && !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		slices.Sort(models)
		if len(models) < 2 {
			t.Fatalf("%s: models %v: want two or more, one priced by serve and one not", schema, models)
		}
		// Every model but the first priced by serve, each differently.
		price := map[string]float64{}
		app := db.Appender(ctx)
		for i, m := range models[1:] {
			price[m] = 1.25 * float64(i+1)
			for ts := dataEnd.Add(-10 * time.Minute); !ts.After(dataEnd); ts = ts.Add(dataStep) {
				lset := labels.FromStrings(labels.MetricName, vocab.SeriesPriceGPUHour, "job", "gpulens-serve", signals.LabelModel, m)
				if _, err := app.Append(0, lset, ts.UnixMilli(), price[m]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
		priceOf := func(m model.Metric) float64 {
			if p, ok := price[string(m[signals.LabelModel])]; ok {
				return p
			}
			return flat
		}
		var held float64
		heldOn := map[string]float64{}
		// held: HAMi tenants of the fixture at HAMi's share (chart.held),
		// as the ledger charges them; the rest as the exporter holds them.
		for _, a := range at(t, db, s.held()) {
			held += float64(a.Value) * priceOf(a.Metric)
			heldOn[string(a.Metric[signals.LabelNode])+"/"+string(a.Metric[signals.LabelUUID])] += float64(a.Value)
		}
		var unheld float64
		for _, g := range gpus {
			unheld += max(0, 1-heldOn[string(g.Metric[signals.LabelNode])+"/"+string(g.Metric[signals.LabelUUID])]) * priceOf(g.Metric)
		}
		for _, c := range []struct {
			what, expr, panel string
			want              float64
		}{
			{"held", heldPerMonth(s), heldCapacity(s), held * vocab.HoursPerMonth},
			{"unallocated", unallocatedPerMonth(s), unallocatedCapacity(s), unheld * vocab.HoursPerMonth},
		} {
			if v := at(t, db, c.panel); len(v) != 0 {
				t.Errorf("%s %s at the default $gpu_hourly_price: %v, want no value (a model unpriced)", schema, c.what, v)
			}
			if v := at(t, db, strings.ReplaceAll(c.panel, "$gpu_hourly_price", strconv.FormatFloat(flat, 'g', -1, 64))); len(v) != 1 {
				t.Errorf("%s %s at a flat price: %v, want one series", schema, c.what, v)
			}
			v := at(t, db, strings.ReplaceAll(c.expr, "$gpu_hourly_price", strconv.FormatFloat(flat, 'g', -1, 64)))
			if len(v) != 1 {
				t.Fatalf("%s %s: %d series", schema, c.what, len(v))
			}
			if got := float64(v[0].Value); math.Abs(got-c.want) > 1e-9*c.want || c.want == 0 {
				t.Errorf("%s %s: $%.4f a month, want $%.4f (prices %v, others at $%v)", schema, c.what, got, c.want, price, flat)
			}
		}
	}
}

func at(t *testing.T, db *source.Embedded, expr string) model.Vector {
	t.Helper()
	v, err := db.Query(context.Background(), substitute(expr), dataEnd)
	if err != nil {
		t.Fatalf("%v\n%s", err, substitute(expr))
	}
	return v
}
