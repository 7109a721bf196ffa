package scan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

const minute = int64(60_000)

// store is a TSDB with series that exercise the engine's rules: gaps
// shorter and longer than the lookback, stale markers, NaN values, a
// series that ends without a marker, and label sets that collide under
// label_replace at different times.
func store(t *testing.T, stale bool) storage.Queryable {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	app := db.Appender(context.Background())
	add := func(l labels.Labels, from, to int, v func(i int) float64) {
		for i := from; i <= to; i++ {
			if _, err := app.Append(0, l, int64(i)*minute, v(i)); err != nil {
				t.Fatal(err)
			}
		}
		if stale {
			if _, err := app.Append(0, l, int64(to+1)*minute, math.Float64frombits(value.StaleNaN)); err != nil {
				t.Fatal(err)
			}
		}
	}
	lbl := labels.FromStrings
	add(lbl("__name__", "alloc", "node", "n1", "uuid", "g1", "pod", "a", "sharing", "none"), 0, 40, func(int) float64 { return 1 })
	add(lbl("__name__", "alloc", "node", "n1", "uuid", "g2", "pod", "b", "sharing", "ts"), 10, 30, func(int) float64 { return 0.5 })
	add(lbl("__name__", "alloc", "node", "n1", "uuid", "g2", "pod", "c", "sharing", "ts"), 20, 59, func(int) float64 { return 0.5 })
	add(lbl("__name__", "alloc", "node", "n2", "uuid", "g3", "exported_pod", "d", "sharing", "none"), 5, 50, func(int) float64 { return 1 })
	// A gap of three minutes (within the lookback) and one of ten.
	add(lbl("__name__", "util", "node", "n1", "uuid", "g1"), 0, 12, func(i int) float64 { return float64(i%7) / 7 })
	add(lbl("__name__", "util", "node", "n1", "uuid", "g1"), 16, 20, func(i int) float64 { return float64(i%5) / 5 })
	add(lbl("__name__", "util", "node", "n1", "uuid", "g1"), 31, 59, func(i int) float64 { return float64(i%3) / 3 })
	add(lbl("__name__", "util", "node", "n1", "uuid", "g2"), 0, 59, func(i int) float64 {
		if i%11 == 0 {
			return math.NaN()
		}
		return float64(i) / 60
	})
	add(lbl("__name__", "util", "node", "n2", "uuid", "g3"), 0, 59, func(i int) float64 { return 0.25 })
	add(lbl("__name__", "slices", "node", "n1", "uuid", "g2"), 0, 59, func(int) float64 { return 7 })
	add(lbl("__name__", "errs", "node", "n1", "uuid", "g1", "xid", "13"), 0, 59, func(i int) float64 { return float64(i / 10) })
	add(lbl("__name__", "errs", "node", "n1", "uuid", "g2", "xid", "31"), 25, 59, func(i int) float64 { return float64(i / 20) })
	// Two series that become one under label_replace("pod", ..., "exported_pod"),
	// one after the other.
	add(lbl("__name__", "mem", "node", "n1", "pod", "e"), 0, 20, func(i int) float64 { return float64(i) })
	add(lbl("__name__", "mem", "node", "n1", "exported_pod", "e"), 40, 59, func(i int) float64 { return float64(2 * i) })
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// cases are expressions of every node kind the scan evaluates, in the
// shapes the signals use them.
var cases = []string{
	`alloc`,
	`alloc{sharing="ts"}`,
	`max by (node, uuid) (alloc)`,
	`sum by (node, uuid) (alloc)`,
	`count by (node, uuid) (alloc)`,
	`group by (node) (alloc)`,
	`min without (pod) (alloc)`,
	`sum(util)`,
	`max by (node, uuid) (util)`,
	`util * 100`,
	`100 * util`,
	`util > 0.5`,
	`0.5 < util`,
	`util > bool 0.5`,
	`-2 * util + 1`,
	`floor(util * 10) / 10`,
	`clamp_max(util * 2, 1)`,
	`clamp_min(util - 0.5, 0)`,
	`util % 0.3`,
	`util and on (node, uuid) alloc`,
	`util unless on (node, uuid) alloc`,
	`util or on (node, uuid) alloc`,
	`alloc or util`,
	`alloc and alloc{sharing="ts"}`,
	`util == bool util`,
	`util != util`,
	`max by (node, uuid) (util) / on (node, uuid) group_left () sum by (node, uuid) (alloc)`,
	`sum by (node, uuid) (alloc) * on (node, uuid) group_right () max by (node, uuid, pod) (alloc)`,
	`alloc * on (node, uuid) group_left () slices`,
	`alloc / ignoring (pod, sharing) group_left util`,
	`alloc > ignoring (pod, sharing) group_left (node) util`,
	`max by (node, uuid) (util) + max by (node, uuid) (alloc)`,
	`label_replace(alloc, "pod", "$1", "exported_pod", "(.+)")`,
	`max by (node, pod) (label_replace(mem, "pod", "$1", "exported_pod", "(.+)"))`,
	`label_replace(util, "gpu", "x-$1", "uuid", "g(.*)")`,
	`last_over_time(util[10m])`,
	`last_over_time(errs[1h] offset 1m)`,
	`errs - last_over_time(errs[1h] offset 1m) > 0`,
	`(errs - last_over_time(errs[1h] offset 1m)) > 0 or (errs unless last_over_time(errs[1h] offset 1m))`,
	`util offset 5m`,
	`max by (node, uuid) (0 * max by (node, uuid) (errs{xid="13"} > 1) + 13 or 0 * max by (node, uuid) (errs{xid="31"} > 0) + 31)`,
	`nothing_here`,
	`sum(nothing_here)`,
}

func TestRangeMatchesEngine(t *testing.T) {
	ng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e8, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for _, stale := range []bool{true, false} {
		q := store(t, stale)
		name := "stale markers"
		if !stale {
			name = "no stale markers"
		}
		t.Run(name, func(t *testing.T) {
			for _, steps := range []struct{ start, end, step time.Duration }{
				{0, 70 * time.Minute, time.Minute},
				{3 * time.Minute, 67 * time.Minute, 7 * time.Minute},
				{30 * time.Second, 65 * time.Minute, 90 * time.Second},
			} {
				for _, expr := range cases {
					diffRange(t, ng, q, expr, time.UnixMilli(steps.start.Milliseconds()), time.UnixMilli(steps.end.Milliseconds()), steps.step)
				}
			}
		})
	}
}

// readers are the two ways the scan reads q: its chunks, decoded by the
// scan, where q serves them, and its samples.
func readers(q storage.Queryable) []struct {
	name string
	q    storage.Queryable
} {
	return []struct {
		name string
		q    storage.Queryable
	}{{"chunks", q}, {"samples", samplesOnly(q)}}
}

// samplesOnly is q without its chunks: the scan reads it through the
// sample querier.
func samplesOnly(q storage.Queryable) storage.Queryable { return storage.QueryableFunc(q.Querier) }

// diffRange holds Range to the engine's range query over q, reading q
// both ways.
func diffRange(t *testing.T, ng *promql.Engine, q storage.Queryable, expr string, start, end time.Time, step time.Duration) {
	t.Helper()
	g, err := NewGrid(start, end, step)
	if err != nil {
		t.Fatal(err)
	}
	qry, err := ng.NewRangeQuery(context.Background(), q, nil, expr, start, end, step)
	if err != nil {
		t.Fatal(err)
	}
	defer qry.Close()
	res := qry.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: engine: %v", expr, res.Err)
	}
	want := engineMatrix(t, res.Value.(promql.Matrix))
	for _, r := range readers(q) {
		got, err := Range(context.Background(), r.q, expr, g, Rules{Lookback: 5 * time.Minute})
		if err != nil {
			t.Errorf("%s (step %s, %s): %v", expr, step, r.name, err)
			continue
		}
		diffMatrix(t, fmt.Sprintf("%s step %s from %s", expr, step, r.name), want, got)
	}
}

// diffInstant holds Instant to the engine's instant query over q, reading
// q both ways.
func diffInstant(t *testing.T, ng *promql.Engine, q storage.Queryable, expr string, ts time.Time) {
	t.Helper()
	qry, err := ng.NewInstantQuery(context.Background(), q, nil, expr, ts)
	if err != nil {
		t.Fatal(err)
	}
	defer qry.Close()
	res := qry.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: engine: %v", expr, res.Err)
	}
	byMetric := func(a, b *model.SampleStream) int { return strings.Compare(a.Metric.String(), b.Metric.String()) }
	var want model.Matrix
	for _, s := range res.Value.(promql.Vector) {
		want = append(want, engineMatrix(t, promql.Matrix{{Metric: s.Metric, Floats: []promql.FPoint{{T: s.T, F: s.F}}}})...)
	}
	slices.SortFunc(want, byMetric)
	for _, r := range readers(q) {
		vec, err := Instant(context.Background(), r.q, expr, ts, Rules{Lookback: 5 * time.Minute})
		if err != nil {
			t.Errorf("%s at %s (%s): %v", expr, ts, r.name, err)
			continue
		}
		var got model.Matrix
		for _, s := range vec {
			got = append(got, &model.SampleStream{Metric: s.Metric, Values: []model.SamplePair{{Timestamp: s.Timestamp, Value: s.Value}}})
		}
		slices.SortFunc(got, byMetric)
		diffMatrix(t, fmt.Sprintf("%s at %dms from %s", expr, ts.UnixMilli(), r.name), want, got)
	}
}

func engineMatrix(t *testing.T, m promql.Matrix) model.Matrix {
	t.Helper()
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		mm := model.Metric{}
		s.Metric.Range(func(l labels.Label) { mm[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		ss := &model.SampleStream{Metric: mm}
		for _, p := range s.Floats {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.Time(p.T), Value: model.SampleValue(p.F)})
		}
		out = append(out, ss)
	}
	return out
}

func diffMatrix(t *testing.T, what string, want, got model.Matrix) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d series, engine %d:\n got %v\nwant %v", what, len(got), len(want), got, want)
		return
	}
	for i := range want {
		if !want[i].Metric.Equal(got[i].Metric) {
			t.Errorf("%s: series %d is %s, engine %s", what, i, got[i].Metric, want[i].Metric)
			continue
		}
		w, g := want[i].Values, got[i].Values
		if len(w) != len(g) {
			t.Errorf("%s: %s has %d points, engine %d", what, want[i].Metric, len(g), len(w))
			continue
		}
		for j := range w {
			wv, gv := float64(w[j].Value), float64(g[j].Value)
			same := wv == gv || (math.IsNaN(wv) && math.IsNaN(gv)) || math.Abs(wv-gv) <= 1e-12*math.Max(math.Abs(wv), math.Abs(gv))
			if w[j].Timestamp != g[j].Timestamp || !same {
				t.Errorf("%s: %s point %d is %v, engine %v", what, want[i].Metric, j, g[j], w[j])
				break
			}
		}
	}
}

// TestRangeLeftClosed pins Prometheus 2's rule, which no engine here
// runs: a sample exactly a lookback before a step is still seen there.
func TestRangeLeftClosed(t *testing.T) {
	q := store(t, false)
	// n2/g3's alloc has its last sample at minute 50 and no marker.
	g, err := NewGrid(time.UnixMilli(54*minute), time.UnixMilli(56*minute), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		closed bool
		want   int // points at minutes 54, 55, 56
	}{{false, 1}, {true, 2}} {
		m, err := Range(context.Background(), q, `alloc{node="n2"}`, g, Rules{Lookback: 5 * time.Minute, LeftClosed: c.closed})
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 1 || len(m[0].Values) != c.want {
			t.Errorf("left-closed %v: %v, want %d points", c.closed, m, c.want)
		}
	}
}

// TestRangeUnsupported: what the scan does not evaluate the engine's way
// is ErrUnsupported, for the caller to ask the engine, including the
// cases where the engine itself fails.
func TestRangeUnsupported(t *testing.T) {
	q := store(t, true)
	g, err := NewGrid(time.UnixMilli(0), time.UnixMilli(60*minute), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		`delta(errs[5m])`,
		`topk(1, util)`,
		`quantile(0.5, util)`,
		`avg(util)`,
		`util @ 100`,
		`-util`,
		`sum_over_time(util[5m:1m])`,
		// Many-to-many: two alloc series of g2 at one step.
		`util * on (node, uuid) alloc`,
		// Duplicate series after label_replace at one step.
		`label_replace(alloc, "pod", "x", "uuid", "g2")`,
		`time()`,
	} {
		_, err := Range(context.Background(), q, expr, g, Rules{Lookback: 5 * time.Minute})
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", expr, err)
		}
	}
	// Over the store's sample limit, the engine decides.
	if _, err := Range(context.Background(), q, `alloc`, g, Rules{Lookback: 5 * time.Minute, MaxSamples: 2 * g.N}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("alloc (4 series) within %d samples: %v, want ErrUnsupported", 2*g.N, err)
	}
	if _, err := Range(context.Background(), q, `alloc`, g, Rules{Lookback: 5 * time.Minute, MaxSamples: 4 * g.N}); err != nil {
		t.Errorf("alloc (4 series) within %d samples: %v", 4*g.N, err)
	}
	if _, err := Range(context.Background(), q, `sum(`, g, Rules{Lookback: 5 * time.Minute}); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("a parse error is %v, want a plain error", err)
	}
}

// instantCases are the analysis's instant-query shapes: range functions
// over a window's raw samples and over subqueries, under aggregations.
var instantCases = []string{
	`max_over_time(util[30m])`,
	`min_over_time(util[1h])`,
	`sum_over_time(alloc[1h])`,
	`count_over_time(alloc[17m])`,
	`last_over_time(util[5m] offset 30m)`,
	// The analysis's per-figure quantiles (issue 43: sharded runs fell
	// back to the engine for them), and the engine's edge cases.
	`quantile_over_time(0.95, (max by (node, uuid, pod) (util))[59m59s999ms:1m])`,
	`quantile_over_time(0.99, (sum by (node, uuid) (alloc))[1h:1m])`,
	`quantile_over_time(0.5, util[30m])`,
	`quantile_over_time(0, util[1h])`,
	`quantile_over_time(1, (util)[20m:7m] offset 3m)`,
	`quantile_over_time(1.5, util[1h])`,
	`quantile_over_time(-1, util[1h])`,
	`max by (node, uuid) (max_over_time((util)[59m59s999ms:1m]))`,
	`sum_over_time((min by (node, uuid) (util) > bool 0.3)[1h:1m])`,
	`count_over_time((group by (node, uuid, pod) (label_replace(alloc, "pod", "$1", "exported_pod", "(.+)")))[1h:1m])`,
	`max by (node, pod) (max_over_time((alloc{sharing="ts"})[1h:5m]))`,
	`sum_over_time((util)[20m:7m] offset 3m)`,
	`clamp_min(max_over_time(errs[1h]) - (last_over_time(errs[5m] offset 1h) or 0 * max_over_time(errs[1h])), 0)`,
	`max by (node, uuid) (0 * max_over_time(alloc{exported_pod!=""}[1h]) + 12 or 0 * max_over_time(alloc[1h]) + 2)`,
	`util`,
	`max by (node) (alloc)`,
	`increase(errs[1h])`,
	`increase(errs[17m] offset 3m)`,
	`rate(util[10m])`,
	`max by (node, uuid) ((increase(errs[20m])))`,
	// query.ClusterValues' shape: tiles of last_over_time at a coarse step.
	`max_over_time((count by (node) (last_over_time({__name__=~"alloc|util"}[7m])))[59m59s999ms:7m]) or count by (node) (last_over_time({__name__=~"alloc|util"}[7m]))`,
	// The shard probe's.
	`max_over_time((count by (node) (max by (node, uuid) (alloc)))[1h:7m])`,
}

func TestInstantMatchesEngine(t *testing.T) {
	ng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e8, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for _, stale := range []bool{true, false} {
		q := store(t, stale)
		t.Run(fmt.Sprintf("stale markers %v", stale), func(t *testing.T) {
			for _, at := range []int64{30 * minute, 45*minute + 30_000, 62 * minute, 70 * minute} {
				for _, expr := range instantCases {
					diffInstant(t, ng, q, expr, time.UnixMilli(at))
				}
			}
		})
	}
}
