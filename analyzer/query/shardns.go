package query

import (
	"cmp"
	"fmt"
	"slices"
)

// nsShard is one shard of the namespace queries: a range of tenant
// namespaces, or one namespace and a range of its pods. A namespace whose
// allocations alone exceed the budget is split by pods, at boundaries no
// workload straddles: the engine infers a pod's workload from its name
// (withWorkload), and the node shards already recorded which workload each
// allocated pod belongs to.
type nsShard struct {
	ns, pods keyRange
}

// planNamespaces sizes the namespace shards from the allocations found.
func (a *analysis) planNamespaces(budget float64, sh Sharding) ([]nsShard, error) {
	type podCost struct {
		pod, workload string
		weight        float64
	}
	byNS := map[string]map[string]*podCost{}
	for _, x := range a.allocs {
		pods := byNS[x.Namespace]
		if pods == nil {
			pods = map[string]*podCost{}
			byNS[x.Namespace] = pods
		}
		p := pods[x.Pod]
		if p == nil {
			p = &podCost{pod: x.Pod, workload: x.WorkloadKind + "/" + x.Workload}
			if x.Workload == "" {
				p.workload = "Pod/" + x.Pod
			}
			pods[x.Pod] = p
		}
		p.weight += float64(x.Steps) * perAllocationStep
	}
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)

	var out []nsShard
	cur := keyRange{}
	var sum float64
	n := 0
	cut := func(next string) {
		cur.hi, cur.hasHi = next, true
		out = append(out, nsShard{ns: cur})
		cur, sum, n = keyRange{lo: next, hasLo: true}, 0, 0
	}
	for _, ns := range namespaces {
		var pods []podCost
		var weight float64
		for _, p := range byNS[ns] {
			pods = append(pods, *p)
			weight += p.weight
		}
		big := weight > budget || (sh.MaxPods > 0 && len(pods) > sh.MaxPods)
		// A namespace to split gets a shard of its own, so the range
		// before it is closed even when empty: names between are covered.
		if (n > 0 && (sum+weight > budget || (sh.MaxNamespaces > 0 && n >= sh.MaxNamespaces))) || (big && (!cur.hasLo || cur.lo != ns)) {
			cut(ns)
		}
		if !big {
			sum += weight
			n++
			continue
		}
		// The namespace alone, split by pods: [ns, ns+"\x00") holds ns
		// and nothing else.
		only := keyRange{lo: ns, hasLo: true, hi: ns + "\x00", hasHi: true}
		slices.SortFunc(pods, func(x, y podCost) int { return cmp.Compare(x.pod, y.pod) })
		last := map[string]int{}
		for i, p := range pods {
			last[p.workload] = i
		}
		// Cuts are legal only between segments: runs of pods that no
		// workload straddles (open is the last pod index of a workload
		// begun so far). The segments are then packed greedily, so a
		// workload that would overflow the shard begins the next one.
		type segment struct {
			first  int
			pods   int
			weight float64
		}
		var segs []segment
		open, seg := -1, segment{}
		for i, p := range pods {
			if p.weight > budget {
				return nil, fmt.Errorf("pod %s/%s alone needs about %.0f samples per query, %w of %d: raise %s", ns, p.pod, p.weight, ErrBudget, int(budget), sh.flag())
			}
			if seg.pods == 0 {
				seg.first = i
			}
			seg.pods++
			seg.weight += p.weight
			open = max(open, last[p.workload])
			if open == i {
				if seg.weight > budget {
					return nil, fmt.Errorf("workload %s of namespace %s needs more than the budget, %w of %d: raise %s", p.workload, ns, ErrBudget, int(budget), sh.flag())
				}
				segs = append(segs, seg)
				seg = segment{}
			}
		}
		rng := keyRange{}
		var psum float64
		np := 0
		for _, sg := range segs {
			if np > 0 && (psum+sg.weight > budget || (sh.MaxPods > 0 && np+sg.pods > sh.MaxPods)) {
				rng.hi, rng.hasHi = pods[sg.first].pod, true
				out = append(out, nsShard{ns: only, pods: rng})
				rng, psum, np = keyRange{lo: pods[sg.first].pod, hasLo: true}, 0, 0
			}
			psum += sg.weight
			np += sg.pods
		}
		out = append(out, nsShard{ns: only, pods: rng})
		cur = keyRange{lo: ns + "\x00", hasLo: true}
	}
	return append(out, nsShard{ns: cur}), nil
}
