package query

import (
	"fmt"
	"regexp"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/signals"
)

// hostPodsOf matches a node name that is one of sch's exporter pods
// (signals.Traits.HostPods); nil where its exporter always names its node.
func hostPodsOf(sch signals.Schema) *regexp.Regexp {
	if p := sch.Traits().HostPods; p != "" {
		return regexp.MustCompile("^(?:" + p + ")$")
	}
	return nil
}

// hostQueries find the nodes of dcgm-exporter pods. dcgm-exporter writes
// NODE_NAME in its host label, or where that is not set the host name,
// which in a pod is the pod's own name: every GPU's node then reads as an
// exporter pod. Its node is the one kube-state-metrics places that pod on
// (kube_pod_info), which is what the cluster and the other signals call
// it. Only a schema with Traits.HostPods needs it: gpulens-exporter takes
// its node from the downward API and refuses to start without it.
func (a *analysis) hostQueries(sch signals.Schema) []namedQuery {
	pods := sch.Traits().HostPods
	if pods == "" {
		return nil
	}
	return []namedQuery{{name: "exporter pod nodes", expr: signals.ExporterPodNodes(a.window(), pods), apply: func(s *model.Sample) {
		if a.exporterNodes == nil {
			a.exporterNodes = map[string]string{}
		}
		a.exporterNodes[string(s.Metric["pod"])] = string(s.Metric[signals.LabelNode])
	}}}
}

// resolveHosts renames the nodes that are exporter pods to the nodes those
// pods ran on, and counts those it cannot resolve. It runs on the finished
// rows: an exporter pod restarted within the window (a new name on the same
// node) leaves two rows for one GPU, each with its own steps.
func (a *analysis) resolveHosts() {
	seen := map[string]bool{}
	rename := func(node *string) {
		if a.hostPods == nil || !a.hostPods.MatchString(*node) {
			return
		}
		if n, ok := a.exporterNodes[*node]; ok {
			seen[*node] = true
			*node = n
			return
		}
		a.unresolvedHosts[*node] = true
	}
	a.unresolvedHosts = map[string]bool{}
	for i := range a.res.Allocations {
		rename(&a.res.Allocations[i].Node)
	}
	for i := range a.res.GPUs {
		rename(&a.res.GPUs[i].Node)
	}
	if a.res.Usage != nil {
		for i := range a.res.Usage.Allocations {
			rename(&a.res.Usage.Allocations[i].Node)
		}
	}
	a.resolvedHosts = len(seen)
}

// hostNotes say what resolveHosts did.
func (a *analysis) hostNotes() []string {
	var out []string
	if a.resolvedHosts > 0 {
		out = append(out, fmt.Sprintf("%d dcgm-exporter pod(s) wrote their own pod name as the host label (no NODE_NAME in their environment): "+
			"their GPUs' node is the one kube-state-metrics places each pod on (kube_pod_info).", a.resolvedHosts))
	}
	if n := len(a.unresolvedHosts); n > 0 {
		out = append(out, fmt.Sprintf("%d dcgm-exporter pod(s) wrote their own pod name as the host label (no NODE_NAME in their environment), "+
			"and kube_pod_info does not place them on a node: their GPUs are listed under the pod's name. Set NODE_NAME from spec.nodeName "+
			"in the exporter's DaemonSet, or scrape kube-state-metrics.", n))
	}
	return out
}
