package query

import (
	"fmt"
	"math"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/prometheus/common/model"
)

// attributionQueries read how each GPU's tenants were attributed
// (signals.GPUAttribution): the highest code that lasted, the layout that
// says least about the tenants being the one the figures must be read
// under. A schema that gives its per-step code is read as a pass and the
// sustain rule applied here (sustainedMax), instead of the engine
// evaluating a subquery within a subquery; the others' code is one instant
// query.
func (a *analysis) attributionQueries(sch signals.Schema) []namedQuery {
	if st, ok := sch.(stepAttributor); ok {
		return []namedQuery{{name: "gpu attribution", expr: st.StepAttribution(), series: func(ans []stepSeries) {
			n := signals.SustainSteps(a.w.Step)
			for _, s := range ans {
				if v, ok := sustainedMax(a.points(s.v), a.w.Step, n, a.w.End); ok {
					setAttribution(a.gpuFor(s.metric), v)
				}
			}
		}}}
	}
	return []namedQuery{{name: "gpu attribution", expr: sch.GPUAttribution(a.window()), apply: a.gpuValue(setAttribution)}}
}

// setAttribution gives g the attribution of a signals.GPUAttribution code.
func setAttribution(g *fleet.GPU, code float64) {
	c := int(code)
	g.Attribution = attributionNames[c%signals.AttributionRelabelled]
	g.Relabelled = c >= signals.AttributionRelabelled
}

// stepAttributor is a schema whose attribution code varies by step and is
// sustained over signals.SustainSteps (dcgm.Schema).
type stepAttributor interface{ StepAttribution() string }

// sustainedMax is max_over_time(min_over_time(x[n steps])) over the
// window, as dcgm.Schema.GPUAttribution asks the engine for: at every
// step of the grid from pts' first point to n-1 steps past its last (and
// not past end), the lowest value of the points in the n steps ending
// there; the highest of those. A sliding-window minimum, so a week of
// minutes costs one walk.
func sustainedMax(pts []model.SamplePair, step time.Duration, n int, end time.Time) (float64, bool) {
	if len(pts) == 0 {
		return 0, false
	}
	st := step.Milliseconds()
	idx := func(p model.SamplePair) int64 { return floorDiv(int64(p.Timestamp), st) }
	last := min(idx(pts[len(pts)-1])+int64(n)-1, floorDiv(end.UnixMilli(), st))
	best, found := math.Inf(-1), false
	var window []int // indices into pts, their values increasing
	j := 0
	for g := idx(pts[0]); g <= last; g++ {
		for ; j < len(pts) && idx(pts[j]) <= g; j++ {
			for len(window) > 0 && pts[window[len(window)-1]].Value >= pts[j].Value {
				window = window[:len(window)-1]
			}
			window = append(window, j)
		}
		for len(window) > 0 && idx(pts[window[0]]) <= g-int64(n) {
			window = window[1:]
		}
		if len(window) > 0 {
			best, found = max(best, float64(pts[window[0]].Value)), true
		}
	}
	return best, found
}

var attributionNames = map[int]string{
	signals.AttributionPerTenant:  fleet.AttributionPerTenant,
	signals.AttributionPerProcess: fleet.AttributionPerProcess,
	signals.AttributionCopies:     fleet.AttributionCopies,
	signals.AttributionOneTenant:  fleet.AttributionOneTenant,
}

// attributionNotes say, for the data-coverage section, which layouts were
// found among the GPUs that had tenants and what each cannot tell.
func (a *analysis) attributionNotes() []string {
	counts := map[string]int{}
	relabelled := 0
	for _, g := range a.res.GPUs {
		if g.Attribution != "" {
			counts[g.Attribution]++
		}
		if g.Relabelled {
			relabelled++
		}
	}
	var notes []string
	if relabelled > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs' series were relabelled by a ServiceMonitor with honorLabels: false: their tenants were read from %s, %s and %s, and the exporter's own pod is no tenant", relabelled,
			signals.Exported(signals.LabelPod), signals.Exported(signals.LabelNamespace), signals.Exported(signals.LabelContainer)))
	}
	if n := counts[fleet.AttributionCopies]; n > 0 {
		// Copies come from either of two installs the series cannot tell
		// apart without another query: the note names both.
		notes = append(notes, fmt.Sprintf("%d GPUs report the device's utilization and memory on every tenant (dcgm-exporter --kubernetes-virtual-gpus before 2025, or its default layout's pod label moving between a time-sliced GPU's co-tenants, dcgm-exporter #340): device figures are right, which tenant used them is not known", n))
	}
	if n := counts[fleet.AttributionOneTenant]; n > 0 {
		// A GPU one pod holds alone reads so under every layout but the
		// 2025 one: the flag is named as the cause of a time-sliced GPU
		// read so, not as the install's.
		notes = append(notes, fmt.Sprintf("%d GPUs show at most one pod per device: a time-sliced GPU read so (dcgm-exporter without --kubernetes-virtual-gpus) reads as held whole by one arbitrary tenant, and its co-tenants are not seen", n))
	}
	if perProcess := counts[fleet.AttributionPerProcess]; perProcess > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs have per-tenant figures from dcgm-exporter's per-process series (2025 releases, --kubernetes-virtual-gpus): each tenant's utilization and memory are its own processes'; other fields are the device's", perProcess))
	}
	return notes
}
