package dashboards

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// signalPair is one signal as the analysis evaluates it (the schema with
// no scope) and as a dashboard panel charts it (the chart's expression,
// in the dashboards' scope).
type signalPair struct {
	name            string
	analysis, panel string
	// tenant is true for the per-pod signals, which $namespace and $pod
	// narrow.
	tenant bool
}

func signalPairs(sch signals.Schema, c chart) []signalPair {
	sigs := []signalPair{
		{"gpus", signals.Answering(sch), c.gpus(), false},
		{"gpu utilization", sch.GPUUtilization(), c.gpuUtil(), false},
		{"gpu memory used", sch.GPUMemoryUsed(), c.memUsed(), false},
		{"gpu memory total", sch.GPUMemoryTotal(), c.memTotal(), false},
		{"mig utilization", sch.MIGUtilization(), c.migUtil(), false},
		{"mig memory used", sch.MIGMemoryUsed(), c.migMemUsed(), false},
		{"mig memory total", sch.MIGMemoryTotal(), c.migMemTotal(), false},
		{"power", sch.Power(), c.power(), false},
		{"temperature", sch.Temperature(), c.temperature(), false},
		{"clock", sch.Clock(), c.clock(), false},
		{"throttle", sch.Throttle(), c.throttle(), false},
		{"xid events", sch.XIDEventsIn("4m"), c.xidEvents(), false},
		{"ecc uncorrected", sch.ECCUncorrectedIn("4m"), c.eccUncorrected(), false},
		{"remapped rows", sch.RemappedRows(), c.remappedRows(), false},
		{"remap failed", sch.RemapFailed(), c.remapFailed(), false},
		{"allocation", sch.Allocation(), c.alloc(), true},
		{"used", signals.Used(sch), c.used(), true},
		{"memory used", sch.MemoryUsed(), c.podMemUsed(), true},
		// The team dashboard keeps $team_label through the tenants'
		// aggregations (namespace here), and has no $pod.
		{"allocation by team", sch.Allocation(), c.withoutTenantVars(true).withTeam().alloc(), true},
		{"used by team", signals.Used(sch), c.withoutTenantVars(true).withTeam().used(), true},
	}
	for _, r := range []string{signals.ProfSMActive, signals.ProfSMOccupancy, signals.ProfTensorActive, signals.ProfDRAMActive} {
		sigs = append(sigs,
			signalPair{"profiling " + r, sch.Profiling(r), c.prof(r), false},
			signalPair{"mig profiling " + r, sch.MIGProfiling(r), c.migProf(r), false})
	}
	return sigs
}

// signalsAgree: for every signal and both exporters, the analysis's
// expression and the dashboard panel's, evaluated by the Prometheus engine
// on the same store, give the same values, series for series; the panel's
// scope narrows to the node and namespace chosen and to nothing for a
// cluster the store lacks; and a generated panel reads the expression.
func signalsAgree(t *testing.T, dbs map[string]*source.Embedded) {
	const node, namespace = "gpu-h100-01", "team-nlp"
	for _, store := range []struct{ name, db string }{
		{"native", "native"}, {"dcgm-exporter", "dcgm-exporter"}, {"dcgm-exporter", stockDB},
	} {
		name := store.name
		sch, c, db := schemaSet[name], newChart(schemaSet[name], vocab.DefaultClusterLabel), dbs[store.db]
		var panels []string
		for _, d := range generatedOnce(t)[name] {
			for _, q := range queries(t, d) {
				panels = append(panels, q.expr)
			}
		}
		for _, sig := range signalPairs(sch, c) {
			t.Run(store.db+"/"+sig.name, func(t *testing.T) {
				read := false
				for _, p := range panels {
					read = read || strings.Contains(p, sig.panel) || strings.Contains(p, strings.ReplaceAll(sig.panel, "$__rate_interval", "$__range"))
				}
				if !read {
					t.Errorf("no panel of the %s dashboards reads %s", name, sig.name)
				}
				all := values(t, db, sig.analysis, nil)
				if len(all) == 0 && !optionalSignal(sig.name) && store.db != stockDB {
					t.Fatalf("the analysis's %s is empty on the demo fleet", sig.name)
				}
				compare(t, "every node", all, values(t, db, substitute(sig.panel), nil))
				onNode := map[string]string{"node": node}
				compare(t, "node "+node, values(t, db, sig.analysis, onNode),
					values(t, db, substitute(strings.ReplaceAll(sig.panel, `"$node"`, `"`+node+`"`)), nil))
				if sig.tenant {
					inNS := map[string]string{"namespace": namespace}
					compare(t, "namespace "+namespace, values(t, db, sig.analysis, inNS),
						values(t, db, substitute(strings.ReplaceAll(sig.panel, `"$namespace"`, `"`+namespace+`"`)), nil))
				}
				if got := values(t, db, substitute(strings.ReplaceAll(sig.panel, `"$cluster"`, `"elsewhere"`)), nil); len(got) != 0 {
					t.Errorf("cluster elsewhere: %d series, want none: a selector outside the scope", len(got))
				}
			})
		}
	}
}

// optionalSignal are the signals the demo fleet does not produce on every
// exporter (no remap failure, no ECC error, no XID in the last minutes).
func optionalSignal(name string) bool {
	switch name {
	case "xid events", "ecc uncorrected", "remap failed", "remapped rows", "throttle":
		return true
	}
	return strings.HasPrefix(name, "profiling ") || strings.HasPrefix(name, "mig profiling ")
}

// values evaluates expr at the end of the data, keyed by its labels less
// the GPU's index (the dashboards keep it for legends) and the metric
// name (a panel may read a signal recorded), keeping only the series
// whose labels match only.
func values(t *testing.T, db *source.Embedded, expr string, only map[string]string) map[string]float64 {
	t.Helper()
	vec, err := db.Query(context.Background(), expr, dataEnd)
	if err != nil {
		t.Fatalf("%v\n%s", err, expr)
	}
	out := map[string]float64{}
	for _, s := range vec {
		m := s.Metric.Clone()
		delete(m, model.LabelName(signals.LabelGPU))
		delete(m, model.MetricNameLabel)
		keep := true
		for k, v := range only {
			keep = keep && string(m[model.LabelName(k)]) == v
		}
		if !keep {
			continue
		}
		k := m.String()
		if _, dup := out[k]; dup {
			t.Fatalf("two series of %s", k)
		}
		out[k] = float64(s.Value)
	}
	return out
}

func compare(t *testing.T, where string, want, got map[string]float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: the panel has %d series, the analysis %d:\npanel:    %v\nanalysis: %v", where, len(got), len(want), keys(got), keys(want))
		return
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: %s = %v on the panel, %v in the analysis", where, k, fmtValue(g, ok), w)
		}
	}
}

func fmtValue(v float64, ok bool) string {
	if !ok {
		return "missing"
	}
	return fmt.Sprint(v)
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
