package dashboards

import (
	"context"
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
	// GPUs apart as gpulens does, and both drop the lost L4.
	for _, c := range []struct {
		panel string
		want  float64
	}{
		{"GPUs", 31}, {"Allocated GPUs", 27}, {"Allocated but idle GPUs", 3}, {"Unallocated GPUs", 4},
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
