package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// Groupings of the fleet's panels.
var (
	byModel        = []string{signals.LabelModel}
	byModelSharing = []string{signals.LabelModel, signals.LabelSharing}
)

// idleThreshold is the findings' and the rules' idle threshold
// (criteria's idle.max_avg_utilization), so that "idle" on the dashboards
// means what the GPULensGPUAllocatedIdle rule means.
func idleThreshold() float64 { return criteria.DefaultConfig().Idle.MaxAvgUtilization }

// idlePercent and idleHeldFor say the threshold and the rule's hold time
// in the panels' text.
func idlePercent() string { return fmt.Sprintf("%g%%", idleThreshold()*100) }
func idleHeldFor() string {
	return fmt.Sprintf("%g h (idle.min_held_hours)", criteria.DefaultConfig().Idle.MinHeldHours)
}

// allocatedGPUs is one series per physical GPU a pod holds (all of it, a
// replica or a MIG slice), by model and sharing mode.
func allocatedGPUs(s chart) string {
	return signals.MaxBy([]string{signals.LabelNode, signals.LabelUUID, signals.LabelModel, signals.LabelSharing}, s.alloc())
}

// idleAllocations are the allocations idle for the last hour: each
// container's use of its own share (not the whole GPU's load, which a
// busy co-tenant or MIG slice lifts) averaged over the trailing hour below
// the idle threshold. It is the GPULensGPUAllocatedIdle rules' expression
// (signals.IdleHour, of the recorded series where the schema's rules
// record it, as alerts/dcgm.go reads it); the rule fires once it has held
// for min_held_hours, which the panel does not wait for.
func idleAllocations(s chart) string {
	if s.rec != nil {
		return signals.IdleHourRecorded(s.utilization(), idleThreshold())
	}
	return signals.IdleHour(s.utilization(), idleThreshold())
}

// idleGPUs is allocatedGPUs where an allocation of the GPU is idle for
// the last hour (idleAllocations): a GPU counts once, however many of its
// tenants or slices idle.
func idleGPUs(s chart) string {
	return signals.AndOn(allocatedGPUs(s), signals.GPUKey, signals.Paren(idleAllocations(s)))
}

func unallocatedGPUs(s chart) string {
	return signals.UnlessOn(s.gpus(), signals.GPUKey, signals.Paren(s.alloc()))
}

func fleetOverview(s chart) spec {
	s = s.withoutTenantVars(false)
	return spec{
		uid: "gpulens-fleet-" + s.schema(), title: "gpulens / Fleet overview",
		desc: "GPUs by model and sharing mode, how busy they are, and what held and idle capacity costs.",
		vars: []cog.Builder[dashboard.VariableModel]{clusterVar(s), nodeVar(s), priceVar()},
		rows: []row{
			{"Capacity", []panel{
				{kind: statPanel, title: "GPUs", unit: "short", w: 6, h: 4,
					desc:    "Physical GPUs answering now (lost GPUs excluded); a MIG GPU counts once.",
					targets: []target{{expr: signals.Count(s.gpus()), instant: true}}},
				{kind: statPanel, title: "Allocated GPUs", unit: "short", w: 6, h: 4,
					desc:    "Physical GPUs of which a pod holds all, a replica or a MIG slice.",
					targets: []target{{expr: signals.Count(signals.CountBy(signals.GPUKey, allocatedGPUs(s))), instant: true}}},
				{kind: statPanel, title: "GPUs with an idle allocation", unit: "short", w: 6, h: 4,
					desc:    "Allocated GPUs of which a pod's allocation (the whole GPU, a replica or a MIG slice) used less than " + idlePercent() + " of its share on average over the last hour: the " + string(vocab.AlertGPUAllocatedIdle) + " alert's condition, at the idle-allocation finding's threshold. The alert fires once that has held for " + idleHeldFor() + "; the finding averages the whole analysis window.",
					targets: []target{{expr: signals.OrZero(signals.Count(signals.CountBy(signals.GPUKey, idleGPUs(s)))), instant: true}}},
				{kind: statPanel, title: "Unallocated GPUs", unit: "short", w: 6, h: 4,
					desc:    "GPUs reporting that no pod holds: capacity paid for and not schedulable demand.",
					targets: []target{{expr: signals.OrZero(signals.Count(unallocatedGPUs(s))), instant: true}}},
			}},
			{"By model and sharing mode", []panel{
				{kind: barGauge, title: "Allocated GPUs", unit: "short", w: 8, h: 8,
					desc:    "Allocated physical GPUs by model and sharing mode (none, time-slicing, mps, mig).",
					targets: []target{{expr: signals.CountBy(byModelSharing, allocatedGPUs(s)), legend: "{{model}} {{sharing}}", instant: true}}},
				{kind: barGauge, title: "GPUs with an idle allocation", unit: "short", w: 8, h: 8,
					desc:    "Allocated GPUs with an allocation idle for the last hour (as the stat above), by model and sharing mode.",
					targets: []target{{expr: signals.CountBy(byModelSharing, idleGPUs(s)), legend: "{{model}} {{sharing}}", instant: true}}},
				{kind: barGauge, title: "Unallocated GPUs", unit: "short", w: 8, h: 8,
					desc:    "GPUs no pod holds, by model.",
					targets: []target{{expr: signals.CountBy(byModel, unallocatedGPUs(s)), legend: "{{model}}", instant: true}}},
			}},
			{"Utilization", []panel{
				{kind: heatmapPanel, title: "GPU utilization distribution", unit: "percentunit", w: 12, h: 9,
					desc:    "How many GPUs run at each load, over time. A band at the bottom is idle capacity.",
					targets: []target{{expr: s.gpuUtil(), legend: "{{node}} GPU {{gpu}}"}}},
				{kind: timeSeries, title: "Utilization by model", unit: "percentunit", w: 12, h: 9, min: ptr(0.0),
					desc:    "Average load of the physical GPUs of each model; MIG GPUs count their slices' activity weighted by size.",
					targets: []target{{expr: signals.Agg("avg", byModel, s.gpuUtil()), legend: "{{model}}"}}},
			}},
			{"Cost", []panel{
				{kind: statPanel, title: "Held capacity", unit: "currencyUSD", w: 8, h: 4, decimals: ptr(0.0),
					desc:    "What the GPU shares pods held over the range cost per month (730 h), each GPU at its model's price (gpulens serve's, else the price recording rule or $gpu_hourly_price). No value while a pod of the range held a GPU of a model none of them prices: an unknown price is never $0, nor a total of the priced part.",
					targets: []target{{expr: heldCapacity(s), instant: true}}},
				{kind: statPanel, title: "Held but unused capacity", unit: "currencyUSD", w: 8, h: 4, decimals: ptr(0.0),
					desc:    "The part of held capacity the pods did not use (allocation minus measured use, netted over the range per pod), per month. No value while a pod of the range held a GPU of a model without a price, as held capacity.",
					targets: []target{{expr: unusedCapacity(s), instant: true}}},
				{kind: statPanel, title: "Unallocated capacity", unit: "currencyUSD", w: 8, h: 4, decimals: ptr(0.0),
					desc:    "What the GPU capacity no pod held cost per month, averaged over the range: the GPUs nobody held (a lost one too: it is paid for), and the free replicas and slices of shared ones. No value while a GPU of a model without a price reported in the range (gpulens serve's price, the price recording rule, $gpu_hourly_price), held or not.",
					targets: []target{{expr: unallocatedCapacity(s), instant: true}}},
			}},
		},
	}
}
