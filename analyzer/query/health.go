package query

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
	"github.com/gpulens/gpulens/signals"
)

// xidApply adds one code's events to the GPU's faults, or to its
// workload errors when the code is one an application causes.
func xidApply(g *fleet.GPU, s *model.Sample) {
	v, code := float64(s.Value), string(s.Metric["xid"])
	if v <= 0 {
		return
	}
	n, codes := &g.XIDErrors, &g.XIDCodes
	if signals.ApplicationXID(code) {
		n, codes = &g.WorkloadXIDErrors, &g.WorkloadXIDCodes
	}
	*n += v
	if code != "" && !slices.Contains(*codes, code) {
		*codes = append(*codes, code)
		slices.SortFunc(*codes, func(x, y string) int {
			nx, _ := strconv.Atoi(x)
			ny, _ := strconv.Atoi(y)
			return cmp.Or(cmp.Compare(nx, ny), cmp.Compare(x, y))
		})
	}
}

// An application XID is tied to the allocation that held the GPU when it
// was raised: the schema's XIDRaised (one series per GPU, the code at each
// step it was first seen) joined, step by step, with the allocations seen
// at that step. The passes read XIDRaised at every step (xidRaisedPass,
// before the allocations, whose pass then looks each event's step up in
// its allocations' steps: no second read of them); the scans that hold
// the passes to account (scanqueries_test.go) ask the engine for the same
// join (xidHolders). Either way the holders are the
// schema's own allocations at that step, as the rest of the analysis sees
// them: relabelled tenants, a flapping pod label's co-tenants (dcgm.Held),
// no exporter pod.

// xidRaised is one application XID while its holders are gathered.
type xidRaised struct {
	at      model.Time
	code    string
	holders []fleet.XIDHolder
}

// labelAt is the label an engine's join of events to their holders puts
// each event's step in (Unix seconds): restartQueries', and the scans'
// xidHolders (scanqueries_test.go).
const labelAt = "at"

// xidRaisedPass reads XIDRaised at every step, for the passes.
func (a *analysis) xidRaisedPass(ans []stepSeries) {
	for _, s := range ans {
		k := gpuKey(s.metric)
		for i, f := range s.v {
			if scan.IsAbsent(f) {
				continue
			}
			if code, ok := xidCode(strconv.FormatFloat(f, 'f', -1, 64)); ok {
				a.xidAt(k, a.stepTime(i), code)
			}
		}
	}
}

// xidHeld adds the allocation k, with values v at the window's steps, to
// the holders of each application XID raised on its GPU at one of them.
func (a *analysis) xidHeld(k fleet.AllocationKey, v []float64) {
	first, step := firstStep(a.w), a.w.Step.Milliseconds()
	for _, e := range a.xids[fleet.GPUKey{Node: k.Node, UUID: k.UUID}] {
		d := int64(e.at) - first
		if d < 0 || d%step != 0 || d/step >= int64(len(v)) || scan.IsAbsent(v[d/step]) {
			continue
		}
		e.holders = append(e.holders, fleet.XIDHolder{Namespace: k.Namespace, Pod: k.Pod, Container: k.Container, GPUInstance: k.GPUInstance})
	}
}

// xidCode is an XID code as the xid label writes it ("13"), from a
// sample's value or count_values' label, and whether it is one an
// application raises.
func xidCode(v string) (string, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != math.Trunc(f) {
		return "", false
	}
	code := strconv.FormatFloat(f, 'f', -1, 64)
	return code, signals.ApplicationXID(code)
}

// xidAt is the event of code raised on k at the step at.
func (a *analysis) xidAt(k fleet.GPUKey, at model.Time, code string) *xidRaised {
	if a.xids == nil {
		a.xids = map[fleet.GPUKey][]*xidRaised{}
	}
	for _, e := range a.xids[k] {
		if e.at == at && e.code == code {
			return e
		}
	}
	e := &xidRaised{at: at, code: code}
	a.xids[k] = append(a.xids[k], e)
	return e
}

// finishXIDs gives each GPU its application XIDs, by time, each with its
// holders sorted. An event of a GPU no other signal reported is dropped.
func (a *analysis) finishXIDs() {
	for k, events := range a.xids {
		g, ok := a.gpus[k]
		if !ok {
			continue
		}
		g.WorkloadXIDEvents = make([]fleet.XIDEvent, 0, len(events))
		for _, e := range events {
			slices.SortFunc(e.holders, func(x, y fleet.XIDHolder) int {
				return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Pod, y.Pod), cmp.Compare(x.Container, y.Container), cmp.Compare(x.GPUInstance, y.GPUInstance))
			})
			g.WorkloadXIDEvents = append(g.WorkloadXIDEvents, fleet.XIDEvent{Time: e.at.Time().UTC(), Code: e.code, Holders: slices.Clip(e.holders)})
		}
		slices.SortFunc(g.WorkloadXIDEvents, func(x, y fleet.XIDEvent) int {
			n, _ := strconv.Atoi(x.Code)
			m, _ := strconv.Atoi(y.Code)
			return cmp.Or(x.Time.Compare(y.Time), cmp.Compare(n, m))
		})
	}
}
