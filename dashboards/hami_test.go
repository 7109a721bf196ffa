package dashboards

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// hamiFigures: the team view's HAMi table on the demo fleet's HAMi node
// (exporter/sim/testdata/default.yaml), by hand from its limits, over a
// one-hour range: team-nlp's rag-embedder holds max(30% of the cores,
// 20/40 GiB) = 0.5 GPU, team-vision's caption-svc max(30%, 9/40) = 0.3,
// team-recsys's rerankers max(40%, 10/40) + max(50%, 12/40) = 0.9; each
// used less than it held, and more than nothing. The same in both
// schemas (HAMi's series are HAMi's), and $namespace keeps one team's.
func hamiFigures(t *testing.T, dbs map[string]*source.Embedded) {
	want := map[string]float64{"team-nlp": 0.5, "team-vision": 0.3, "team-recsys": 0.9}
	for _, schema := range Schemas() {
		held := hamiByTeam(t, dbs[schema], schema, "A", ".*")
		used := hamiByTeam(t, dbs[schema], schema, "B", ".*")
		if len(held) != len(want) {
			t.Errorf("%s: HAMi GPU-hours held by %v, want %v", schema, held, want)
		}
		for team, w := range want {
			if math.Abs(held[team]-w) > 1e-9 {
				t.Errorf("%s: %s held %v HAMi GPU-hours, want %v", schema, team, held[team], w)
			}
			if u := used[team]; u <= 0 || u >= held[team] {
				t.Errorf("%s: %s used %v HAMi GPU-hours of the %v it held", schema, team, u, held[team])
			}
		}
		if one := hamiByTeam(t, dbs[schema], schema, "A", "team-nlp"); len(one) != 1 || math.Abs(one["team-nlp"]-0.5) > 1e-9 {
			t.Errorf("%s: with $namespace team-nlp, HAMi GPU-hours held %v, want team-nlp's 0.5 alone", schema, one)
		}
	}
}

// hamiByTeam is the HAMi table's column ref by namespace, with $namespace
// at namespace.
func hamiByTeam(t *testing.T, db *source.Embedded, schema, ref, namespace string) map[string]float64 {
	t.Helper()
	for _, d := range generatedOnce(t)[schema] {
		for _, q := range queries(t, d) {
			if q.panel != "HAMi GPU-hours by team" || q.ref != ref {
				continue
			}
			expr := substitute(strings.ReplaceAll(q.expr, `"$namespace"`, `"`+namespace+`"`))
			vec, err := db.Query(context.Background(), expr, dataEnd)
			if err != nil {
				t.Fatalf("%s: HAMi table %s: %v", schema, ref, err)
			}
			out := map[string]float64{}
			for _, s := range vec {
				out[string(s.Metric[model.LabelName("namespace")])] = float64(s.Value)
			}
			return out
		}
	}
	t.Fatalf("%s: no HAMi table", schema)
	return nil
}

// hamiHeld: in both schemas (dcgm-exporter's UUID, tenants in
// exported_*), the money panels' allocations (chart.held) charge the
// HAMi node's tenants HAMi's share, by hand as in hamiFigures, where the
// exporters see each a replica of the GPU (dcgm-exporter a half: two
// tenants a GPU); every other allocation is the
// exporter's to the bit. HAMi's window use (TenantUsed) is more than
// nothing and less than each tenant holds.
func hamiHeld(t *testing.T, dbs map[string]*source.Embedded) {
	want := map[string]float64{"rag-embedder": 0.5, "caption-svc": 0.3, "reranker-a": 0.4, "reranker-b": 0.5}
	key := func(m model.Metric) string {
		var b strings.Builder
		for _, l := range []model.LabelName{"node", "uuid", "namespace", "pod", "container", "sharing", "gpu_instance"} {
			b.WriteString(string(m[l]) + "/")
		}
		return b.String()
	}
	for _, schema := range Schemas() {
		db := dbs[schema]
		s := newChart(schemaSet[schema], vocab.DefaultClusterLabel)
		alloc := map[string]float64{}
		for _, a := range at(t, db, s.alloc()) {
			alloc[key(a.Metric)] = float64(a.Value)
		}
		got, differ := map[string]float64{}, 0
		for _, h := range at(t, db, s.held()) {
			pod := string(h.Metric["pod"])
			a, ok := alloc[key(h.Metric)]
			if !ok {
				t.Errorf("%s: held %v, no such allocation", schema, h.Metric)
			}
			if w, hami := want[pod]; hami {
				got[pod] = float64(h.Value)
				if a != w {
					differ++
				}
				if math.Abs(float64(h.Value)-w) > 1e-9 {
					t.Errorf("%s: %s held %v (the exporter's replica %v), want HAMi's %v", schema, pod, h.Value, a, w)
				}
			} else if float64(h.Value) != a {
				t.Errorf("%s: %s held %v, the exporter's %v: not a HAMi tenant", schema, pod, h.Value, a)
			}
		}
		if len(got) != len(want) || differ == 0 {
			t.Errorf("%s: HAMi tenants held %v, want %v, not all the exporter's replicas", schema, got, want)
		}
		used := at(t, db, substitute(s.hami().TenantUsed("1h", analyzerStep)))
		if len(used) != len(want) {
			t.Errorf("%s: HAMi window use of %d tenants, want %d", schema, len(used), len(want))
		}
		for _, u := range used {
			if w := want[string(u.Metric["pod"])]; u.Value <= 0 || float64(u.Value) >= w {
				t.Errorf("%s: %s used %v over the window of the %v it holds", schema, u.Metric["pod"], u.Value, w)
			}
		}
	}
}
