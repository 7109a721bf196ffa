package reclaim

import (
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/pipeline"
)

// Simulated is a simulated cluster's analysis as Preview reads it
// (gpulens demo, whose fleet has no API server): the simulator stands in
// for one, so the workloads and their owners are those the analysis saw
// holding GPUs (an owner from the pods' names is the simulator's own, not
// a guess), and a workload was created when it first held its GPUs. The
// objects are the ones the reclaimer acts on (Deployments, StatefulSets,
// Jobs, CronJobs) that hold GPUs at the window's end; gpus counts the
// GPUs every workload, bare pods included, holds then.
func Simulated(pa *pipeline.Analysis, cluster string) (Analysis, []Object, map[Ref]int) {
	a := FromPipeline(pa, cluster)
	a.Partial = slices.DeleteFunc(a.Partial, func(s string) bool { return s == ClusterNotRead })
	a.Findings = slices.Clone(a.Findings)
	for i := range a.Findings {
		a.Findings[i].WorkloadSource = findings.SourceAPI
	}
	held := map[Ref]float64{}
	for _, w := range pa.Current.Workloads {
		if w.Cluster == cluster {
			r := Ref{w.Namespace, kindOf(w.Kind), w.Name}
			held[r] = max(held[r], w.HeldHours)
		}
	}
	byRef := map[Ref]*Object{}
	uuids := map[Ref]map[string]bool{}
	var refs []Ref
	for _, al := range pa.Current.Allocations {
		if al.Cluster != cluster || al.SinceLastSeen > 0 || al.Workload == "" {
			continue // another cluster's, or released before the end
		}
		r := Ref{al.Namespace, kindOf(al.WorkloadKind), al.Workload}
		o := byRef[r]
		if o == nil {
			created := a.End.Add(-time.Duration(held[r] * float64(time.Hour)))
			o = &Object{Ref: r, Created: created, OptedIn: true}
			byRef[r], uuids[r] = o, map[string]bool{}
			refs = append(refs, r)
		}
		uuids[r][al.UUID] = true
		if !slices.Contains(o.Pods, al.Pod) {
			o.Pods = append(o.Pods, al.Pod)
			o.Replicas++
		}
		if !slices.Contains(o.Nodes, al.Node) {
			o.Nodes = append(o.Nodes, al.Node)
		}
	}
	var objs []Object
	gpus := map[Ref]int{}
	for _, r := range refs {
		gpus[r] = len(uuids[r])
		if acted(r.Kind) {
			objs = append(objs, *byRef[r])
		}
	}
	return a, objs, gpus
}

// kindOf is a workload kind as findings name it: a pod no controller
// owns is a Pod.
func kindOf(k string) string {
	if k == "" {
		return "Pod"
	}
	return k
}
