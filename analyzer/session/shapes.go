package session

import (
	"github.com/gpulens/gpulens/analyzer/dra"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/report"
)

// shapeDifferences are the workloads that recommend and plan shape apart
// (issue 44: the two must agree or say why). Only the shape is compared —
// a whole GPU, a MIG profile, a time-sliced replica — since a
// recommendation that only releases or caps memory leaves the shape to
// whoever packs it.
func shapeDifferences(fs []findings.Finding, p *plan.Plan) []report.ShapeDifference {
	recommended := map[string]string{}
	for _, f := range fs {
		if r := f.Recommendation; r != nil {
			if shape := recommendedShape(r); shape != "" {
				recommended[f.Cluster+"\x00"+r.Workload.String()] = shape
			}
		}
	}
	var out []report.ShapeDifference
	seen := map[string]bool{}
	for _, pp := range p.Pools {
		for _, a := range pp.Assignments {
			key := pp.Cluster + "\x00" + a.Workload.String()
			rec, ok := recommended[key]
			planned := plannedShape(a)
			if !ok || planned == "" || planned == rec || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, report.ShapeDifference{Cluster: pp.Cluster, Workload: a.Workload.String(), Recommend: rec, Plan: planned,
				Why: whyApart(a)})
		}
	}
	return out
}

func recommendedShape(r *recommend.Recommendation) string {
	switch r.Action {
	case recommend.ActionMIGProfile:
		// Through the device plugin "nvidia.com/mig-1g.20gb", through DRA
		// "mig.nvidia.com 3g.40gb" (×N for several: the shape is the slice).
		p := dra.MIGProfileOf(r.To)
		if p == "" {
			return ""
		}
		return "a MIG " + p + " slice"
	case recommend.ActionTimeSlicing:
		return "a time-sliced replica"
	case recommend.ActionDedicatedGPU:
		return "a whole GPU"
	}
	return ""
}

func plannedShape(a plan.Assignment) string {
	switch a.Mode {
	case plan.ModeMIG:
		return "a MIG " + a.Slice + " slice"
	case plan.ModeTimeSlicing:
		return "a time-sliced replica"
	case plan.ModeWhole:
		return "a whole GPU"
	}
	return ""
}

// whyApart says why the plan's shape is not the recommendation's: the
// recommendation sizes the workload alone, from its own peaks; the plan
// packs every workload of the pool step by step, and one GPU's config
// (a MIG geometry, a time-slicing config) serves all its tenants.
func whyApart(a plan.Assignment) string {
	switch {
	case a.Training && a.Mode == plan.ModeTimeSlicing:
		return "training-like, but never running at the same time as its GPU's other jobs, so they take turns on it"
	case a.Training:
		return "training-like: the plan gives it a GPU or slice it does not share"
	case a.Mode == plan.ModeTimeSlicing:
		return "packed with tenants whose load and memory take turns, it fits a time-sliced GPU without a slice of its own"
	case a.Mode == plan.ModeMIG:
		return "the plan's MIG geometry for the whole GPU, chosen for all its tenants"
	}
	return "the plan keeps it on a GPU of its own in the layout that needs the fewest nodes"
}
