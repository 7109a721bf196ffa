package dashboards

import (
	"errors"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The SDK decodes panel options and queries through a registry of
// variants; only the ones the dashboards use are registered, so a panel
// type the builders never chose fails the strict decode.
func init() {
	rt := cog.NewRuntime()
	rt.RegisterPanelcfgVariant(timeseries.VariantConfig())
	rt.RegisterPanelcfgVariant(stat.VariantConfig())
	rt.RegisterPanelcfgVariant(table.VariantConfig())
	rt.RegisterPanelcfgVariant(bargauge.VariantConfig())
	rt.RegisterPanelcfgVariant(heatmap.VariantConfig())
	rt.RegisterDataqueryVariant(prometheus.VariantConfig())
}

// query is one panel query as the tests see it.
type query struct {
	dashboard, panel, kind, expr string
	instant                      bool
}

// decode reads a generated dashboard strictly into the SDK's types.
func decode(t *testing.T, name string, data []byte) dashboard.Dashboard {
	t.Helper()
	var d dashboard.Dashboard
	// v0.0.22 returns an empty cog.BuildErrors, a non-nil error, from some
	// successful decodes: only errors it lists are failures.
	if err := d.UnmarshalJSONStrict(data); err != nil {
		var be cog.BuildErrors
		if !errors.As(err, &be) || len(be) > 0 {
			t.Fatalf("%s: strict decode: %v", name, err)
		}
	}
	return d
}

// panels are a dashboard's panels, rows excluded.
func panels(d dashboard.Dashboard) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			out = append(out, *p.Panel)
		}
		if p.RowPanel != nil {
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

func queries(t *testing.T, d dashboard.Dashboard) []query {
	t.Helper()
	var out []query
	for _, p := range panels(d) {
		for _, tg := range p.Targets {
			pq, ok := tg.(*prometheus.Dataquery)
			if !ok {
				t.Fatalf("%s / %s: target is %T, not a Prometheus query", *d.Uid, *p.Title, tg)
			}
			out = append(out, query{dashboard: *d.Uid, panel: *p.Title, kind: p.Type, expr: pq.Expr,
				instant: pq.Instant != nil && *pq.Instant})
		}
	}
	return out
}

// generated is every dashboard of every schema, strictly decoded.
func generated(t *testing.T) map[string][]dashboard.Dashboard {
	t.Helper()
	out := map[string][]dashboard.Dashboard{}
	for _, s := range Schemas() {
		files, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out[s] = append(out[s], decode(t, s+"/"+f.Name, f.JSON))
		}
	}
	return out
}

// grafanaVars are the values the tests give Grafana's variables: every
// multi-value variable at All (.*), the defaults of the others, and the
// built-in intervals of a one-hour range.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "4m", "$__range", "1h", "$__interval", "1m",
	"${datasource}", "test", "$gpu_hourly_price", "4", "{{$team_label}}", "{{namespace}}", "$team_label", "namespace",
	`"$cluster"`, `".*"`, `"$node"`, `".*"`, `"$namespace"`, `".*"`, `"$pod"`, `".*"`, `"$severity"`, `".*"`,
)

func substitute(expr string) string { return grafanaVars.Replace(expr) }
