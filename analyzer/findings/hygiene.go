package findings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// hygiene applies the rules that read cluster state only.
func (d *detector) hygiene() {
	if !d.haveInventory() {
		d.skip("needs cluster access (node taints and pods)", vocab.KindUntaintedNode)
		d.skip("needs cluster access (namespaces and ResourceQuotas)", vocab.KindNoGPUQuota)
		return
	}
	d.untaintedNodes()
	d.namespacesWithoutQuota()
}

func isGPUNode(n inventory.Node) bool {
	if n.Count > 0 || n.Product != "" {
		return true
	}
	for r, v := range n.Capacity {
		if r.IsNVIDIA() && v > 0 {
			return true
		}
	}
	return false
}

func requestsGPU(p inventory.Pod) bool {
	for r, v := range p.GPURequests {
		if r.IsNVIDIA() && v > 0 {
			return true
		}
	}
	return false
}

// untaintedNodes flags GPU nodes without a NoSchedule (or NoExecute) taint
// that run pods asking for no GPU: those pods keep an expensive node up.
// DaemonSet pods are on every node by design and do not count.
func (d *detector) untaintedNodes() {
	cpuPods := map[string][]string{}
	for _, p := range d.inv.Pods {
		if p.Node == "" || requestsGPU(p) || p.WorkloadKind == "DaemonSet" || (p.Phase != "Running" && p.Phase != "Pending") {
			continue
		}
		cpuPods[p.Node] = append(cpuPods[p.Node], p.Namespace+"/"+p.Name)
	}
	for _, name := range sortedKeys(d.inv.Nodes) {
		n := d.inv.Nodes[name]
		if !isGPUNode(n) || tainted(n) || len(cpuPods[name]) == 0 {
			continue
		}
		pods := cpuPods[name]
		slices.Sort(pods)
		f := Finding{Kind: vocab.KindUntaintedNode, Severity: Warning, Node: name, Model: n.Product, Confidence: 1,
			Evidence: map[string]float64{"non_gpu_pods": float64(len(pods)), "gpus": float64(n.Count)},
			Summary: fmt.Sprintf("GPU node %s has no NoSchedule taint and runs %d pods that use no GPU (e.g. %s): taint it nvidia.com/gpu=present:NoSchedule so they cannot keep it up",
				name, len(pods), pods[0])}
		d.cost(&f, n.Product, float64(max(n.Count, 1)), nil)
		d.add(f)
	}
}

func tainted(n inventory.Node) bool {
	for _, t := range n.Taints {
		if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
			return true
		}
	}
	return false
}

// namespacesWithoutQuota flags namespaces that run GPU pods with no
// ResourceQuota on any nvidia.com resource: nothing stops one team from
// taking every GPU.
func (d *detector) namespacesWithoutQuota() {
	gpus := map[string]int64{}
	for _, p := range d.inv.Pods {
		for r, v := range p.GPURequests {
			if r.IsNVIDIA() {
				gpus[p.Namespace] += v
			}
		}
	}
	for _, ns := range sortedKeys(gpus) {
		if gpus[ns] == 0 || hasGPUQuota(d.inv.Quotas[ns]) {
			continue
		}
		d.add(Finding{Kind: vocab.KindNoGPUQuota, Severity: Info, Namespace: ns, Team: d.inv.Namespaces[ns].Team, Confidence: 1,
			Evidence: map[string]float64{"gpu_requests": float64(gpus[ns])},
			Summary: fmt.Sprintf("namespace %s requests %d GPU resources and has no ResourceQuota on nvidia.com resources: set requests.nvidia.com/gpu (and the mig-* and gpu.shared resources it uses)",
				ns, gpus[ns])})
	}
}

func hasGPUQuota(qs []inventory.Quota) bool {
	for _, q := range qs {
		for k := range q.Hard {
			if strings.Contains(k, vocab.ResourcePrefix) {
				return true
			}
		}
	}
	return false
}
