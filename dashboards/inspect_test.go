package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gpulens/gpulens/vocab"
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
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
	dashboard, panel, kind, expr, legend, ref, desc string
	instant                                         bool
}

// strictErr drops the empty cog.BuildErrors that v0.0.22's strict
// decoders return on success: Panel.UnmarshalJSONStrict ends in `return
// errs` with a nil slice, a non-nil error.
func strictErr(err error) error {
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}

// decode reads a generated dashboard strictly into the SDK's types. The
// panels and their queries are decoded one by one: through Dashboard and
// Panel, the bug above makes every panel and query fail with no error
// listed, and they are silently dropped.
func decode(t *testing.T, name string, data []byte) dashboard.Dashboard {
	t.Helper()
	var d dashboard.Dashboard
	if err := strictErr(d.UnmarshalJSONStrict(data)); err != nil {
		t.Fatalf("%s: strict decode: %v", name, err)
	}
	var raw struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	d.Panels = nil
	for i, rp := range raw.Panels {
		var typ struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(rp, &typ); err != nil {
			t.Fatal(err)
		}
		var err error
		if typ.Type == "row" {
			r := &dashboard.RowPanel{}
			err = strictErr(r.UnmarshalJSONStrict(rp))
			d.Panels = append(d.Panels, dashboard.PanelOrRowPanel{RowPanel: r})
		} else {
			p := &dashboard.Panel{}
			err = strictErr(p.UnmarshalJSONStrict(rp))
			if err == nil {
				p.Targets, err = decodeTargets(rp)
			}
			d.Panels = append(d.Panels, dashboard.PanelOrRowPanel{Panel: p})
		}
		if err != nil {
			t.Fatalf("%s: strict decode of panels[%d]: %v", name, i, err)
		}
	}
	if len(d.Panels) == 0 {
		t.Fatalf("%s: no panels", name)
	}
	return d
}

func decodeTargets(panel json.RawMessage) ([]variants.Dataquery, error) {
	var raw struct {
		Targets []json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(panel, &raw); err != nil {
		return nil, err
	}
	var out []variants.Dataquery
	for i, rt := range raw.Targets {
		q := &prometheus.Dataquery{}
		if err := strictErr(q.UnmarshalJSONStrict(rt)); err != nil {
			return nil, fmt.Errorf("targets[%d]: %w", i, err)
		}
		out = append(out, q)
	}
	return out, nil
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
			q := query{dashboard: *d.Uid, panel: *p.Title, kind: p.Type, expr: pq.Expr,
				instant: pq.Instant != nil && *pq.Instant}
			if p.Description != nil {
				q.desc = *p.Description
			}
			if pq.LegendFormat != nil {
				q.legend = *pq.LegendFormat
			}
			if pq.RefId != nil {
				q.ref = *pq.RefId
			}
			out = append(out, q)
		}
	}
	return out
}

var (
	generatedMu  sync.Mutex
	generatedVal map[string][]dashboard.Dashboard
)

// generatedOnce is generated, computed once for the package's tests.
func generatedOnce(t *testing.T) map[string][]dashboard.Dashboard {
	t.Helper()
	generatedMu.Lock()
	defer generatedMu.Unlock()
	if generatedVal == nil {
		generatedVal = generated(t)
	}
	return generatedVal
}

// generated is every dashboard of every schema, strictly decoded.
func generated(t *testing.T) map[string][]dashboard.Dashboard {
	t.Helper()
	out := map[string][]dashboard.Dashboard{}
	for _, s := range Schemas() {
		files, err := Generate(s, vocab.DefaultClusterLabel)
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
	"${datasource}", "test", "$gpu_hourly_price", unknownPrice, "{{$team_label}}", "{{namespace}}", "$team_label", "namespace",
	`"$cluster"`, `".*"`, `"$node"`, `".*"`, `"$namespace"`, `".*"`, `"$pod"`, `".*"`, `"$severity"`, `".*"`,
)

func substitute(expr string) string { return grafanaVars.Replace(expr) }
