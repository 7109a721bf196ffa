package manifest

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/internal/safetext"
)

// FromQuota is each quota change: a ResourceQuota's new hard limit as a
// typed ResourceQuota (the key alone: spec.hard merges key by key), a
// ClusterQueue's as the JSON patch of its flavor's quota, whose lists a
// merge would replace.
func FromQuota(advice []quota.Advice) []Doc {
	var out []Doc
	for _, a := range advice {
		if !a.Changes() {
			continue
		}
		why := fmt.Sprintf("%s %s: %s, p95 %g and peak %g GPUs held at once; advised %d", a.Kind, a.Name, a.Resource, a.P95, a.Peak, a.Advised)
		d := Doc{Cluster: a.Cluster, Comments: append([]string{why}, a.Notes...)}
		switch a.Kind {
		case quota.KindResourceQuota:
			d.Object = toMap(&corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
					corev1.ResourceName("requests." + a.Resource): *resource.NewQuantity(int64(a.Advised), resource.DecimalSI)}},
			})
			d.Patch, d.Target = true, targetOf(d.Object)
		case quota.KindClusterQueue:
			var ops []map[string]any
			if err := json.Unmarshal([]byte(a.Patch), &ops); err != nil {
				panic(fmt.Sprintf("manifest: quota patch: %v", err)) // json.Marshal wrote it
			}
			d.JSONPatch = ops
			// The version gpulens read the queue's paths from.
			group, version, _ := strings.Cut(inventory.KueueAPI, "/")
			d.Target = Target{Group: group, Version: version, Kind: quota.KindClusterQueue, Name: a.Name}
			d.Comments = append(d.Comments, "kubectl patch "+safetext.ShellObject("clusterqueues.kueue.x-k8s.io", a.Name)+" --type json -p "+safetext.ShellArg(a.Patch))
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}
