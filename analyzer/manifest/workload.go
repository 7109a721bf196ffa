package manifest

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/internal/safetext"
)

// apiVersions are the workload kinds gpulens builds objects for.
var apiVersions = map[string]string{
	"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
	"Job": "batch/v1", "CronJob": "batch/v1", "Pod": "v1",
}

// immutableTemplate are the kinds whose pod spec the API server refuses to
// change in place: a GPU request of a running pod, a Job's pod template.
// Their patch is for the manifest that creates them, not for the cluster.
var immutableTemplate = map[string]bool{"Pod": true, "Job": true}

func meta(w workload.Ref) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersions[kind], Kind: kind}
}

// withPodSpec is w's kind with spec as its pod template's spec (its own,
// for a pod); false for a kind gpulens has no type for.
func withPodSpec(w workload.Ref, spec corev1.PodSpec) (any, bool) {
	tmpl := corev1.PodTemplateSpec{Spec: spec}
	tm, om := typeMeta(w.Kind), meta(w)
	switch w.Kind {
	case "Deployment":
		return &appsv1.Deployment{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.DeploymentSpec{Template: tmpl}}, true
	case "StatefulSet":
		return &appsv1.StatefulSet{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.StatefulSetSpec{Template: tmpl}}, true
	case "DaemonSet":
		return &appsv1.DaemonSet{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.DaemonSetSpec{Template: tmpl}}, true
	case "ReplicaSet":
		return &appsv1.ReplicaSet{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.ReplicaSetSpec{Template: tmpl}}, true
	case "Job":
		return &batchv1.Job{TypeMeta: tm, ObjectMeta: om, Spec: batchv1.JobSpec{Template: tmpl}}, true
	case "CronJob":
		return &batchv1.CronJob{TypeMeta: tm, ObjectMeta: om, Spec: batchv1.CronJobSpec{
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}, true
	case "Pod":
		return &corev1.Pod{TypeMeta: tm, ObjectMeta: om, Spec: spec}, true
	}
	return nil, false
}

// podSpecOf is the pod spec inside obj, a map of w's kind.
func podSpecOf(obj map[string]any, kind string) map[string]any {
	path := []string{"spec", "template", "spec"}
	switch kind {
	case "Pod":
		path = []string{"spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	m := obj
	for _, k := range path {
		next, _ := m[k].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// patchDoc is p as a typed object of its workload's kind: the container's
// resources and env, or the pod template's resourceClaims. A resource to
// drop is a strategic-merge null, set after marshalling since a typed
// ResourceList cannot hold one: 'kubectl patch --type strategic' and
// kustomize delete the key, and a server-side apply sets it to 0, which
// asks for none. For a pod or a Job, whose pod spec the API server will not
// change, and a kind gpulens has no type for, the patch is said in
// comments, to be made to the manifest that creates it.
func patchDoc(p *recommend.Patch) Doc {
	w := p.Workload
	var spec corev1.PodSpec
	ch := p.Change
	if len(ch.Limits) > 0 || len(ch.Env) > 0 || len(ch.Remove) > 0 {
		if w.Container == "" {
			// A strategic merge adds a container it does not find by name:
			// no guessed one.
			return Doc{Comments: []string{recommend.ContainerUnknown(w, ch)}}
		}
		c := corev1.Container{Name: w.Container}
		if len(ch.Limits) > 0 {
			c.Resources.Limits = corev1.ResourceList{}
			for r, n := range ch.Limits {
				c.Resources.Limits[corev1.ResourceName(r)] = *resource.NewQuantity(n, resource.DecimalSI)
			}
		}
		for _, k := range sortedKeys(ch.Env) {
			c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: ch.Env[k]})
		}
		spec.Containers = []corev1.Container{c}
	}
	for _, cl := range p.Claims {
		tmpl := cl.Template
		spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: cl.Name, ResourceClaimTemplateName: &tmpl})
	}
	typed, ok := withPodSpec(w, spec)
	if !ok {
		return Doc{Comments: append([]string{
			fmt.Sprintf("%s: gpulens has no object type for kind %s; make this change to its pod template:", w, w.Kind)}, fragment(spec)...)}
	}
	obj := toMap(typed)
	if podSpec := podSpecOf(obj, w.Kind); podSpec != nil {
		dropResources(podSpec, ch)
	}
	if immutableTemplate[w.Kind] {
		what := "a pod's GPU request cannot change while it runs: make this change to whatever creates the pod, then recreate it"
		if w.Kind == "Job" {
			what = "a Job's pod template cannot change: make this change to the Job's manifest and recreate the Job"
		}
		return Doc{Comments: []string{fmt.Sprintf("%s: %s:", w, what)},
			Target: targetOf(obj), Patch: true, ManifestOnly: obj}
	}
	return Doc{Object: obj, Patch: true, Target: targetOf(obj)}
}

// dropResources sets to null, in the container podSpec holds, the
// resources ch removes and does not set.
func dropResources(podSpec map[string]any, ch recommend.PatchChange) {
	containers, _ := podSpec["containers"].([]any)
	if len(containers) == 0 {
		return
	}
	c, _ := containers[0].(map[string]any)
	var drop []string
	for _, r := range ch.Remove {
		if _, set := ch.Limits[r]; !set && !slices.Contains(drop, string(r)) {
			drop = append(drop, string(r))
		}
	}
	if len(drop) == 0 {
		return
	}
	res, _ := c["resources"].(map[string]any)
	if res == nil {
		res = map[string]any{}
		c["resources"] = res
	}
	for _, field := range []string{"limits", "requests"} {
		m, _ := res[field].(map[string]any)
		if m == nil {
			m = map[string]any{}
			res[field] = m
		}
		for _, r := range drop {
			m[r] = nil
		}
	}
}

// releaseDoc gives back w's idle allocation: replicas: 0 for what scales,
// suspend: true for a Job (its pods are deleted) or a CronJob (no new
// runs), and for a bare pod or a DaemonSet, which neither scales nor
// suspends, the command in words.
func releaseDoc(w workload.Ref) Doc {
	tm, om := typeMeta(w.Kind), meta(w)
	zero, yes := int32(0), true
	var typed any
	switch w.Kind {
	case "Deployment":
		typed = &appsv1.Deployment{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.DeploymentSpec{Replicas: &zero}}
	case "StatefulSet":
		typed = &appsv1.StatefulSet{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.StatefulSetSpec{Replicas: &zero}}
	case "ReplicaSet":
		typed = &appsv1.ReplicaSet{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.ReplicaSetSpec{Replicas: &zero}}
	case "Job":
		typed = &batchv1.Job{TypeMeta: tm, ObjectMeta: om, Spec: batchv1.JobSpec{Suspend: &yes}}
	case "CronJob":
		typed = &batchv1.CronJob{TypeMeta: tm, ObjectMeta: om, Spec: batchv1.CronJobSpec{Suspend: &yes}}
	case "Pod", "":
		// The command's words are quoted as a shell reads them (a name
		// from the store could hold "; rm" or be "--all").
		return Doc{Comments: []string{fmt.Sprintf("release: a bare pod has nothing to scale: kubectl -n %s delete %s", safetext.ShellArg(w.Namespace), safetext.ShellObject("pod", w.Name))}}
	default:
		return Doc{Comments: []string{fmt.Sprintf("release: %s cannot be scaled to zero by gpulens: delete it, or narrow where it runs (kubectl -n %s delete %s)",
			w, safetext.ShellArg(w.Namespace), safetext.ShellObject(strings.ToLower(w.Kind), w.Name))}}
	}
	obj := toMap(typed)
	return Doc{Object: obj, Patch: true, Target: targetOf(obj)}
}

// fragment is a pod spec as comment lines.
func fragment(spec corev1.PodSpec) []string {
	return yamlComment(toMap(spec))
}

// yamlComment is v marshalled, one comment line per line, indented.
func yamlComment(v any) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(mustYAMLBytes(v)), "\n"), "\n") {
		out = append(out, "  "+l)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
