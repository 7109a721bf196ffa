package query

import (
	"cmp"
	"context"
	"regexp"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
	"github.com/prometheus/common/model"
)

// Analyze runs the query set over w and joins the answers, sharded when
// one query over the whole fleet would exceed DefaultMaxSamples
// (AnalyzeSharded).
func Analyze(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window) (*fleet.Result, error) {
	return AnalyzeSharded(ctx, src, sch, w, Sharding{})
}

func newAnalysis(sch signals.Schema, w fleet.Window) *analysis {
	return &analysis{
		w:      w,
		allocs: map[fleet.AllocationKey]*fleet.Allocation{},
		gpus:   map[fleet.GPUKey]*fleet.GPU{},
		res:    &fleet.Result{Schema: sch.Name(), Window: w, ExpectedSteps: w.ExpectedSteps()},

		hostPods: hostPodsOf(sch),

		workloadSteps: map[fleet.WorkloadKey]*workloadPerStep{},
		podOwners:     map[fleet.PodRef]fleet.Owner{}, setOwners: map[fleet.PodRef]fleet.Owner{}, jobOwners: map[fleet.PodRef]fleet.Owner{},
	}
}

type namedQuery struct {
	name string
	expr string
	// apply takes each sample of an instant query's answer; series, when
	// set instead, makes the query a pass: expr is evaluated at every
	// step of the window and series takes the whole matrix.
	apply  func(*model.Sample)
	series func([]stepSeries)
}

type analysis struct {
	w      fleet.Window
	res    *fleet.Result
	allocs map[fleet.AllocationKey]*fleet.Allocation
	gpus   map[fleet.GPUKey]*fleet.GPU
	// workloadSteps are the per-step figures of each workload, which
	// cannot be composed from its allocations' own.
	workloadSteps map[fleet.WorkloadKey]*workloadPerStep
	// podOwners, setOwners and jobOwners are kube-state-metrics' owner
	// references of GPU pods, ReplicaSets and Jobs.
	podOwners, setOwners, jobOwners map[fleet.PodRef]fleet.Owner
	// gpuSharingSteps counts steps per sharing mode and GPU.
	gpuSharingSteps map[fleet.GPUKey]map[vocab.Sharing]int
	sharingChanged  int
	// allocModes are each allocation's labellings (settleAllocModes).
	allocModes map[fleet.AllocationKey][]*allocMode
	// missingNotes say which optional signals had no fields (coverage.go).
	missingNotes []string
	// exporterNodes are the nodes of dcgm-exporter pods that named
	// themselves in the host label; resolvedHosts and unresolvedHosts
	// count the renaming (hosts.go).
	exporterNodes   map[string]string
	hostPods        *regexp.Regexp
	resolvedHosts   int
	unresolvedHosts map[string]bool
	// claims are the ResourceClaims each allocation was seen with, and
	// for how many steps (claims.go).
	claims map[fleet.AllocationKey][]claimSeen
	// pass is what the passes (passQueries) carry from one signal to
	// another.
	pass passState
	// shares folds each allocation's share runs out of the passes, and
	// the views of them Sharding asks for: the utilization over time
	// (TimelinePoints), each allocation's use at every step and each
	// GPU's and allocation's hours (Lanes).
	shares *shareFold
	// xids are the application XIDs raised on each GPU, with the
	// allocations that held it then (health.go).
	xids map[fleet.GPUKey][]*xidRaised
	// restarts and terminations are kube-state-metrics' record of the
	// allocations' containers' deaths (restarts.go).
	restarts map[fleet.AllocationKey][]fleet.Restart
	// metricNames are the metric names the window holds, where listed
	// (missingSignals); nil where not, and every query then runs.
	metricNames  []string
	terminations map[containerRef]*fleet.Termination
}

// window is the analysis window as the schemas' expressions take it.
func (a *analysis) window() signals.Over {
	return signals.Over{Range: rangeStr(a.w), Step: stepStr(a.w), Apply: a.over}
}

// over is fn over expr evaluated at every step of the window.
func (a *analysis) over(fn signals.Fn, expr string) string {
	return signals.Subquery(fn, expr, a.w.SubqueryRange(), stepStr(a.w))
}

// quantile is quantile_over_time(q, ...) of expr at every step of the
// window.
func (a *analysis) quantile(q float64, expr string) string {
	return signals.Quantile(q, expr, a.w.SubqueryRange(), stepStr(a.w))
}

func allocationKey(m model.Metric) fleet.AllocationKey {
	return fleet.AllocationKey{
		Node: string(m[signals.LabelNode]), Namespace: string(m[signals.LabelNamespace]),
		Pod: string(m[signals.LabelPod]), Container: string(m[signals.LabelContainer]),
		UUID: string(m[signals.LabelUUID]), GPUInstance: string(m[signals.LabelGPUInstance]),
	}
}

func gpuKey(m model.Metric) fleet.GPUKey {
	return fleet.GPUKey{Node: string(m[signals.LabelNode]), UUID: string(m[signals.LabelUUID])}
}

func (a *analysis) allocation(m model.Metric) *fleet.Allocation {
	return a.allocationOf(allocationKey(m))
}

func (a *analysis) allocationOf(k fleet.AllocationKey) *fleet.Allocation {
	x, ok := a.allocs[k]
	if !ok {
		x = &fleet.Allocation{AllocationKey: k}
		a.allocs[k] = x
	}
	return x
}

func (a *analysis) alloc(set func(*fleet.Allocation, float64)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.allocation(s.Metric), float64(s.Value)) }
}

// allocMode is one labelling of an allocation's series in the window: its
// sharing mode, with the share, model and profile it was last seen with,
// and how many steps it held.
type allocMode struct {
	sharing        vocab.Sharing
	model, profile string
	share          float64
	steps          int
}

func (a *analysis) allocModeOf(s model.Metric) *allocMode {
	k, sharing := allocationKey(s), vocab.Sharing(s[signals.LabelSharing])
	if a.allocModes == nil {
		a.allocModes = map[fleet.AllocationKey][]*allocMode{}
	}
	for _, m := range a.allocModes[k] {
		if m.sharing == sharing {
			return m
		}
	}
	m := &allocMode{sharing: sharing}
	a.allocModes[k] = append(a.allocModes[k], m)
	a.allocation(s)
	return m
}

// allocAttributes reads the labels that are not part of the key, with the
// value last seen.
func (a *analysis) allocAttributes(s *model.Sample) {
	m := a.allocModeOf(s.Metric)
	m.share, m.model, m.profile = float64(s.Value), string(s.Metric[signals.LabelModel]), string(s.Metric[signals.LabelMIGProfile])
}

// settleAllocModes gives each allocation the labelling it held longest.
// More than one means the sharing mode changed within the window: a
// profile or replica change, or, in dcgm-exporter's data without
// staleness markers, a pod replaced on the same GPU that lingered for the
// lookback beside its successor, which must not make the successor's GPU
// read as shared. Ties go to the lexically greatest mode (deterministic);
// a note counts the allocations.
func (a *analysis) settleAllocModes() {
	for k, modes := range a.allocModes {
		best := bestMode(modes)
		if len(modes) > 1 {
			a.sharingChanged++
		}
		x := a.allocationOf(k)
		x.Sharing, x.Share, x.Model, x.MIGProfile = best.sharing, best.share, best.model, best.profile
	}
}

// bestMode is the labelling held longest, ties to the lexically greatest
// mode; nil for none.
func bestMode(modes []*allocMode) *allocMode {
	var best *allocMode
	for _, m := range modes {
		if best == nil || m.steps > best.steps || (m.steps == best.steps && m.sharing > best.sharing) {
			best = m
		}
	}
	return best
}

func (a *analysis) gpuFor(m model.Metric) *fleet.GPU { return a.gpuOf(gpuKey(m)) }

func (a *analysis) gpuOf(k fleet.GPUKey) *fleet.GPU {
	g, ok := a.gpus[k]
	if !ok {
		g = &fleet.GPU{GPUKey: k}
		a.gpus[k] = g
	}
	return g
}

func (a *analysis) gpu(set func(*fleet.GPU, *model.Sample)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.gpuFor(s.Metric), s) }
}

func (a *analysis) gpuValue(set func(*fleet.GPU, float64)) func(*model.Sample) {
	return func(s *model.Sample) { set(a.gpuFor(s.Metric), float64(s.Value)) }
}

// finish derives hours and coverage, drops rows that only exist because a
// usage series outlived its allocation, sorts, and writes the notes.
func (a *analysis) finish() {
	a.finishPasses()
	a.shares.finish(a.res, a.gpus, a.allocs)
	a.finishXIDs()
	a.finishRestarts()
	a.settleAllocModes()
	a.settleAllocationPaths()
	expected := float64(a.res.ExpectedSteps)
	for _, x := range a.allocs {
		if x.Steps == 0 {
			// Usage without an allocation series is not an allocation;
			// the GPU-level figures still count it.
			continue
		}
		x.HeldHours = hours(a.w, float64(x.Steps))
		x.Coverage = float64(x.Steps) / expected
		x.UtilizationCoverage = min(1, float64(x.UtilizationSteps)/float64(x.Steps))
		a.res.Allocations = append(a.res.Allocations, *x)
	}
	for k, g := range a.gpus {
		g.ReportedHours = hours(a.w, float64(g.Steps))
		g.UnallocatedHours = max(0, g.ReportedHours-g.AllocatedHours)
		g.Coverage = float64(g.Steps) / expected
		best := -1
		for mode, n := range a.gpuSharingSteps[k] {
			if n > best || (n == best && mode < g.Sharing) {
				g.Sharing, best = mode, n
			}
		}
		a.res.GPUs = append(a.res.GPUs, *g)
	}
	a.resolveHosts()
	slices.SortFunc(a.res.Allocations, func(x, y fleet.Allocation) int { return compareAllocationKeys(x.AllocationKey, y.AllocationKey) })
	a.res.Workloads = a.workloads()
	a.res.PodOwners = a.podOwnersResolved()
	slices.SortFunc(a.res.GPUs, func(x, y fleet.GPU) int {
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID))
	})
	a.res.Notes = a.notes()
}
