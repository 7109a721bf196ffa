package dashboards

import (
	"github.com/gpulens/gpulens/vocab"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/gpulens/gpulens/signals"
)

// The variables are multi-valued with an "All" of .*, so that a selector
// such as node=~"$node" also matches series that lack the label (a
// Prometheus without a cluster label, a GPU no pod holds).

func labelVar(name, label, query string) cog.Builder[dashboard.VariableModel] {
	return queryVariable(name, label, query)
}

func queryVariable(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).
		Query(dashboard.StringOrMap{String: ptr(query)}).Definition(query).
		Datasource(datasource()).Multi(true).IncludeAll(true).AllValue(".*").
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
		Current(dashboard.VariableOption{Selected: ptr(true), Text: dashboard.StringOrArrayOfString{String: ptr("All")},
			Value: dashboard.StringOrArrayOfString{String: ptr("$__all")}})
}

// queryVar is labelVar for a query_result() query (signals.QueryResult),
// whose values Grafana takes from each result line with a regex: the
// value of the normalised label, whatever the exporter spelled it.
func queryVar(name, label, query string) cog.Builder[dashboard.VariableModel] {
	return queryVariable(name, label, query).Regex(`/` + name + `="([^"]+)"/`)
}

func clusterVar(s chart) cog.Builder[dashboard.VariableModel] {
	return queryVar("cluster", "Cluster", s.clusterValues())
}

func nodeVar(s chart) cog.Builder[dashboard.VariableModel] {
	return queryVar("node", "Node", s.nodeValues())
}

func namespaceVar(s chart) cog.Builder[dashboard.VariableModel] {
	return queryVar("namespace", "Namespace", s.namespaceValues())
}

func podVar(s chart) cog.Builder[dashboard.VariableModel] {
	return queryVar("pod", "Pod", s.podValues())
}

// priceVar is the price of one GPU-hour of a model that neither gpulens
// serve's price series nor a recording rule prices (see priced). It is
// NaN until the user sets it: an unknown price is unknown everywhere,
// never $0 and never invented (docs/MONEY.md), so the dollars of an
// unpriced model, and on Prometheus every sum that holds some of them,
// read NaN, not a made-up figure nor a partial sum that reads as the
// whole. PromQL reads NaN as a number, so the panels' queries stay valid.
// VictoriaMetrics drops NaN samples (its sum skips them), so there a
// total that holds an unpriced GPU shows the priced part: the
// description says so.
func priceVar() cog.Builder[dashboard.VariableModel] {
	return dashboard.NewTextBoxVariableBuilder("gpu_hourly_price").Label("$ per GPU-hour").
		Description("Price of one GPU-hour in USD, for GPU models that gpulens serve's gpulens_price_gpu_hour_usd does not price, when the recording rule cluster:gpulens_gpu_hourly_price_usd:config is absent. NaN (the default) leaves their price unknown, never a guess: on Prometheus every dollar figure that holds such a GPU reads NaN; VictoriaMetrics drops NaN, so there their own figures are empty and a total shows only the priced part. Set a number to price them all alike.").
		DefaultValue(dashboard.StringOrMap{String: ptr(unknownPrice)}).
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ptr(unknownPrice)},
			Value: dashboard.StringOrArrayOfString{String: ptr(unknownPrice)}})
}

// unknownPrice is $gpu_hourly_price's default: PromQL's not-a-number,
// which any arithmetic keeps, so an unpriced GPU's dollars stay unknown.
const unknownPrice = "NaN"

// teamVar is the label teams are told apart by: namespace, or a team
// label that relabelling or kube-state-metrics joins put on the series.
func teamVar() cog.Builder[dashboard.VariableModel] {
	return dashboard.NewCustomVariableBuilder("team_label").Label("Team by").
		Values(dashboard.StringOrMap{String: ptr(signals.LabelNamespace + "," + vocab.TeamLabel)}).AllowCustomValue(true).
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ptr("namespace")},
			Value: dashboard.StringOrArrayOfString{String: ptr("namespace")}})
}
