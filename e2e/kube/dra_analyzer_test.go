package kube

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/vocab"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/inventory"
	invkube "github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

var (
	dryRun    = metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
	templates = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"}
)

// applyDRAFixture applies testdata/dra/<file>, in namespace ns when its
// objects are namespaced ("" for cluster objects).
func applyDRAFixture(t *testing.T, a *applier, file, ns string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dra", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range splitYAML(t, b) {
		o := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(o.Object) == 0 {
			continue
		}
		if ns != "" {
			o.SetNamespace(ns)
		}
		if _, err := a.apply(t, o); err != nil {
			t.Fatalf("%s: %s %s: %v", file, o.GetKind(), o.GetName(), err)
		}
	}
}

// claimPodSpec is a pod spec whose one container uses one claim: from a
// template, or a ResourceClaim by name.
func claimPodSpec(entry, template, claim string, restart corev1.RestartPolicy) corev1.PodSpec {
	rc := corev1.PodResourceClaim{Name: entry}
	if template != "" {
		rc.ResourceClaimTemplateName = &template
	} else {
		rc.ResourceClaimName = &claim
	}
	return corev1.PodSpec{
		RestartPolicy:  restart,
		ResourceClaims: []corev1.PodResourceClaim{rc},
		Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: entry}}}}},
	}
}

// deployment creates a Deployment with its ReplicaSet and one running pod,
// as the controllers would have.
func deployment(t *testing.T, c kubernetes.Interface, ns, name, node string, spec corev1.PodSpec) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	labels := map[string]string{"app": name}
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const hash = "6c8d9f7b54"
	rsLabels := map[string]string{"app": name, appsv1.DefaultDeploymentUniqueLabelKey: hash}
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Labels: rsLabels, OwnerReferences: controller("Deployment", d.Name, d.UID)},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return runPod(t, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rs.Name + "-x7k2p", Labels: rsLabels,
		OwnerReferences: controller("ReplicaSet", rs.Name, rs.UID)}, Spec: spec}, node)
}

// generatedClaim records in a pod's status the claim the resource claim
// controller made for it from its template, as that controller would.
func generatedClaim(t *testing.T, c kubernetes.Interface, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	for _, rc := range p.Spec.ResourceClaims {
		name := p.Name + "-" + rc.Name + "-h7m2v"
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, corev1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &name})
	}
	out, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(t.Context(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pod %s claim statuses: %v", p.Name, err)
	}
	return out
}

// TestDRAAnalyzer reads, as the chart's analyzer identity, a namespace whose
// workloads get GPUs through Dynamic Resource Allocation beside one that uses
// the device plugin, right-sizes each as the findings would, and has the API
// server judge every object and patch the recommendations hold (server-side
// dry run): a new claim template where the old one is immutable, a patch of
// the pod template's resourceClaims, and a limits patch only for the device
// plugin's workload.
func TestDRAAnalyzer(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	ids := applyChartRBAC(t, admin, ac)
	ctx := t.Context()
	node := "gpu-dra-" + suffix(t)
	createNode(t, ac, gpuNode(node))
	ns := testNamespace(t, ac, "dra", map[string]string{"team": "perception"})
	a := newApplier(t, admin)
	applyDRAFixture(t, a, "deviceclasses.yaml", "")
	applyDRAFixture(t, a, "claims.yaml", ns)

	detector := generatedClaim(t, ac, deployment(t, ac, ns, "detector", node, claimPodSpec("gpu", "single-gpu", "", corev1.RestartPolicyAlways)))
	// The Job as its owner wrote it, before the API server defaulted it:
	// what a recreated Job starts from.
	embedManifest := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: "embed", Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: claimPodSpec("slice", "embed-3g.40gb", "", corev1.RestartPolicyNever)}}}
	job, err := ac.BatchV1().Jobs(ns).Create(ctx, embedManifest.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	embed := generatedClaim(t, ac, runPod(t, ac, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "embed-q8w4z",
		Labels: map[string]string{"batch.kubernetes.io/job-name": "embed"}, OwnerReferences: controller("Job", job.Name, job.UID)},
		Spec: claimPodSpec("slice", "embed-3g.40gb", "", corev1.RestartPolicyNever)}, node))
	var notebooks []*corev1.Pod
	for _, name := range []string{"notebook-a", "notebook-b"} {
		notebooks = append(notebooks, runPod(t, ac, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: claimPodSpec("gpu", "", "shared-gpu", corev1.RestartPolicyNever)}, node))
	}
	legacySpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
		Containers: []corev1.Container{{Name: "main", Image: "registry.example/legacy:1", Resources: gpuLimits(1)}}}
	legacy := deployment(t, ac, ns, "legacy", node, legacySpec)
	reserve(t, ac, ns, "shared-gpu", node, notebooks)

	// The inventory, as the analyzer's ServiceAccount with the chart's RBAC.
	o := invkube.Options{Kubeconfig: kubeconfigAs(t, ids.analyzer.Namespace, ids.analyzer.Name)}
	client, err := invkube.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	inv := invkube.Read(ctx, client, o)
	if len(inv.Skipped) != 0 {
		t.Fatalf("Skipped = %q", inv.Skipped)
	}

	// What each workload's pods get their GPU from, with the API server's
	// defaults (allocationMode ExactCount, count 1) filled in.
	product := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	profile := "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
	wholeGPU := func(sel ...string) []dra.Request {
		return []dra.Request{{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1, Selectors: sel}}
	}
	// Each pod's one container uses its claim whole.
	main := map[string][]string{"main": nil}
	type view struct {
		Workload   string
		Allocation vocab.AllocationPath
		Claims     []dra.Claim
	}
	see := func(pod string) view {
		cs := inv.ClaimsOf(ns, []string{pod})
		for i := range cs {
			cs[i].Spec = nil
		}
		return view{inv.Workload(ns, pod).String(), inv.AllocationOf(ns, pod), cs}
	}
	for _, tt := range []struct {
		pod  string
		want view
	}{
		{detector.Name, view{"Deployment/" + ns + "/detector", vocab.AllocationPathDRA, []dra.Claim{{Namespace: ns, PodClaim: "gpu", Template: "single-gpu",
			Requests: wholeGPU(product), Metadata: map[string]any{"labels": map[string]any{"app": "detector"}}, Containers: main, Pods: []string{detector.Name}}}}},
		{embed.Name, view{"Job/" + ns + "/embed", vocab.AllocationPathDRA, []dra.Claim{{Namespace: ns, PodClaim: "slice", Template: "embed-3g.40gb",
			Requests:   []dra.Request{{Name: "slice", DeviceClass: dra.ClassMIG, AllocationMode: dra.ModeExactCount, Count: 1, Selectors: []string{profile}, MIGProfile: "3g.40gb"}},
			Containers: main, Pods: []string{embed.Name}}}}},
		{"notebook-a", view{"Pod/" + ns + "/notebook-a", vocab.AllocationPathDRA, []dra.Claim{{Namespace: ns, PodClaim: "gpu", ResourceClaim: "shared-gpu",
			Requests: wholeGPU(), Containers: main, Pods: []string{"notebook-a"}, SharedBy: []string{"notebook-a", "notebook-b"}}}}},
		{legacy.Name, view{"Deployment/" + ns + "/legacy", vocab.AllocationPathDevicePlugin, nil}},
	} {
		if d := cmp.Diff(tt.want, see(tt.pod)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.pod, d)
		}
	}
	if got := inv.Claims[inventory.ClaimKey{Namespace: ns, Name: "shared-gpu"}]; !got.Allocated || !cmp.Equal(got.ReservedFor, []string{"notebook-a", "notebook-b"}) {
		t.Errorf("shared-gpu: allocated %v, reserved for %v", got.Allocated, got.ReservedFor)
	}

	// Each workload right-sized as the findings would: idle whole H100s
	// fit the smallest slice; the 3g.40gb slice used at 20% with 6 GiB
	// fits 1g.10gb (20% of 3/7 is 9% of the GPU, within 80% of 1/7; 6 GiB
	// × 1.2 is 7.7 GB); a dedicated GPU for the same slice switches class.
	const h100 = "NVIDIA H100 80GB HBM3"
	ref := func(kind, name string) workload.Ref {
		return workload.Ref{Kind: kind, Namespace: ns, Name: name, Container: "main"}
	}
	idle := func(w workload.Ref, pods ...string) *recommend.Recommendation {
		return recommend.RightSize(recommend.Usage{Workload: w, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 2 << 30,
			Resources: inv.Pods[inventory.PodKey{Namespace: ns, Name: pods[0]}].GPURequests, Claim: inv.GPUClaimFor(ns, pods, w.Container)}, criteria.DefaultPolicy())
	}
	slice := recommend.Usage{Workload: ref("Job", "embed"), Model: h100, Sharing: "mig", MIGProfile: "3g.40gb", Share: 3.0 / 7,
		P95Utilization: 0.2, P99MemoryBytes: 6 << 30, Claim: inv.GPUClaimFor(ns, []string{embed.Name}, "main")}
	recs := map[string]*recommend.Recommendation{
		"detector":   idle(ref("Deployment", "detector"), detector.Name),
		"embed":      recommend.RightSize(slice, criteria.DefaultPolicy()),
		"embed-gpu":  recommend.Dedicated(slice, criteria.DefaultPolicy(), "training-like load"),
		"notebook-a": idle(ref("Pod", "notebook-a"), "notebook-a"),
		"legacy":     idle(ref("Deployment", "legacy"), legacy.Name),
	}
	type summary struct {
		Allocation                vocab.AllocationPath
		Claim, From, To, Template string
	}
	want := map[string]summary{
		"detector":   {"dra", "ResourceClaimTemplate " + ns + "/single-gpu", "gpu.nvidia.com", "mig.nvidia.com 1g.10gb", "single-gpu-1g.10gb"},
		"embed":      {"dra", "ResourceClaimTemplate " + ns + "/embed-3g.40gb", "mig.nvidia.com 3g.40gb", "mig.nvidia.com 1g.10gb", "embed-1g.10gb"},
		"embed-gpu":  {"dra", "ResourceClaimTemplate " + ns + "/embed-3g.40gb", "mig.nvidia.com 3g.40gb", "gpu.nvidia.com", "embed-gpu"},
		"notebook-a": {"dra", "ResourceClaim " + ns + "/shared-gpu", "gpu.nvidia.com", "mig.nvidia.com 1g.10gb", ""},
		"legacy":     {"device-plugin", "", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ""},
	}
	got := map[string]summary{}
	for k, r := range recs {
		if r == nil {
			t.Fatalf("%s: no recommendation", k)
		}
		s := summary{r.Allocation, r.Claim, r.From, r.To, ""}
		if r.ClaimTemplate != nil {
			s.Template = r.ClaimTemplate.Name
		}
		got[k] = s
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("recommendations (-want +got):\n%s", d)
	}

	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	// Every new template is a valid object by the API server's own
	// validation, its request as recommended.
	for _, k := range []string{"detector", "embed", "embed-gpu"} {
		r := recs[k]
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON([]byte(r.ClaimTemplate.JSON)); err != nil {
			t.Fatal(err)
		}
		out, err := dyn.Resource(templates).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
		if err != nil {
			t.Errorf("%s: the new template is refused: %v\n%s", k, err, r.ClaimTemplate.YAML)
			continue
		}
		var tmpl resourcev1.ResourceClaimTemplate
		if err := jsonInto(out, &tmpl); err != nil {
			t.Fatal(err)
		}
		x := tmpl.Spec.Spec.Devices.Requests[0].Exactly
		var sels []string
		for _, s := range x.Selectors {
			sels = append(sels, s.CEL.Expression)
		}
		class := dra.ClassMIG
		wantSels := []string{dra.ProfileSelector("1g.10gb")}
		switch k {
		case "detector":
			wantSels = []string{product, dra.ProfileSelector("1g.10gb")}
		case "embed-gpu":
			class, wantSels = dra.ClassGPU, nil
		}
		if x.DeviceClassName != class || x.Count != 1 || !cmp.Equal(sels, wantSels) {
			t.Errorf("%s: stored request %s %d %q, want %s 1 %q", k, x.DeviceClassName, x.Count, sels, class, wantSels)
		}
	}
	// Why new templates: the old one's spec cannot be edited, nor can a
	// ResourceClaim's.
	old, err := ac.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, "single-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName = dra.ClassMIG
	_, err = ac.ResourceV1().ResourceClaimTemplates(ns).Update(ctx, old, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	immutable(t, "ResourceClaimTemplate single-gpu", err)
	claim, err := ac.ResourceV1().ResourceClaims(ns).Get(ctx, "shared-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Spec.Devices.Requests[0].Exactly.DeviceClassName = dra.ClassMIG
	_, err = ac.ResourceV1().ResourceClaims(ns).Update(ctx, claim, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	immutable(t, "ResourceClaim shared-gpu", err)

	// The Deployment takes its patch: its pods' claim entry now names the
	// new template, and nothing else changed.
	d, err := ac.AppsV1().Deployments(ns).Patch(ctx, "detector", types.StrategicMergePatchType, []byte(recs["detector"].Patch.JSON), dryRun)
	if err != nil {
		t.Fatalf("detector's patch %s: %v", recs["detector"].Patch.JSON, err)
	}
	wantClaims := []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr("single-gpu-1g.10gb")}}
	if diff := cmp.Diff(wantClaims, d.Spec.Template.Spec.ResourceClaims); diff != "" {
		t.Errorf("detector's patched resourceClaims (-want +got):\n%s", diff)
	}
	if c := d.Spec.Template.Spec.Containers[0]; len(c.Resources.Limits) != 0 || c.Resources.Claims[0].Name != "gpu" {
		t.Errorf("detector's container after the patch: %+v", c.Resources)
	}
	// A Job's pod template is immutable, as the recommendation's note
	// says; the patch applies to the Job's manifest, recreated.
	if _, err := ac.BatchV1().Jobs(ns).Patch(ctx, "embed", types.StrategicMergePatchType, []byte(recs["embed"].Patch.JSON), dryRun); !apierrors.IsInvalid(err) {
		t.Errorf("patching the Job in place: %v, want it refused as invalid", err)
	}
	if !strings.Contains(strings.Join(recs["embed"].Notes, " "), "a Job's pod template cannot change") {
		t.Errorf("embed's notes %q do not say the Job must be recreated", recs["embed"].Notes)
	}
	for _, k := range []string{"embed", "embed-gpu"} {
		orig, err := json.Marshal(embedManifest)
		if err != nil {
			t.Fatal(err)
		}
		patched, err := strategicpatch.StrategicMergePatch(orig, []byte(recs[k].Patch.JSON), batchv1.Job{})
		if err != nil {
			t.Fatal(err)
		}
		var next batchv1.Job
		if err := json.Unmarshal(patched, &next); err != nil {
			t.Fatal(err)
		}
		next.Name = "embed-recreated"
		out, err := ac.BatchV1().Jobs(ns).Create(ctx, &next, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
		if err != nil {
			t.Fatalf("%s: the recreated Job: %v", k, err)
		}
		if got := *out.Spec.Template.Spec.ResourceClaims[0].ResourceClaimTemplateName; got != recs[k].ClaimTemplate.Name {
			t.Errorf("%s: the recreated Job's claim template %s, want %s", k, got, recs[k].ClaimTemplate.Name)
		}
	}
	// The shared claim: nothing to apply, and the notes say what and why.
	nb := recs["notebook-a"]
	notes := strings.Join(nb.Notes, "\n")
	if nb.Patch != nil || nb.ClaimTemplate != nil || !strings.Contains(notes, "ResourceClaim "+ns+"/shared-gpu is a ResourceClaim, not generated from a template, so it cannot be patched in place") ||
		!strings.Contains(notes, "shared by pods notebook-a, notebook-b") {
		t.Errorf("notebook-a: patch %v, template %v, notes:\n%s", nb.Patch, nb.ClaimTemplate, notes)
	}
	// The device plugin's workload in the same namespace keeps its limits
	// patch.
	l, err := ac.AppsV1().Deployments(ns).Patch(ctx, "legacy", types.StrategicMergePatchType, []byte(recs["legacy"].Patch.JSON), dryRun)
	if err != nil {
		t.Fatalf("legacy's patch %s: %v", recs["legacy"].Patch.JSON, err)
	}
	lim := l.Spec.Template.Spec.Containers[0].Resources.Limits
	mig := lim["nvidia.com/mig-1g.10gb"]
	if _, still := lim[corev1.ResourceName(vocab.ResourceGPU)]; still || mig.Value() != 1 || len(l.Spec.Template.Spec.ResourceClaims) != 0 {
		t.Errorf("legacy's patched limits %v, claims %v", lim, l.Spec.Template.Spec.ResourceClaims)
	}

	// The analyzer lists claims and templates, and does nothing else
	// with them: the recommended objects are for people to apply.
	sa := clientFor(t, asServiceAccount(admin, ids.analyzer.Namespace, ids.analyzer.Name))
	who := "the analyzer"
	var next resourcev1.ResourceClaimTemplate
	if err := json.Unmarshal([]byte(recs["detector"].ClaimTemplate.JSON), &next); err != nil {
		t.Fatal(err)
	}
	_, err = sa.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, &next, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	forbidden(t, who, "create claim templates", err)
	_, err = sa.ResourceV1().ResourceClaims(ns).Get(ctx, "shared-gpu", metav1.GetOptions{})
	forbidden(t, who, "get single claims (it lists)", err)
	_, err = sa.ResourceV1().ResourceClaims(ns).Watch(ctx, metav1.ListOptions{})
	forbidden(t, who, "watch claims (it lists once per run)", err)
	_, err = sa.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list device classes (a request names its class)", err)
	_, err = sa.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list resource slices", err)
}

// reserve allocates a ResourceClaim to a device on node and reserves it
// for pods, as the scheduler does for pods that share it.
func reserve(t *testing.T, c kubernetes.Interface, ns, name, node string, pods []*corev1.Pod) {
	t.Helper()
	rc, err := c.ResourceV1().ResourceClaims(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: dra.Driver, Pool: node, Device: "gpu-0"}}}}
	for _, p := range pods {
		rc.Status.ReservedFor = append(rc.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
	}
	if _, err := c.ResourceV1().ResourceClaims(ns).UpdateStatus(t.Context(), rc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("claim %s status: %v", name, err)
	}
}

// immutable asserts the API server refused an update of a spec as
// immutable.
func immutable(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("updating the spec of %s: %v, want it refused as immutable", what, err)
	}
}

func jsonInto(u *unstructured.Unstructured, into any) error {
	b, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func ptr[T any](v T) *T { return &v }
