package query

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/prometheus/common/model"
)

// recorder is a source that keeps the queries it is given.
type recorder struct {
	source.Source
	queries []string
}

func (r *recorder) Query(_ context.Context, q string, _ time.Time) (model.Vector, error) {
	r.queries = append(r.queries, q)
	return nil, nil
}

func (r *recorder) QueryRange(_ context.Context, q string, _, _ time.Time, _ time.Duration) (model.Matrix, error) {
	r.queries = append(r.queries, q)
	return nil, nil
}

func (r *recorder) MaxRangeSteps() int { return 7 }

// TestClusterScopeReadsOneCluster: every selector of a query read in a
// Cluster scope, inside range selectors, subqueries and both sides of a
// join, reads the cluster's series only, through instant and range
// queries alike, and a query that does not parse is not sent.
func TestClusterScopeReadsOneCluster(t *testing.T) {
	rec := &recorder{}
	ctx := context.Background()
	eu := Cluster("cluster", "eu")
	q := `max by (node) (a{x="1"}) / on (node) group_left () max_over_time((sum(b))[1h:1m]) or rate(c[5m])`
	if _, _, err := instantQuery(ctx, rec, eu, "q", q, time.Time{}); err != nil {
		t.Fatal(err)
	}
	w := fleet.Window{Start: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), Step: time.Minute}
	if _, _, err := passWindow(ctx, rec, eu, namedQuery{name: "d", expr: "d"}, w); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rec.queries, "\n")
	for _, sel := range []string{`a{cluster="eu",x="1"}`, `b{cluster="eu"}`, `c{cluster="eu"}[5m]`, `d{cluster="eu"}`} {
		if !strings.Contains(got, sel) {
			t.Errorf("queries %q lack %s", got, sel)
		}
	}
	// The range query is cut at the source's step limit (7): each part
	// is scoped, and the instant query has one matcher per selector.
	if n := strings.Count(rec.queries[0], `cluster="eu"`); n != 3 {
		t.Errorf("%d cluster matchers in %q, want one per selector (3)", n, rec.queries[0])
	}
	for _, r := range rec.queries[1:] {
		if r != `d{cluster="eu"}` {
			t.Errorf("range query %q, want d{cluster=\"eu\"}", r)
		}
	}
	if _, _, err := instantQuery(ctx, rec, Cluster("cluster", ""), "a", "a", time.Time{}); err != nil || !strings.Contains(rec.queries[len(rec.queries)-1], `a{cluster=""}`) {
		t.Errorf("the series without the label: %q, %v", rec.queries[len(rec.queries)-1], err)
	}
	n := len(rec.queries)
	if _, _, err := instantQuery(ctx, rec, eu, "bad", "a{", time.Time{}); err == nil || len(rec.queries) != n {
		t.Error("a query that does not parse was sent")
	}
}

// TestClusterScopeOnTheScan: the raw-sample scan reads the expression as
// the scope wrote it, so an instant query and a pass read from raw samples
// see the one cluster's series, "" the series without the label, as the
// engine does with the same expression.
func TestClusterScopeOnTheScan(t *testing.T) {
	f := newFleet(t)
	weight := map[string]float64{"eu": 1, "us": 10, "": 100}
	for c, v := range weight {
		var extra []string
		if c != "" {
			extra = []string{"cluster", c}
		}
		f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-"+c, "m", extra...), 1, 60, constant(v))
	}
	src := f.commit(t)
	ctx := context.Background()
	w := fleet.Window{Start: t0, End: minute(60), Step: time.Minute}
	for c, v := range weight {
		sc := Cluster("cluster", c)
		vec, raw, err := instantQuery(ctx, src, sc, "q", `sum(last_over_time(gpulens_gpu_info[5m]))`, minute(60))
		if err != nil || !raw || len(vec) != 1 || float64(vec[0].Value) != v {
			t.Errorf("cluster %q: instant %v (raw %v, err %v), want %v from raw samples", c, vec, raw, err, v)
		}
		expr, err := sc.apply(`sum(last_over_time(gpulens_gpu_info[5m]))`)
		if err != nil {
			t.Fatal(err)
		}
		if eng, err := src.Query(ctx, expr, minute(60)); err != nil || len(eng) != 1 || float64(eng[0].Value) != v {
			t.Errorf("cluster %q: the engine answers %v (err %v), want %v", c, eng, err, v)
		}
		pass, raw, err := passWindow(ctx, src, sc, namedQuery{name: "p", expr: "gpulens_gpu_info", series: func([]stepSeries) {}}, w)
		if err != nil || !raw || len(pass.series) != 1 || pass.series[0].metric["uuid"] != model.LabelValue("GPU-"+c) {
			t.Errorf("cluster %q: pass %v (raw %v, err %v), want GPU-%s's series alone from raw samples", c, pass.series, raw, err, c)
		}
		if pass.release != nil {
			pass.release()
		}
	}
}

// TestClusterValues: the label's values on the exporter's series, ""
// for series without it; a name that is not a label name is refused.
func TestClusterValues(t *testing.T) {
	f := newFleet(t)
	for _, c := range []string{"us", "eu", ""} {
		extra := []string{"cluster", c}
		if c == "" {
			extra = nil
		}
		f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-"+c, "m", extra...), 1, 60, constant(1))
	}
	src := f.commit(t)
	w := fleet.Window{Start: t0, End: minute(60), Step: time.Minute}
	got, err := ClusterValues(context.Background(), src, native.Schema{}, w, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "eu", "us"}; !slices.Equal(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	// A cluster that reported for two minutes between two of the probe's
	// instants, ended by a staleness marker, and one that reported only in
	// the last minutes of the window: both are clusters of the window.
	f = newFleet(t)
	f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-a", "m", "cluster", "steady"), 1, 240, constant(1))
	f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-b", "m", "cluster", "brief"), 121, 122, constant(1))
	f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-c", "m", "cluster", "late"), 239, 240, constant(1))
	w = fleet.Window{Start: t0, End: minute(240), Step: time.Minute}
	got, err = ClusterValues(context.Background(), f.commit(t), native.Schema{}, w, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"brief", "late", "steady"}; !slices.Equal(got, want) {
		t.Errorf("values %q, want %q: a cluster between the probe's instants was missed", got, want)
	}
	if _, err := ClusterValues(context.Background(), src, native.Schema{}, w, "not a label"); err == nil || !strings.Contains(err.Error(), `"not a label"`) {
		t.Errorf("error %v, want one naming the label", err)
	}
}
