package dashboards

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/hami"
)

// hamiForms are HAMi's forms (signals/hami) in the team view's scope:
// $cluster, $node and $namespace, the team label kept. HAMi's series are
// HAMi's own, beside either exporter's, so both schemas read the same.
// The team view has no $pod.
func (c chart) hamiForms() hami.Forms {
	sc := c.podScope
	sc.Pod, sc.Keep = "", ""
	return hami.In(sc)
}

// hamiRow is the team view's HAMi tenants: what each team's containers
// hold of their GPUs through nvidia.com/gpucores and nvidia.com/gpumem
// (the larger of the two shares, which the ledger charges on the
// allocation basis) and what they used (the larger of their SM
// utilisation and memory share, the usage basis). The exporters see a
// HAMi GPU time-sliced, a tenant with a replica's share: only HAMi's
// series say what it really holds.
func hamiRow(c chart) row {
	h := c.hamiForms()
	held, used := gpuHours(h.HeldShare(), ""), gpuHours(h.UsedShare(), "")
	return row{"HAMi fractions", []panel{
		{kind: tablePanel, title: "HAMi GPU-hours by team", unit: "short", w: 24, h: 7,
			desc: "GPU-hours the team's HAMi tenants held (the larger of their nvidia.com/gpucores and nvidia.com/gpumem shares of the GPU, " +
				"from HAMi's scheduler) and used (the larger of their SM utilisation and memory share, from HAMi's vGPU monitor) over the range, " +
				"at the flat price (the recording rule cluster:gpulens_gpu_hourly_price_usd:config, else $gpu_hourly_price; unknown until one is set: NaN on Prometheus, nothing on VictoriaMetrics): HAMi's series carry no GPU model to join serve's per-model price on, so this panel is not the report's ledger to the cent. Empty where HAMi is not installed.",
			targets: []target{
				{expr: held, instant: true, table: true},
				{expr: used, instant: true, table: true},
				{expr: signals.Mul(held, flatPrice), instant: true, table: true},
				{expr: signals.Mul(used, flatPrice), instant: true, table: true},
			},
			renames: map[string]string{"Value #A": "Held GPU-hours", "Value #B": "Used GPU-hours",
				"Value #C": "Held cost ($)", "Value #D": "Used cost ($)"}},
		ts("HAMi gpucores and gpumem held", "short",
			"The GPUs each team's HAMi tenants hold through nvidia.com/gpucores (SMs) and nvidia.com/gpumem (memory), each as a share of the GPU, summed.", 12,
			target{expr: signals.SumBy(byTeam, h.HeldCores()), legend: "{{$team_label}} gpucores"},
			target{expr: signals.SumBy(byTeam, h.HeldMemory()), legend: "{{$team_label}} gpumem"}),
		ts("HAMi share held vs used", "short",
			"The GPUs each team's HAMi tenants hold (the larger of their cores and memory shares) and use (the larger of their SM utilisation and memory share).", 12,
			target{expr: signals.SumBy(byTeam, h.HeldShare()), legend: "{{$team_label}} held"},
			target{expr: signals.SumBy(byTeam, h.UsedShare()), legend: "{{$team_label}} used"}),
	}}
}
