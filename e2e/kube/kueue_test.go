package kube

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/inventory"
	invkube "github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// installKueueCRDs registers Kueue's CRDs (testdata/kueue) and waits until
// the API server serves them.
func installKueueCRDs(t *testing.T, admin *rest.Config) {
	t.Helper()
	a := newApplier(t, admin)
	files, err := filepath.Glob("testdata/kueue/*.yaml")
	if err != nil || len(files) != 3 {
		t.Fatalf("Kueue CRDs: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj := obj(t, string(b))
		if _, err := a.apply(t, obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	c := clientFor(t, admin)
	eventually(t, "the Kueue API", func() bool {
		_, err := c.Discovery().ServerResourcesForGroupVersion(inventory.KueueAPI)
		return err == nil
	})
}

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestKueueQuotaAdvice reads a team's Kueue queues from the real API server
// as the analyzer's ServiceAccount, advises the quota from what the team
// held, and has the API server judge the patch by Kueue's schema
// (server-side dry run).
func TestKueueQuotaAdvice(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	installKueueCRDs(t, admin)
	ids := applyChartRBAC(t, admin, ac)
	ns := testNamespace(t, ac, "team", nil)
	sfx := suffix(t)
	flavor, cq := "h100-"+sfx, "team-"+sfx
	a := newApplier(t, admin) // its REST mapper knows Kueue's kinds now
	for _, y := range []string{
		`{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: ` + flavor + `},
		  spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}}`,
		`{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: ` + cq + `},
		  spec: {cohortName: research, namespaceSelector: {}, resourceGroups: [
		    {coveredResources: [nvidia.com/gpu], flavors: [{name: ` + flavor + `, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]}}`,
		`{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: main, namespace: ` + ns + `},
		  spec: {clusterQueue: ` + cq + `}}`,
	} {
		o := obj(t, y)
		if _, err := a.apply(t, o); err != nil {
			t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	// The inventory, as the analyzer's ServiceAccount with the chart's RBAC.
	o := invkube.Options{Kubeconfig: kubeconfigAs(t, ids.analyzer.Namespace, ids.analyzer.Name)}
	client, err := invkube.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	inv := invkube.Read(t.Context(), client, o)
	for _, s := range inv.Skipped {
		t.Errorf("skipped: %s", s)
	}
	if inv.Kueue == nil {
		t.Fatal("no Kueue read")
	}
	var got *inventory.ClusterQueue
	for i := range inv.Kueue.ClusterQueues {
		if inv.Kueue.ClusterQueues[i].Name == cq {
			got = &inv.Kueue.ClusterQueues[i]
		}
	}
	want := inventory.KueueQuota{Flavor: flavor, Resource: "nvidia.com/gpu", Nominal: 8, Path: "/spec/resourceGroups/0/flavors/0/resources/0"}
	if got == nil || got.Cohort != "research" || len(got.Quotas) != 1 || got.Quotas[0] != want {
		t.Fatalf("ClusterQueue %+v, want cohort research and %+v", got, want)
	}
	if nss := inv.Kueue.Namespaces(cq); len(nss) != 1 || nss[0] != ns {
		t.Errorf("namespaces of %s: %v, want [%s]", cq, nss, ns)
	}
	if inv.Kueue.Flavors[flavor]["nvidia.com/gpu.product"] != "NVIDIA-H100-80GB-HBM3" {
		t.Errorf("flavor labels %v", inv.Kueue.Flavors[flavor])
	}

	// The team held 2 H100s at every step, and a third at 1 of 20 steps:
	// p95 2, peak 3, so quota 2 (no margin) and a borrowing limit of 1.
	const steps = 20
	held := func(name string, upTo int) *plan.Lane {
		l := &plan.Lane{Workload: workload.Ref{Kind: "Deployment", Namespace: ns, Name: name}, From: "whole",
			Mem: make([]float32, steps), Load: make([]float32, steps)}
		for s := range upTo {
			l.Mem[s] = 1 << 30
		}
		return l
	}
	d := &plan.Data{Steps: steps, Pools: []*plan.Pool{{Product: "NVIDIA H100 80GB HBM3",
		Lanes: []*plan.Lane{held("a", steps), held("b", steps), held("c", 1)}}}}
	var adv *quota.Advice
	for _, x := range quota.Advise(d, inv, 0) {
		if x.Name == cq {
			adv = &x
		}
	}
	if adv == nil || adv.Advised != 2 || adv.AdvisedBorrowing == nil || *adv.AdvisedBorrowing != 1 || adv.PatchType != "json" {
		t.Fatalf("advice %+v, want quota 2 and borrowing 1 as a JSON patch", adv)
	}

	// The API server applies the patch to the real object, by Kueue's
	// schema, without storing it.
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	out, err := dyn.Resource(gvr).Patch(t.Context(), cq, types.JSONPatchType, []byte(adv.Patch),
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("the advised patch %s: %v", adv.Patch, err)
	}
	res, _, _ := unstructured.NestedSlice(out.Object, "spec", "resourceGroups")
	b, _ := json.Marshal(res)
	var rgs []struct {
		Flavors []struct {
			Resources []struct {
				NominalQuota   any `json:"nominalQuota"`
				BorrowingLimit any `json:"borrowingLimit"`
			} `json:"resources"`
		} `json:"flavors"`
	}
	if err := json.Unmarshal(b, &rgs); err != nil || len(rgs) != 1 {
		t.Fatalf("resourceGroups %s: %v", b, err)
	}
	r := rgs[0].Flavors[0].Resources[0]
	if r.NominalQuota != "2" || r.BorrowingLimit != "1" {
		t.Errorf("patched quota %v, borrowing %v; want 2 and 1", r.NominalQuota, r.BorrowingLimit)
	}

	// The analyzer only reads queues.
	sa := clientFor(t, asServiceAccount(admin, ids.analyzer.Namespace, ids.analyzer.Name))
	_, err = sa.Discovery().RESTClient().Patch(types.JSONPatchType).AbsPath("/apis/" + inventory.KueueAPI + "/clusterqueues/" + cq).
		Body([]byte(adv.Patch)).DoRaw(t.Context())
	forbidden(t, "the analyzer", "patch clusterqueues", err)
}
