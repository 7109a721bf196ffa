package sim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpulens/gpulens/signals/hami"
)

// validator checks the semantics of a decoded scenario, reporting through
// the decoder so that every error carries the line of its field.
type validator struct {
	at *decoder
}

func (v *validator) errAt(path, format string, args ...any) { v.at.errAt(path, format, args...) }

func (v *validator) scenario(sc *Scenario) {
	if len(sc.Nodes) == 0 {
		v.errAt("nodes", "no nodes")
	}
	nodes := map[string]string{}
	pods := map[string]string{}
	for i := range sc.Nodes {
		v.node(&sc.Nodes[i], fmt.Sprintf("nodes[%d]", i), nodes, pods)
	}
	if _, ok := hami.ParseEra(sc.HAMi.Metrics); sc.HAMi.Metrics != "" && !ok {
		v.errAt("hami.metrics", "%s", errUnknown("HAMi metric era", sc.HAMi.Metrics, "legacy, current"))
	}
}

// node validates one node; nodes and pods map names already seen to the
// path that declared them (pod names are unique per namespace cluster-wide).
func (v *validator) node(n *Node, path string, nodes, pods map[string]string) {
	switch prev, dup := nodes[n.Name]; {
	case n.Name == "":
		v.errAt(path+".name", "required")
	case !isDNSSubdomain(n.Name):
		v.errAt(path+".name", "%q is not a valid node name (lower-case RFC 1123 subdomain)", n.Name)
	case dup:
		v.errAt(path+".name", "duplicate node name %q (also %s)", n.Name, prev)
	default:
		nodes[n.Name] = path
	}
	sys, ok := systems[n.System]
	if !ok {
		v.errAt(path+".system", "%s", errUnknown("system", n.System, systemNames()))
		sys = nil
	}
	count := n.GPUs
	if count == 0 {
		count = defaultGPUsPerNode
	}
	if n.GPUs < 0 || n.GPUs > maxGPUsPerNode {
		v.errAt(path+".gpus", "%d GPUs out of range (want 1..%d, or 0 for %d)", n.GPUs, maxGPUsPerNode, defaultGPUsPerNode)
		return
	}
	layout := buildLayout(n, sys, count, path, v.errAt)
	for i := range n.Pods {
		v.pod(&n.Pods[i], fmt.Sprintf("%s.pods[%d]", path, i), sys, layout, pods)
	}
	v.claims(n, path, layout)
	if sys != nil {
		v.occupancy(n, path, sys, layout)
	}
	for i, f := range n.Faults {
		v.fault(f, fmt.Sprintf("%s.faults[%d]", path, i), count)
	}
}

const loadNames = "training, inference, notebook, batch, leak"

func knownLoad(l string) bool {
	switch l {
	case LoadTraining, LoadInference, LoadNotebook, LoadBatch, LoadLeak:
		return true
	}
	return false
}

func (v *validator) pod(p *Pod, path string, sys *system, layout []gpuLayout, pods map[string]string) {
	switch {
	case p.Namespace == "":
		v.errAt(path+".namespace", "required")
	case !isDNSLabel(p.Namespace):
		v.errAt(path+".namespace", "%q is not a valid namespace (lower-case RFC 1123 label)", p.Namespace)
	}
	switch {
	case p.Name == "":
		v.errAt(path+".name", "required")
	case !isDNSSubdomain(p.Name):
		v.errAt(path+".name", "%q is not a valid pod name (lower-case RFC 1123 subdomain)", p.Name)
	}
	if p.Namespace != "" && p.Name != "" {
		key := p.Namespace + "/" + p.Name
		if prev, dup := pods[key]; dup {
			v.errAt(path+".name", "duplicate pod %s (also %s)", key, prev)
		} else {
			pods[key] = path
		}
	}
	if p.Container != "" && !isDNSLabel(p.Container) {
		v.errAt(path+".container", "%q is not a valid container name (lower-case RFC 1123 label)", p.Container)
	}
	if p.GPU < 0 || p.GPU >= len(layout) {
		v.errAt(path+".gpu", "GPU index %d out of range (node has %d GPUs: 0..%d)", p.GPU, len(layout), len(layout)-1)
	} else if l := layout[p.GPU]; l.mode == ModeMIG {
		if p.Instance < 0 || p.Instance >= len(l.instances) {
			v.errAt(path+".instance", "MIG instance %d out of range (GPU %d has %d: 0..%d)", p.Instance, p.GPU, len(l.instances), len(l.instances)-1)
		}
	} else if p.Instance != 0 {
		v.errAt(path+".instance", "GPU %d is not MIG-partitioned (sharing %s): instance must be unset", p.GPU, l.mode)
	}
	v.hamiLimits(p, path, layout)
	if !knownLoad(p.Load) {
		v.errAt(path+".load", "%s", errUnknown("load", p.Load, loadNames))
	}
	if !(p.Utilization >= 0 && p.Utilization <= 1) {
		v.errAt(path+".utilization", "%g out of range (want 0..1)", p.Utilization)
	}
	if p.Memory == 0 {
		v.errAt(path+".memory", "required (e.g. 20GiB)")
	}
	switch {
	case p.Load == LoadLeak && p.Growth == 0:
		v.errAt(path+".growth", "required for load leak (memory added per hour, e.g. 1GiB)")
	case p.Load != LoadLeak && p.Growth != 0:
		v.errAt(path+".growth", "only applies to load leak, not %q", p.Load)
	}
	if p.End != 0 && p.End <= p.Start {
		v.errAt(path+".end", "end %s is not after start %s", p.End, p.Start)
	}
	if p.Claim != "" && !isDNSSubdomain(p.Claim) {
		v.errAt(path+".claim", "%q is not a valid claim name (lower-case RFC 1123 subdomain)", p.Claim)
	}
	if p.Processes < 0 || p.Processes > maxProcessesPerPod {
		v.errAt(path+".processes", "%d out of range (want 1..%d)", p.Processes, maxProcessesPerPod)
	}
}

// maxProcessesPerPod bounds Pod.Processes: more ranks than this on one GPU
// is not a workload anyone runs.
const maxProcessesPerPod = 16

// occupancy checks that what pods hold fits: one pod at a time per whole
// GPU or MIG instance, at most replicas at a time per shared GPU, and the
// memory of pods running together fits their GPU or instance.
func (v *validator) occupancy(n *Node, path string, sys *system, layout []gpuLayout) {
	for j := range n.Pods {
		pj := &n.Pods[j]
		if pj.GPU < 0 || pj.GPU >= len(layout) {
			continue
		}
		l := layout[pj.GPU]
		u := unitOf(pj, layout)
		if u.instance >= len(l.instances) || u.instance < -1 {
			continue
		}
		pp := fmt.Sprintf("%s.pods[%d]", path, j)
		capacity := sys.availableBytes()
		if u.instance >= 0 {
			capacity = sys.instanceBytes(l.instances[u.instance].profile) - driverOverheadBytes
		}
		lj := lifetime(pj)
		var peers []int
		for i := range j {
			pi := &n.Pods[i]
			if unitOf(pi, layout) == u && lifetime(pi).overlaps(lj) {
				peers = append(peers, i)
			}
		}
		switch l.mode {
		case ModeNone, ModeMIG:
			// Pods sharing a claim share its device; their memory still
			// has to fit it together.
			others := slices.DeleteFunc(slices.Clone(peers), func(i int) bool { return sameClaim(n, &n.Pods[i], pj) })
			if len(others) > 0 {
				q := &n.Pods[others[0]]
				v.errAt(pp+".gpu", "%s is already held by %s/%s while this pod runs (sharing %s allows one pod)", u, q.Namespace, q.Name, l.mode)
				continue
			}
		default:
			if c := maxConcurrent(n.Pods, peers, lj, func(*Pod) float64 { return 1 }); c+1 > float64(l.replicas) {
				v.errAt(pp+".gpu", "%s would run %d pods at once, more than its %d %s replicas", u, int(c)+1, l.replicas, l.mode)
				continue
			}
		}
		mem := maxConcurrent(n.Pods, peers, lj, func(p *Pod) float64 { return float64(p.Memory) })
		if total := mem + float64(pj.Memory); total > float64(capacity) {
			if len(peers) == 0 {
				v.errAt(pp+".memory", "%s does not fit %s (%s usable)", pj.Memory, u, formatBytes(capacity))
			} else {
				v.errAt(pp+".memory", "%s with co-tenants' %s does not fit %s (%s usable)", pj.Memory, formatBytes(uint64(mem)), u, formatBytes(capacity))
			}
		}
	}
}

// claims checks DRA: claims only on DRA nodes, no device-plugin sharing
// there, and one device per claim.
func (v *validator) claims(n *Node, path string, layout []gpuLayout) {
	if !n.DRA {
		for i, p := range n.Pods {
			if p.Claim != "" {
				v.errAt(fmt.Sprintf("%s.pods[%d].claim", path, i), "claims need a DRA node (dra: true)")
			}
		}
		return
	}
	for i, sh := range n.Sharing {
		if sh.Mode == ModeTimeSlicing || sh.Mode == ModeMPS {
			v.errAt(fmt.Sprintf("%s.sharing[%d].mode", path, i), "%s is the device plugin's; a DRA node shares a GPU by a shared claim", sh.Mode)
		}
	}
	held := map[string]int{} // namespace/claim -> first pod
	for i := range n.Pods {
		p := &n.Pods[i]
		key := p.Namespace + "/" + ClaimName(p)
		j, seen := held[key]
		if !seen {
			held[key] = i
			continue
		}
		if q := &n.Pods[j]; unitOf(q, layout) != unitOf(p, layout) {
			v.errAt(fmt.Sprintf("%s.pods[%d].claim", path, i), "claim %s holds %s (pod %s), not %s", key, unitOf(q, layout), q.Name, unitOf(p, layout))
		}
	}
}

// sameClaim reports whether two pods of a DRA node share a ResourceClaim.
func sameClaim(n *Node, a, b *Pod) bool {
	return n.DRA && a.Namespace == b.Namespace && ClaimName(a) == ClaimName(b)
}

// maxConcurrent is the largest sum of weight over peers running together
// at some instant of life. Sums only change where a pod starts, so it is
// enough to look at life's start and every peer start inside it.
func maxConcurrent(pods []Pod, peers []int, life interval, weight func(*Pod) float64) float64 {
	best := 0.0
	check := func(t time.Duration) {
		sum := 0.0
		for _, i := range peers {
			if lifetime(&pods[i]).contains(t) {
				sum += weight(&pods[i])
			}
		}
		best = math.Max(best, sum)
	}
	check(life.start)
	for _, i := range peers {
		if s := time.Duration(pods[i].Start); life.contains(s) {
			check(s)
		}
	}
	return best
}

func (v *validator) fault(f Fault, path string, count int) {
	if f.GPU < 0 || f.GPU >= count {
		v.errAt(path+".gpu", "GPU index %d out of range (node has %d GPUs: 0..%d)", f.GPU, count, count-1)
	}
	switch f.Kind {
	case FaultXID:
		if f.XID == 0 {
			v.errAt(path+".xid", "required for kind xid (the XID code, e.g. 79)")
		}
	case FaultLost, FaultHang:
		if f.XID != 0 {
			v.errAt(path+".xid", "only applies to kind xid, not %q", f.Kind)
		}
	default:
		v.errAt(path+".kind", "%s", errUnknown("fault kind", f.Kind, "lost, hang, xid"))
	}
}

// hamiLimits checks a pod's HAMi resources: only on a hami GPU, cores a
// percentage, one of gpumem and gpumem-percentage.
func (v *validator) hamiLimits(p *Pod, path string, layout []gpuLayout) {
	h := p.HAMi
	if h == (HAMiLimits{}) {
		return
	}
	if p.GPU >= 0 && p.GPU < len(layout) && !layout[p.GPU].hami {
		v.errAt(path+".hami", "GPU %d is not shared with mode hami", p.GPU)
	}
	if h.Cores < 0 || h.Cores > 100 {
		v.errAt(path+".hami.cores", "%d out of range (want 0..100, nvidia.com/gpucores)", h.Cores)
	}
	if h.MemoryPercentage < 0 || h.MemoryPercentage > 100 {
		v.errAt(path+".hami.memoryPercentage", "%d out of range (want 0..100, nvidia.com/gpumem-percentage)", h.MemoryPercentage)
	}
	if h.Memory > 0 && h.MemoryPercentage > 0 {
		v.errAt(path+".hami.memoryPercentage", "set memory (nvidia.com/gpumem) or memoryPercentage, not both")
	}
}
