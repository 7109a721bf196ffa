package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/findings"
	gpmanifest "github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// adviceFleet creates, in the real API server, the demo fleet's workloads
// as controllers run them (the demo's notebooks, serving and training in
// its three team namespaces, each namespace suffixed for reruns), and
// returns the advice gpulens gives them: every action recommend, plan and
// quota build objects for, on every workload kind.
func adviceFleet(t *testing.T, c kubernetes.Interface) ([]findings.Finding, *plan.Plan, []quota.Advice) {
	t.Helper()
	ctx := t.Context()
	sfx := suffix(t)
	notebooks, vision, recsys := "research-notebooks-"+sfx, "team-vision-"+sfx, "team-recsys-"+sfx
	for _, ns := range []string{notebooks, vision, recsys, gpmanifest.OperatorNamespace} {
		ensureNamespace(t, c, ns, nil)
	}
	gpu := func(r string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(r): resource.MustParse("1")}}
	}
	tmpl := func(app, r string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
				Containers: []corev1.Container{{Name: "main", Image: "registry.example/" + app + ":1", Resources: gpu(r)}}}}
	}
	sel := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	deploy := func(ns, name, r string, edit func(*corev1.PodTemplateSpec)) {
		tp := tmpl(name, r)
		if edit != nil {
			edit(&tp)
		}
		_, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Selector: sel(name), Template: tp}}, metav1.CreateOptions{})
		must("deployment "+name, err)
	}
	deploy(vision, "ocr-serving", "nvidia.com/mig-2g.20gb", nil)
	deploy(recsys, "recsys-serving", "nvidia.com/gpu", nil)
	_, err := c.AppsV1().StatefulSets(notebooks).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "grace-jupyter", Namespace: notebooks},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(1)), Selector: sel("grace-jupyter"), Template: tmpl("grace-jupyter", "nvidia.com/gpu")}}, metav1.CreateOptions{})
	must("statefulset", err)
	_, err = c.AppsV1().DaemonSets(vision).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "video-analytics", Namespace: vision},
		Spec: appsv1.DaemonSetSpec{Selector: sel("video-analytics"), Template: tmpl("video-analytics", "nvidia.com/gpu")}}, metav1.CreateOptions{})
	must("daemonset", err)
	job := tmpl("feature-train", "nvidia.com/mig-2g.20gb")
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, err = c.BatchV1().Jobs(recsys).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "feature-train", Namespace: recsys},
		Spec: batchv1.JobSpec{Template: job}}, metav1.CreateOptions{})
	must("job", err)
	cron := tmpl("recsys-train-small", "nvidia.com/gpu.shared")
	cron.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	_, err = c.BatchV1().CronJobs(recsys).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "recsys-train-small", Namespace: recsys},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: cron}}}}, metav1.CreateOptions{})
	must("cronjob", err)
	runPod(t, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alice-jupyter", Namespace: notebooks},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/jupyter:1", Resources: gpu("nvidia.com/gpu")}}}}, "")
	// A notebook whose GPU comes through a DRA claim template.
	claimSpec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}}}}
	_, err = c.ResourceV1().ResourceClaimTemplates(notebooks).Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "single-gpu", Namespace: notebooks}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claimSpec}}, metav1.CreateOptions{})
	must("claim template", err)
	deploy(notebooks, "peggy-jupyter", "cpu", func(tp *corev1.PodTemplateSpec) {
		tp.Spec.Containers[0].Resources = corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}
		tp.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr("single-gpu")}}
	})
	_, err = c.CoreV1().ResourceQuotas(vision).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: vision},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("8")}}}, metav1.CreateOptions{})
	must("resource quota", err)

	ref := func(kind, ns, name string) workload.Ref {
		return workload.Ref{Kind: kind, Namespace: ns, Name: name, Container: "main"}
	}
	var fs []findings.Finding
	add := func(r *recommend.Recommendation) {
		fs = append(fs, findings.Finding{Kind: "k", Namespace: r.Workload.Namespace, Workload: r.Workload.Name, WorkloadKind: r.Workload.Kind,
			Summary: "the demo's " + r.Workload.String(), Recommendation: r})
	}
	resize := func(kind, ns, name, from, to string) {
		w := ref(kind, ns, name)
		add(&recommend.Recommendation{Action: recommend.ActionMIGProfile, Workload: w, From: from, To: to,
			Patch: recommend.BuildPatch(w, recommend.PatchChange{Limits: map[vocab.Resource]int64{vocab.Resource(to): 1}, Remove: []vocab.Resource{vocab.Resource(from)}})})
	}
	resize("Deployment", vision, "ocr-serving", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-1g.20gb")
	resize("Job", recsys, "feature-train", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb")
	resize("CronJob", recsys, "recsys-train-small", "nvidia.com/gpu.shared", "nvidia.com/gpu")
	resize("DaemonSet", vision, "video-analytics", "nvidia.com/gpu", "nvidia.com/mig-3g.40gb")
	resize("StatefulSet", notebooks, "grace-jupyter", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb")
	resize("Pod", notebooks, "alice-jupyter", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb")
	for _, w := range []workload.Ref{ref("StatefulSet", notebooks, "grace-jupyter"), ref("Job", recsys, "feature-train"),
		ref("CronJob", recsys, "recsys-train-small"), ref("Pod", notebooks, "alice-jupyter"), ref("DaemonSet", vision, "video-analytics")} {
		add(&recommend.Recommendation{Action: recommend.ActionRelease, Workload: w})
	}
	shared := ref("Deployment", recsys, "recsys-serving")
	add(&recommend.Recommendation{Action: recommend.ActionTimeSlicing, Workload: shared,
		Patch:              recommend.BuildPatch(shared, recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, Remove: []vocab.Resource{"nvidia.com/gpu"}}),
		DevicePluginConfig: "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
		Sharing:            &recommend.Sharing{Strategy: "time-slicing", Replicas: 4}})
	// The DRA notebook's claim, as recommend changes it: a new template
	// asking for a MIG slice, and the pod template pointed at it.
	var spec map[string]any
	b, _ := json.Marshal(resourcev1.ResourceClaimTemplateSpec{Spec: claimSpec})
	must("claim spec", json.Unmarshal(b, &spec))
	devs := spec["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)[0].(map[string]any)["exactly"].(map[string]any)
	devs["deviceClassName"] = "mig.nvidia.com"
	devs["selectors"] = []any{map[string]any{"cel": map[string]any{"expression": `device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`}}}
	peggy := ref("Deployment", notebooks, "peggy-jupyter")
	claimPatch := recommend.BuildPatch(peggy, recommend.PatchChange{})
	claimPatch.Claims = []recommend.PodClaim{{Name: "gpu", Template: "single-gpu-1g.10gb"}}
	add(&recommend.Recommendation{Action: recommend.ActionMIGProfile, Workload: peggy, Allocation: "dra",
		Claim:         "ResourceClaimTemplate " + notebooks + "/single-gpu",
		ClaimTemplate: &recommend.Manifest{Kind: "ResourceClaimTemplate", Namespace: notebooks, Name: "single-gpu-1g.10gb", Spec: spec},
		Patch:         claimPatch})

	p := &plan.Plan{Pools: []plan.PoolPlan{{Model: "H100-80GB", GPUs: []plan.GPU{
		{Index: 0, Mode: plan.ModeTimeSlicing, Replicas: 4, Lanes: []string{"recsys-serving"}},
		{Index: 1, Mode: plan.ModeMIG, Slices: []string{"1g.20gb", "3g.40gb"}, Lanes: []string{"ocr-serving", "feature-train"}},
		{Index: 2, Mode: plan.ModeWhole, Lanes: []string{"grace-jupyter"}},
	}, Assignments: []plan.Assignment{
		{Lane: "recsys-serving", Workload: shared, Mode: plan.ModeTimeSlicing, Resource: "nvidia.com/gpu.shared", From: "gpu", Moved: true},
		{Lane: "ocr-serving", Workload: ref("Deployment", vision, "ocr-serving"), Mode: plan.ModeMIG, Resource: "nvidia.com/mig-1g.20gb", From: "mig 2g.20gb", Slice: "1g.20gb", Moved: true},
		{Lane: "feature-train", Workload: ref("Job", recsys, "feature-train"), Mode: plan.ModeMIG, Resource: "nvidia.com/mig-3g.40gb", From: "mig 2g.20gb", Slice: "3g.40gb", Moved: true},
		{Lane: "grace-jupyter", Workload: ref("StatefulSet", notebooks, "grace-jupyter"), Mode: plan.ModeWhole, Resource: "nvidia.com/gpu", From: "gpu", Moved: true},
	}}}}
	advice := []quota.Advice{{Kind: quota.KindResourceQuota, Name: "gpu", Namespace: vision, Resource: "nvidia.com/gpu", Quota: 8, Advised: 3,
		Patch: `{"spec":{"hard":{"requests.nvidia.com/gpu":"3"}}}`, PatchType: "merge"}}
	return fs, p, advice
}

// TestAdviceAppliesServerSide writes recommend's, plan's and quota's
// advice for the demo fleet's workloads as gpulens writes it (the YAML
// stream and the kustomize directory) and has the real API server judge
// every object and patch, server-side dry run: all are accepted.
func TestAdviceAppliesServerSide(t *testing.T) {
	admin := adminConfig(t)
	c := clientFor(t, admin)
	a := newApplier(t, admin)
	fs, p, advice := adviceFleet(t, c)
	applied := 0
	for name, docs := range map[string][]gpmanifest.Doc{"recommend": gpmanifest.FromFindings(fs), "plan": gpmanifest.FromPlan(p), "quota": gpmanifest.FromQuota(advice)} {
		var buf bytes.Buffer
		if err := gpmanifest.Write(&buf, docs, "nothing"); err != nil {
			t.Fatal(err)
		}
		// Every document of the stream is an object with apiVersion, kind
		// and metadata, and the server accepts it as kubectl apply
		// --server-side --force-conflicts would send it.
		for _, doc := range yamlDocs(t, buf.Bytes()) {
			u := &unstructured.Unstructured{Object: doc}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				t.Errorf("%s: a document without apiVersion, kind or name: %v", name, doc)
				continue
			}
			if err := a.dryRunApply(t, u); err != nil {
				t.Errorf("%s: %s %s/%s: %v\n%s", name, u.GetKind(), u.GetNamespace(), u.GetName(), err, buf.String())
			}
			applied++
		}
		// The kustomize directory: its resources are applied as above, its
		// patches to the objects they target; a pod's or a Job's, whose
		// spec the server will not change, to a new object made from the
		// live one with the patch merged, as the manifest would be.
		dir := t.TempDir()
		if _, err := gpmanifest.WriteKustomize(dir, docs, "nothing"); err != nil {
			t.Fatal(err)
		}
		var k struct {
			APIVersion, Kind string
			Resources        []string
			Patches          []struct {
				Path   string
				Patch  string
				Target gpmanifest.Target
			}
		}
		readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
		if k.Kind != "Kustomization" || k.APIVersion != "kustomize.config.k8s.io/v1beta1" {
			t.Errorf("%s: kustomization.yaml is %s %s", name, k.APIVersion, k.Kind)
		}
		for _, r := range k.Resources {
			var doc map[string]any
			readYAML(t, filepath.Join(dir, r), &doc)
			if err := a.dryRunApply(t, &unstructured.Unstructured{Object: doc}); err != nil {
				t.Errorf("%s kustomize: resource %s: %v", name, r, err)
			}
			applied++
		}
		for _, pe := range k.Patches {
			if pe.Path == "" || pe.Target.Kind == "" || pe.Target.Name == "" {
				t.Errorf("%s kustomize: patch %+v without a file or a target", name, pe)
				continue
			}
			var doc map[string]any
			readYAML(t, filepath.Join(dir, pe.Path), &doc)
			if err := a.dryRunPatch(t, pe.Target, doc); err != nil {
				t.Errorf("%s kustomize: patch %s: %v", name, pe.Path, err)
			}
			applied++
		}
	}
	t.Logf("%d objects and patches accepted", applied)
	if applied < 20 {
		t.Errorf("%d objects and patches applied, want the fleet's every change", applied)
	}
}

// dryRunApply applies u server-side without storing it.
func (a *applier) dryRunApply(t *testing.T, u *unstructured.Unstructured) error {
	t.Helper()
	ri, err := a.resource(u.GroupVersionKind().GroupVersion().WithKind(u.GetKind()), u.GetNamespace())
	if err != nil {
		return err
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = ri.Patch(t.Context(), u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "gpulens",
		Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
	return err
}

// dryRunPatch sends a strategic-merge patch of target without storing it;
// for a pod or a Job it creates, dry run, a copy of the live object with
// the patch merged.
func (a *applier) dryRunPatch(t *testing.T, target gpmanifest.Target, patch map[string]any) error {
	t.Helper()
	gv := target.APIVersion()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gv)
	u.SetKind(target.Kind)
	ri, err := a.resource(u.GroupVersionKind(), target.Namespace)
	if err != nil {
		return err
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
	var typed runtime.Object
	switch target.Kind {
	case "Pod":
		typed = &corev1.Pod{}
	case "Job":
		typed = &batchv1.Job{}
	default:
		_, err = ri.Patch(t.Context(), target.Name, types.StrategicMergePatchType, body, opts)
		return err
	}
	live, err := ri.Get(t.Context(), target.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	lj, err := live.MarshalJSON()
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(lj, body, typed)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(merged); err != nil {
		return err
	}
	// A new object: what the server set on the old one goes.
	obj.SetName(target.Name + "-patched")
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetManagedFields(nil)
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetLabels(nil)
	unstructured.RemoveNestedField(obj.Object, "status")
	if target.Kind == "Job" {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector")
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels")
	}
	_, err = ri.Create(t.Context(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
	return err
}

func yamlDocs(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(b))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		t.Fatalf("%s is empty", path)
	}
}

// resource is the client of gvk's resource, in namespace where it is
// namespaced.
func (a *applier) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(mapping.Resource).Namespace(namespace), nil
	}
	return a.dyn.Resource(mapping.Resource), nil
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
