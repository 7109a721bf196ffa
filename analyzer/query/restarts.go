package query

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
)

// What Kubernetes says of a GPU container's deaths: kube-state-metrics'
// restart counter, joined in the engine with the allocations and the
// GPU's memory at each step (signals.RestartsHeld), and the reasons and
// exit codes of its ends (signals.Terminations). Two instant queries in
// either plan, whatever the fleet's size; where the store has no
// kube-state-metrics both answer nothing and no allocation has restarts.

// labelBytes is the label RestartsHeld puts the GPU's memory in.
const labelBytes = "bytes"

// containerRef names a container as kube-state-metrics does.
type containerRef struct{ namespace, pod, container string }

func (a *analysis) restartQueries(sch signals.Schema) []namedQuery {
	if a.metricNames != nil && !slices.Contains(a.metricNames, signals.ContainerRestarts) {
		// No kube-state-metrics restarts in the window: the join would
		// still read every allocation over the window (a third more CPU
		// and half again the memory of a 1,000-GPU week's analysis,
		// docs/BENCHMARKS.md) to answer nothing.
		return nil
	}
	return []namedQuery{
		{name: "container restarts", expr: signals.RestartsHeld(a.window(), allocationPresence(sch), sch.GPUMemoryUsed(), labelBytes, labelAt), apply: a.restartHeld},
		{name: "container terminations", expr: signals.Terminations(rangeStr(a.w)), apply: a.terminated},
	}
}

// restartHeld reads one of RestartsHeld's series: a restart is dated by
// the first step that counts it, the one after the series' at. A restart
// after the window's last step, which the look ahead sees where the store
// has later data, is not the window's.
func (a *analysis) restartHeld(s *model.Sample) {
	at, err := strconv.ParseFloat(string(s.Metric[labelAt]), 64)
	bytes, errBytes := strconv.ParseFloat(string(s.Metric[labelBytes]), 64)
	if err != nil || errBytes != nil {
		return
	}
	seen := model.Time(math.Round(at * 1000)).Add(a.w.Step)
	if last := firstStep(a.w) + int64(a.w.ExpectedSteps()-1)*a.w.Step.Milliseconds(); int64(seen) > last {
		return
	}
	if a.restarts == nil {
		a.restarts = map[fleet.AllocationKey][]fleet.Restart{}
	}
	k := allocationKey(s.Metric)
	a.restarts[k] = append(a.restarts[k], fleet.Restart{Time: seen.Time().UTC(), GPUMemoryBytes: bytes})
}

// terminated reads one of Terminations' series: a reason or an exit code.
func (a *analysis) terminated(s *model.Sample) {
	if a.terminations == nil {
		a.terminations = map[containerRef]*fleet.Termination{}
	}
	c := containerRef{string(s.Metric[signals.LabelNamespace]), string(s.Metric[signals.LabelPod]), string(s.Metric[signals.LabelContainer])}
	t := a.terminations[c]
	if t == nil {
		t = &fleet.Termination{}
		a.terminations[c] = t
	}
	if r := string(s.Metric["reason"]); r != "" && !slices.Contains(t.Reasons, r) {
		t.Reasons = append(t.Reasons, r)
		slices.Sort(t.Reasons)
	}
	if code, err := strconv.Atoi(string(s.Metric["exitcode"])); err == nil {
		t.ExitCode, t.HasExitCode = code, true
	}
}

// finishRestarts gives each allocation its container's restarts, by
// time, and its ends. Restarts of a key no other signal reported are
// dropped, as are ends of a container that held no GPU.
func (a *analysis) finishRestarts() {
	for k, rs := range a.restarts {
		x, ok := a.allocs[k]
		if !ok {
			continue
		}
		slices.SortFunc(rs, func(p, q fleet.Restart) int {
			return cmp.Or(p.Time.Compare(q.Time), cmp.Compare(p.GPUMemoryBytes, q.GPUMemoryBytes))
		})
		x.Restarts = slices.CompactFunc(rs, func(p, q fleet.Restart) bool { return p.Time.Equal(q.Time) })
	}
	if len(a.terminations) == 0 {
		return
	}
	for _, x := range a.allocs {
		if t, ok := a.terminations[containerRef{x.Namespace, x.Pod, x.Container}]; ok {
			x.Terminated = t
		}
	}
}
