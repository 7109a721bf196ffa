package dashboards

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"

	"github.com/gpulens/gpulens/alerts"
	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// recordRules evaluates, as Prometheus' rule manager would, the rules of
// the schema's rule file whose series the dashboards read, at every step
// from start to end, and appends what they record to db: a series that
// ends gets a staleness marker, as a rule's does.
func recordRules(t *testing.T, db *source.Embedded, schema string, start, end time.Time) {
	t.Helper()
	rec := recorded[schema]
	if rec == nil {
		return
	}
	var rules []alerts.Rule
	for _, g := range alerts.DCGM(criteria.DefaultConfig()).Groups {
		for _, r := range g.Rules {
			if r.Record == rec.allocation || r.Record == rec.utilization {
				rules = append(rules, r)
			}
		}
	}
	if len(rules) != 2 {
		t.Fatalf("%s: the rule file records %d of the dashboards' 2 series", schema, len(rules))
	}
	ctx := context.Background()
	for _, r := range rules {
		prev := map[string]labels.Labels{}
		app := db.Appender(ctx)
		for ts := start; !ts.After(end); ts = ts.Add(dataStep) {
			vec, err := db.Query(ctx, r.Expr, ts)
			if err != nil {
				t.Fatalf("%s at %s: %v", r.Record, ts, err)
			}
			now := map[string]labels.Labels{}
			for _, s := range vec {
				s.Metric[model.MetricNameLabel] = model.LabelValue(r.Record)
				lset := labels.FromMap(metricMap(s.Metric))
				now[lset.String()] = lset
				if _, err := app.Append(0, lset, ts.UnixMilli(), float64(s.Value)); err != nil {
					t.Fatal(err)
				}
			}
			for k, lset := range prev {
				if _, ok := now[k]; !ok {
					if _, err := app.Append(0, lset, ts.UnixMilli(), math.Float64frombits(value.StaleNaN)); err != nil {
						t.Fatal(err)
					}
				}
			}
			prev = now
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

func metricMap(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}

// recordedEqualsInline: every panel query that reads a recorded series
// returns what the same query with the signals' forms inlined did (the
// dashboards before the rule file recorded them), on the demo fleet with
// every field and on a stock install. A recording that drops a label the
// panels group by, or changes a value, fails here.
func recordedEqualsInline(t *testing.T, dbs map[string]*source.Embedded) {
	compared := 0
	for _, schema := range Schemas() {
		if recorded[schema] == nil {
			continue
		}
		s := newChart(schemaSet[schema], vocab.DefaultClusterLabel)
		for _, db := range []*source.Embedded{dbs[schema], dbs[stockDB]} {
			for _, b := range builders {
				rec, inl := targetsOf(b.build(s)), targetsOf(b.build(s.inline()))
				if len(rec) != len(inl) {
					t.Fatalf("%s: %d queries recorded, %d inline", b.name, len(rec), len(inl))
				}
				for i := range rec {
					if rec[i].expr == inl[i].expr {
						continue
					}
					where := b.name + " / " + rec[i].where
					// Dollar figures at a flat price: at the default (NaN)
					// both forms are no value while a model is unpriced.
					got, err := queryPriced(db, rec[i].expr)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					want, err := queryPriced(db, inl[i].expr)
					if err != nil {
						t.Fatalf("%s inline: %v", where, err)
					}
					compared++
					sameVectors(t, where, got, want)
				}
			}
		}
	}
	t.Logf("%d queries compared with their inline forms", compared)
	if compared < 20 {
		t.Errorf("only %d queries compared with their inline forms", compared)
	}
}

type specTarget struct{ where, expr string }

func targetsOf(s spec) []specTarget {
	var out []specTarget
	for _, r := range s.rows {
		for _, p := range r.panels {
			for i, tg := range p.targets {
				out = append(out, specTarget{p.title + " / " + refID(i), tg.expr})
			}
		}
	}
	return out
}

// sameVectors: the same series (by labels, the metric name aside) with
// the same values, to float rounding.
func sameVectors(t *testing.T, where string, got, want model.Vector) {
	t.Helper()
	key := func(m model.Metric) string {
		m = m.Clone()
		delete(m, model.MetricNameLabel)
		return m.String()
	}
	byKey := map[string]float64{}
	for _, s := range want {
		byKey[key(s.Metric)] = float64(s.Value)
	}
	if len(want) == 0 {
		t.Errorf("%s: the inline form returns nothing: nothing compared", where)
	}
	var extra []string
	for _, s := range got {
		k := key(s.Metric)
		w, ok := byKey[k]
		if !ok {
			extra = append(extra, k)
			continue
		}
		delete(byKey, k)
		if g := float64(s.Value); math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: %s = %v recorded, %v inline", where, k, g, w)
		}
	}
	missing := make([]string, 0, len(byKey))
	for k := range byKey {
		missing = append(missing, k)
	}
	slices.Sort(missing)
	if len(extra) > 0 || len(missing) > 0 {
		t.Errorf("%s: recorded has %d series the inline form has not %v, and lacks %d %v", where, len(extra), extra, len(missing), missing)
	}
}
