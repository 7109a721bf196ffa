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
// never $0 and never invented (docs/MONEY.md). PromQL reads NaN as a
// number, so the panels' queries stay valid; the cost panels' sums are
// no value wherever they hold a GPU of an unpriced model
// (knownOverRange), on Prometheus and on VictoriaMetrics alike: the
// latter drops NaN samples and its sum skips them, so the NaN alone would
// leave there the priced part, a smaller figure that reads as the whole.
func priceVar() cog.Builder[dashboard.VariableModel] {
	return dashboard.NewTextBoxVariableBuilder("gpu_hourly_price").Label("$ per GPU-hour").
		Description("Price of one GPU-hour in USD, for GPU models that gpulens serve's gpulens_price_gpu_hour_usd does not price, when the recording rule cluster:gpulens_gpu_hourly_price_usd:config is absent. NaN (the default) leaves their price unknown, never a guess: every dollar total that holds such a GPU (a team's, the fleet's) has no value, on Prometheus and VictoriaMetrics alike, never $0 nor the priced part alone. Set a number to price them all alike.").
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
