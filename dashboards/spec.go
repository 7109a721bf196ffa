package dashboards

import (
	"cmp"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
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

// build turns a spec into the SDK's dashboard. Rows are laid out by the
// SDK's builder: each row starts a line, and each panel goes to the right
// of the previous one until 24 columns are filled.
func (s spec) build(tags []string) (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder(s.title).Uid(s.uid).Description(s.desc).Tags(tags).
		Editable().Tooltip(dashboard.DashboardCursorSyncCrosshair).Refresh("1m").
		Time(cmp.Or(s.timeFrom, "now-24h"), "now").Timezone("browser").
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
