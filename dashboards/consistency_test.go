package dashboards

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
)

// instant runs one panel query of a schema's dashboard at the end of the
// simulated window.
func instant(t *testing.T, db *source.Embedded, schema, uid, panel, ref string) model.Vector {
	t.Helper()
	for _, d := range generatedOnce(t)[schema] {
		if *d.Uid != uid+"-"+schema {
			continue
		}
		for _, q := range queries(t, d) {
			if q.panel == panel && q.ref == ref {
				vec, err := db.Query(context.Background(), substitute(q.expr), dataEnd)
				if err != nil {
					t.Fatalf("%s / %s: %v", uid, panel, err)
				}
				return vec
			}
		}
	}
	t.Fatalf("%s: no panel %q", uid, panel)
	return nil
}

// figures that must not depend on the schema, and the ones that must stay
// in range; computed on the demo fleet.
func consistentFigures(t *testing.T, dbs map[string]*source.Embedded) {
	// Counts of physical GPUs: dcgm-exporter tells MIG, whole and shared
	// GPUs apart as gpulens does, and both drop the lost L4. The DRA node
	// (exporter/sim/testdata/default.yaml) adds 4 GPUs: 3 held through
	// claims (one by an idle notebook), 1 unallocated; the HAMi node 2,
	// both held by busy tenants. A GPU with an idle allocation is one of
	// whose tenants or slices used under 5% of its share over the last
	// hour (the GPUAllocatedIdle rule's condition): of the scenario's
	// notebooks (idle but for a rare eight-minute burst) and batch workers
	// (idle in half their slots), in the window's last hour the MIG H100s 4
	// (bob's notebook) and 5 (parquet-decode between jobs), the H200's MIG
	// GPU 1 (four notebooks) and GPU 7 (grace's notebook), the A100's GPU 1
	// (etl-worker-1 between jobs) and GPU 4 (six notebooks); alice's
	// notebook ran cells in that hour. On the DRA node, peggy's notebook.
	for _, c := range []struct {
		panel string
		want  float64
	}{
		{"GPUs", 31 + 4 + 2}, {"Allocated GPUs", 27 + 3 + 2}, {"GPUs with an idle allocation", 6 + 1}, {"Unallocated GPUs", 4 + 1},
	} {
		for _, schema := range Schemas() {
			vec := instant(t, dbs[schema], schema, "gpulens-fleet", c.panel, "A")
			if len(vec) != 1 || float64(vec[0].Value) != c.want {
				t.Errorf("%s: fleet %q = %v, want %v", schema, c.panel, vec, c.want)
			}
		}
	}
	// Efficiency is used over allocated GPU-hours: within [0, 1] per team
	// (a time-sliced tenant may use more than its share, but a team's
	// whole allocation is used at most fully), and not vanishing.
	for _, schema := range Schemas() {
		vec := instant(t, dbs[schema], schema, "gpulens-team", "GPU-hours by team", "C")
		if len(vec) != 5 {
			t.Errorf("%s: efficiency of %d teams, want 5", schema, len(vec))
		}
		for _, s := range vec {
			if s.Value < 0.01 || s.Value > 1 {
				t.Errorf("%s: efficiency of %v = %v, outside [0.01, 1]", schema, s.Metric, s.Value)
			}
		}
	}
}

var (
	labelValues = regexp.MustCompile(`^label_values\((.+), ([A-Za-z_]+)\)$`)
	queryResult = regexp.MustCompile(`^query_result\((.+)\)$`)
)

// variablesFindValues: every query variable's label_values() names a label
// the schema's series carry, so its drop-down is not empty. cluster is
// left out (the simulation has none; All matches series without it), and
// so are the findings' variables (serve's series are not simulated).
func variablesFindValues(t *testing.T, dbs map[string]*source.Embedded) {
	for schema, ds := range generatedOnce(t) {
		for _, d := range ds {
			for _, v := range d.Templating.List {
				if v.Type != "query" || v.Query == nil || v.Query.String == nil {
					continue
				}
				var q, label string
				if m := labelValues.FindStringSubmatch(*v.Query.String); m != nil {
					if m[2] == "cluster" || strings.HasPrefix(m[1], findingMetric) {
						continue
					}
					q, label = "count by ("+m[2]+") ("+substitute(m[1])+")", m[2]
				} else if m := queryResult.FindStringSubmatch(*v.Query.String); m != nil && v.Regex != nil && v.Name == "cluster" {
					continue
				} else if m != nil && v.Regex != nil {
					// The regex takes the variable's own label from each line.
					if *v.Regex != "/"+v.Name+`="([^"]+)"/` {
						t.Errorf("%s: variable %s: regex %q does not take label %s", *d.Uid, v.Name, *v.Regex, v.Name)
					}
					q, label = substitute(m[1]), v.Name
				} else {
					t.Errorf("%s: variable %s: %q is neither label_values(selector, label) nor query_result(expr) with a regex", *d.Uid, v.Name, *v.Query.String)
					continue
				}
				vec, err := dbs[schema].Query(context.Background(), q, dataEnd)
				if err != nil {
					t.Errorf("%s: variable %s: %v", *d.Uid, v.Name, err)
					continue
				}
				values := 0
				for _, s := range vec {
					if s.Metric[model.LabelName(label)] != "" {
						values++
					}
				}
				if values < 2 {
					t.Errorf("%s: variable %s finds %d values of %s", *d.Uid, v.Name, values, label)
				}
			}
		}
	}
}
