package query

import (
	"fmt"
	"github.com/gpulens/gpulens/signals"
	"regexp"

	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/prometheus/common/model"
)

// exporterPod matches a node name that is a dcgm-exporter pod's.
var exporterPod = regexp.MustCompile("^(?:" + dcgm.ExporterPods + ")$")

// hostQueries find the nodes of dcgm-exporter pods. dcgm-exporter writes
// NODE_NAME in its host label, or where that is not set the host name,
// which in a pod is the pod's own name: every GPU's node then reads as an
// exporter pod. Its node is the one kube-state-metrics places that pod on
// (kube_pod_info), which is what the cluster and the other signals call
// it. Only the dcgm-exporter schema needs it: gpulens-exporter takes its
// node from the downward API and refuses to start without it.
func (a *analysis) hostQueries(sch signals.Schema) []namedQuery {
	if sch.Name() != dcgm.SchemaName {
		return nil
	}
	info := `kube_pod_info{pod=~"` + dcgm.ExporterPods + `", node!=""}`
	return []namedQuery{{name: "exporter pod nodes", expr: "max by (pod, node) (" + a.over("max_over_time", info) + ")", apply: func(s *model.Sample) {
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
		if !exporterPod.MatchString(*node) {
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
