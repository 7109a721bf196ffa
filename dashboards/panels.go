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

// The one place where Grafana options are chosen for each kind of panel.

// Legends name the node: every node has a "GPU 0" (dcgm-exporter #630).
const (
	gpuLegend = "{{node}} GPU {{gpu}}"
	migLegend = "{{node}} GPU {{gpu}} {{mig_profile}} #{{gpu_instance}}"
)

func ts(title, unit, desc string, w uint32, targets ...target) panel {
	return panel{kind: timeSeries, title: title, unit: unit, desc: desc, w: w, h: 8, targets: targets}
}

func ratio(title, desc string, w uint32, targets ...target) panel {
	p := ts(title, "percentunit", desc, w, targets...)
	p.min, p.max = ptr(0.0), ptr(1.0)
	return p
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

func valueMap(m map[string]string) map[string]dashboard.ValueMappingResult {
	out := map[string]dashboard.ValueMappingResult{}
	for k, v := range m {
		out[k] = dashboard.ValueMappingResult{Text: ptr(v)}
	}
	return out
}
