package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The dashboards are written as small specs rather than as SDK builder
// chains: the five dashboards share one look (units, legends, datasource,
// widths), and a spec states only what differs between panels, so the
// builders below are the single place where Grafana options are chosen.

type kind int

const (
	timeSeries kind = iota
	statPanel
	tablePanel
	barGauge
	heatmapPanel
)

// target is one PromQL query of a panel.
type target struct {
	expr, legend string
	// instant asks for one value at the end of the range: totals over the
	// range are computed by PromQL (`[$__range]`), never summed over time
	// by Grafana (dcgm-exporter's dashboard #146).
	instant bool
	// table returns the result as a table (one column per label).
	table bool
}

type panel struct {
	kind        kind
	title, desc string
	unit        string
	w, h        uint32
	targets     []target
	stacked     bool
	min, max    *float64
	decimals    *float64
	// capacityLine matches (by regexp) the series drawn as a dashed red
	// line instead of stacked: the capacity the stack must stay under.
	capacityLine string
	// renames are a table's column titles, by the column Grafana makes;
	// hidden are columns it leaves out (Time always).
	renames map[string]string
	hidden  []string
	// mappings are a table's value texts, by value.
	mappings map[string]string
}

type row struct {
	title  string
	panels []panel
}

// spec is one dashboard.
type spec struct {
	uid, title, desc string
	vars             []cog.Builder[dashboard.VariableModel]
	rows             []row
	timeFrom         string
}

func ptr[T any](v T) *T { return &v }

// datasource is the `datasource` variable every panel and query refers to.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}
}

func (t target) build(ref string) cog.Builder[variants.Dataquery] {
	q := prometheus.NewDataqueryBuilder().Expr(t.expr).RefId(ref).Datasource(datasource())
	if t.legend != "" {
		q = q.LegendFormat(t.legend)
	}
	if t.instant {
		q = q.Instant()
	} else {
		q = q.Range()
	}
	if t.table {
		q = q.Format(prometheus.PromQueryFormatTable)
	}
	return q
}

func refID(i int) string { return string(rune('A' + i)) }

func (p panel) build(id uint32) (cog.Builder[dashboard.Panel], error) {
	if p.w == 0 || p.h == 0 || p.desc == "" || p.unit == "" {
		return nil, fmt.Errorf("panel %q: width, height, description and unit are required", p.title)
	}
	var targets []cog.Builder[variants.Dataquery]
	for i, t := range p.targets {
		targets = append(targets, t.build(refID(i)))
	}
	switch p.kind {
	case timeSeries:
		b := timeseries.NewPanelBuilder().Id(id).Title(p.title).Description(p.desc).Unit(p.unit).Span(p.w).Height(p.h).
			Datasource(datasource()).Targets(targets).FillOpacity(10).LineWidth(1).ShowPoints(common.VisibilityModeNever).
			Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeTable).
				Placement(common.LegendPlacementBottom).ShowLegend(true).Calcs([]string{"mean", "max", "lastNotNull"}))
		if p.stacked {
			b = b.Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).FillOpacity(40)
		}
		if p.capacityLine != "" {
			b = b.OverrideByRegexp(p.capacityLine, []dashboard.DynamicConfigValue{
				{Id: "custom.stacking", Value: map[string]any{"mode": "none", "group": "A"}},
				{Id: "custom.fillOpacity", Value: 0},
				{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
				{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
			})
		}
		if p.min != nil {
			b = b.Min(*p.min)
		}
		if p.max != nil {
			b = b.Max(*p.max)
		}
		if p.decimals != nil {
			b = b.Decimals(*p.decimals)
		}
		return b, nil
	case statPanel:
		b := stat.NewPanelBuilder().Id(id).Title(p.title).Description(p.desc).Unit(p.unit).Span(p.w).Height(p.h).
			Datasource(datasource()).Targets(targets).GraphMode(common.BigValueGraphModeNone).
			ColorMode(common.BigValueColorModeValue).Orientation(common.VizOrientationAuto).
			ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
		if p.decimals != nil {
			b = b.Decimals(*p.decimals)
		}
		return b, nil
	case tablePanel:
		renames, hidden := map[string]any{}, map[string]any{"Time": true}
		for k, v := range p.renames {
			renames[k] = v
		}
		for _, c := range p.hidden {
			hidden[c] = true
		}
		// The footer is explicit: left unset, the SDK writes a null reducer,
		// which its own strict decoder refuses.
		b := table.NewPanelBuilder().Id(id).Title(p.title).Description(p.desc).Unit(p.unit).Span(p.w).Height(p.h).
			Datasource(datasource()).Targets(targets).
			Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{"sum"})).
			WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
			WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
				"excludeByName": hidden, "renameByName": renames,
			}})
		if len(p.mappings) > 0 {
			b = b.Mappings([]dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: valueMap(p.mappings)}}})
		}
		return b, nil
	case barGauge:
		b := bargauge.NewPanelBuilder().Id(id).Title(p.title).Description(p.desc).Unit(p.unit).Span(p.w).Height(p.h).
			Datasource(datasource()).Targets(targets).DisplayMode(common.BarGaugeDisplayModeGradient).
			Orientation(common.VizOrientationHorizontal).
			ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
		if p.min != nil {
			b = b.Min(*p.min)
		}
		if p.max != nil {
			b = b.Max(*p.max)
		}
		return b, nil
	case heatmapPanel:
		// Grafana buckets the per-GPU series itself (calculate), so the
		// distribution needs no histogram metric from the exporter.
		return heatmap.NewPanelBuilder().Id(id).Title(p.title).Description(p.desc).Unit(p.unit).Span(p.w).Height(p.h).
			Datasource(datasource()).Targets(targets).Calculate(true).
			Calculation(common.NewHeatmapCalculationOptionsBuilder().
				YBuckets(common.NewHeatmapCalculationBucketConfigBuilder().
					Mode(common.HeatmapCalculationModeCount).Value("10"))).
			Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).
				Scheme("Oranges").Scale(heatmap.HeatmapColorScaleExponential).Exponent(0.5).Steps(64)).
			Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true)).
			YAxis(heatmap.NewYAxisConfigBuilder().Unit(p.unit).Min(0).Max(1)), nil
	}
	return nil, fmt.Errorf("panel %q: unknown kind %d", p.title, p.kind)
}

// build turns a spec into the SDK's dashboard. Rows are laid out by the
// SDK's builder: each row starts a line, and each panel goes to the right
// of the previous one until 24 columns are filled.
func (s spec) build(tags []string) (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder(s.title).Uid(s.uid).Description(s.desc).Tags(tags).
		Editable().Tooltip(dashboard.DashboardCursorSyncCrosshair).Refresh("1m").
		Time(cmpOr(s.timeFrom, "now-24h"), "now").Timezone("browser").
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus"))
	for _, v := range s.vars {
		b = b.WithVariable(v)
	}
	// Ids are stable (the order of the spec), so links to a panel
	// (viewPanel=N) survive regeneration.
	var id uint32
	for _, r := range s.rows {
		id++
		b = b.WithRow(dashboard.NewRowBuilder(r.title).Id(id))
		for _, p := range r.panels {
			id++
			pb, err := p.build(id)
			if err != nil {
				return dashboard.Dashboard{}, fmt.Errorf("%s: %w", s.uid, err)
			}
			b = b.WithPanel(pb)
		}
	}
	return b.Build()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func valueMap(m map[string]string) map[string]dashboard.ValueMappingResult {
	out := map[string]dashboard.ValueMappingResult{}
	for k, v := range m {
		out[k] = dashboard.ValueMappingResult{Text: ptr(v)}
	}
	return out
}
