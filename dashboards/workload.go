package dashboards

import (
	"slices"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/gpulens/gpulens/signals"
)

// anyPod widens an expression's pod and namespace filters: co-tenants of
// the selected pod are other pods.
func anyPod(expr string) string {
	return strings.NewReplacer(`"$pod"`, `".*"`, `"$namespace"`, `".*"`).Replace(expr)
}

func workloadDrillDown(s chart) spec {
	const podLegend = "{{namespace}}/{{pod}}"
	// The physical GPUs of which the selected pods hold a share below 1
	// outside MIG: time-sliced or MPS, where tenants' memory is not isolated.
	shared := signals.UnlessOn(signals.MaxBy(signals.GPUKey, signals.Below(signals.Paren(s.alloc()), 1)), signals.GPUKey, signals.Paren(s.migMemTotal()))
	byPod := []string{signals.LabelNamespace, signals.LabelPod}
	return spec{
		uid: "gpulens-workload-" + s.schema(), title: "gpulens / Workload drill-down", timeFrom: "now-24h",
		desc: "A pod's use against its allocation, and on shared GPUs its co-tenants' memory against the device's capacity.",
		vars: []cog.Builder[dashboard.VariableModel]{clusterVar(s), nodeVar(s), namespaceVar(s), podVar(s)},
		rows: []row{
			{"Use against allocation", []panel{
				ts("Allocated and used GPU", "short", "The GPU share the pod holds (1 whole, 1/replicas shared, the slices of its MIG profile over the GPU's on MIG) and the part of it it uses.", 12,
					target{expr: signals.SumBy(byPod, s.alloc()), legend: podLegend + " allocated"},
					target{expr: signals.SumBy(byPod, s.used()), legend: podLegend + " used"}),
				ts("Use of its allocation", "percentunit", "How busy the pod keeps what it holds. Above 100% on a time-sliced GPU: it uses time its co-tenants leave idle.", 12,
					target{expr: signals.Div(signals.SumBy(byPod, s.used()), signals.SumBy(byPod, s.alloc())), legend: podLegend}),
			}},
			{"Memory", []panel{
				ts("GPU memory of the pod", "bytes", "GPU memory the pod's containers use, per GPU or MIG instance.", 12,
					target{expr: signals.SumBy(append(slices.Clone(byPod), signals.LabelNode, signals.LabelGPU, signals.LabelGPUInstance), s.podMemUsed()), legend: podLegend + " on " + gpuLegend}),
				{kind: timeSeries, title: "Co-tenants' memory on shared GPUs", unit: "bytes", w: 12, h: 8, stacked: true,
					capacityLine: ".* capacity$",
					desc: "Every tenant's memory on the time-sliced or MPS GPUs the pod shares, stacked against the device's memory (dashed). " +
						"Nothing isolates their memory: when the stack reaches the line, the next allocation fails with out-of-memory.",
					targets: []target{
						{expr: signals.AndOn(signals.SumBy(append(slices.Clone(byPod), signals.LabelNode, signals.LabelGPU, signals.LabelUUID), anyPod(s.podMemUsed())), signals.GPUKey, signals.Paren(shared)), legend: podLegend + " on " + gpuLegend},
						{expr: signals.AndOn(signals.MaxBy([]string{signals.LabelNode, signals.LabelGPU, signals.LabelUUID}, s.memTotal()), signals.GPUKey, signals.Paren(shared)), legend: gpuLegend + " capacity"},
					}},
			}},
			{"Where it runs", []panel{
				{kind: tablePanel, title: "Allocations", unit: "short", w: 24, h: 7,
					desc:    "The pod's containers and what they hold: node, GPU, model, sharing mode and MIG profile, with the share.",
					targets: []target{{expr: s.alloc(), instant: true, table: true}},
					// A recorded allocation (dcgm-exporter) carries its name.
					renames: map[string]string{"Value": "Share"}, hidden: []string{"__name__"}},
			}},
		},
	}
}
