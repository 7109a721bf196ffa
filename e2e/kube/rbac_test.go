package kube

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	invkube "github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
)

// identities are the chart's ServiceAccounts, by component.
type identities struct{ exporter, analyzer *corev1.ServiceAccount }

// applyChartRBAC applies the chart's ServiceAccounts, Roles, ClusterRoles
// and their bindings, exactly as rendered, and returns the accounts. The
// analyzer's rules come from analyzer/inventory/kube/testdata/rbac.yaml, bound
// here, when the rendered chart does not deploy the analyzer.
func applyChartRBAC(t *testing.T, cfg *rest.Config, c kubernetes.Interface) identities {
	t.Helper()
	a := newApplier(t, cfg)
	var ids identities
	var objs []*unstructured.Unstructured
	for _, m := range loadManifests(t) {
		switch o := m.typed.(type) {
		case *corev1.ServiceAccount:
			switch o.Labels["app.kubernetes.io/component"] {
			case "analyzer":
				ids.analyzer = o
			default:
				// The exporter's ServiceAccount predates component labels.
				if ids.exporter == nil {
					ids.exporter = o
				}
			}
		case *rbacv1.Role, *rbacv1.RoleBinding, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
		default:
			continue
		}
		objs = append(objs, m.raw)
	}
	if ids.exporter == nil {
		t.Fatal("the rendered chart has no ServiceAccount")
	}
	if ids.analyzer == nil {
		t.Log("the rendered chart has no analyzer ServiceAccount: binding analyzer/inventory/kube/testdata/rbac.yaml")
		ids.analyzer = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gpulens-analyzer", Namespace: ids.exporter.Namespace}}
		objs = append(objs, toUnstructured(t, ids.analyzer))
		for _, o := range analyzerTestdataRBAC(t, ids.analyzer) {
			objs = append(objs, toUnstructured(t, o))
		}
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			ensureNamespace(t, c, ns, nil)
		}
		if _, err := a.apply(t, o); err != nil {
			t.Fatalf("apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return ids
}

// analyzerTestdataRBAC is the inventory's least-privilege fixture with the
// bindings to sa a chart would add.
func analyzerTestdataRBAC(t *testing.T, sa *corev1.ServiceAccount) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile("../../analyzer/inventory/kube/testdata/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}
	var out []runtime.Object
	for _, doc := range splitYAML(t, b) {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
		switch r := obj.(type) {
		case *rbacv1.ClusterRole:
			out = append(out, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: r.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
				Subjects:   subject,
			})
		case *rbacv1.Role:
			out = append(out, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
				Subjects:   subject,
			})
		}
	}
	return out
}

// forbidden asserts that the API server refuses a request as forbidden,
// not merely that it fails.
func forbidden(t *testing.T, who, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s may %s (err = %v), want forbidden", who, what, err)
	}
}

// TestExporterRBAC runs the exporter's Kubernetes code as the chart's
// exporter ServiceAccount: the pod index syncs and follows its node, and
// the node's own labels can be read; nothing else is allowed.
func TestExporterRBAC(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	ids := applyChartRBAC(t, admin, ac)
	s := suffix(t)
	node := "gpu-rbac-" + s
	createNode(t, ac, gpuNode(node))
	ns := testNamespace(t, ac, "exporter-rbac", nil)
	p := runPod(t, ac, podNamed(ns, "train-0"), node)

	sa := ids.exporter
	who := "the exporter (" + sa.Namespace + "/" + sa.Name + ")"
	cfg := asServiceAccount(admin, sa.Namespace, sa.Name)
	c := clientFor(t, cfg)
	ctx := t.Context()

	// list and watch: startIndex fails on a refused watch.
	idx := startIndex(t, cfg, node)
	if _, ok := idx.ByUID(string(p.UID)); !ok {
		t.Errorf("%s: the pod index misses train-0", who)
	}
	later := runPod(t, ac, podNamed(ns, "train-1"), node)
	eventually(t, "the watch to deliver train-1", func() bool { _, ok := idx.ByUID(string(later.UID)); return ok })
	// The node's labels, for GFD's sharing strategy.
	rc, err := podindex.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if labels, err := podindex.NodeLabels(ctx, rc, node); err != nil || labels["nvidia.com/gpu.present"] != "true" {
		t.Errorf("%s cannot read its node's labels: %v, %v", who, labels, err)
	}

	_, err = c.CoreV1().Secrets(sa.Namespace).List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list secrets in its namespace", err)
	_, err = c.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{})
	forbidden(t, who, "get secrets", err)
	_, err = c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list configmaps", err)
	_, err = c.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
	forbidden(t, who, "get single pods (it lists)", err)
	err = c.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
	forbidden(t, who, "delete pods", err)
	_, err = c.CoreV1().Pods(ns).Create(ctx, podNamed(ns, "intruder"), metav1.CreateOptions{})
	forbidden(t, who, "create pods", err)
	_, err = c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list nodes", err)
	n, err := ac.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["gpulens.example/tampered"] = "true"
	_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	forbidden(t, who, "update nodes", err)
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	forbidden(t, who, "write pod status", err)
}

// TestAnalyzerRBAC reads the inventory as the analyzer's ServiceAccount:
// every kind is read (nothing Skipped) and every fact is found, including
// the device plugin ConfigMap in the GPU Operator's namespace; Secrets,
// other ConfigMaps, the same ConfigMap name elsewhere and writes are
// refused.
func TestAnalyzerRBAC(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	ids := applyChartRBAC(t, admin, ac)
	const operatorNS = "gpu-operator"
	w := buildWorld(t, ac, operatorNS, "time-slicing-config")
	// A ConfigMap of the same name outside the GPU Operator's namespace,
	// and another one inside it.
	putConfigKey(t, ac, w.ns, "time-slicing-config", "x", "version: v1\n")
	putConfigKey(t, ac, operatorNS, "gpu-operator-config", "x", "{}")

	sa := ids.analyzer
	who := "the analyzer (" + sa.Namespace + "/" + sa.Name + ")"
	// The client the analyzer builds from --kubeconfig, acting as its
	// ServiceAccount; the default ConfigMaps: device-plugin-config is
	// absent, which the analyzer tells apart from a refusal only because it
	// may GET it.
	o := invkube.Options{Kubeconfig: kubeconfigAs(t, sa.Namespace, sa.Name)}
	analyzer, err := invkube.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	inv := invkube.Read(t.Context(), analyzer, o)
	checkWorld(t, inv, w, operatorNS+"/time-slicing-config")

	c := clientFor(t, asServiceAccount(admin, sa.Namespace, sa.Name))
	ctx := t.Context()
	_, err = c.CoreV1().Secrets(operatorNS).List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list secrets", err)
	_, err = c.CoreV1().Secrets(sa.Namespace).Get(ctx, "any", metav1.GetOptions{})
	forbidden(t, who, "get secrets in its own namespace", err)
	_, err = c.CoreV1().ConfigMaps(operatorNS).Get(ctx, "gpu-operator-config", metav1.GetOptions{})
	forbidden(t, who, "get other configmaps of the GPU Operator", err)
	_, err = c.CoreV1().ConfigMaps(operatorNS).List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list configmaps", err)
	_, err = c.CoreV1().ConfigMaps(w.ns).Get(ctx, "time-slicing-config", metav1.GetOptions{})
	forbidden(t, who, "get time-slicing-config outside "+operatorNS, err)
	_, err = c.CoreV1().Pods(w.ns).Watch(ctx, metav1.ListOptions{})
	forbidden(t, who, "watch pods (it lists once per run)", err)
	_, err = c.CoreV1().Pods(w.ns).Get(ctx, "debug", metav1.GetOptions{})
	forbidden(t, who, "get single pods", err)
	err = c.CoreV1().Pods(w.ns).Delete(ctx, "debug", metav1.DeleteOptions{})
	forbidden(t, who, "delete pods", err)
	_, err = c.AppsV1().Deployments(w.ns).List(ctx, metav1.ListOptions{})
	forbidden(t, who, "list deployments (owners come from ReplicaSets)", err)
	q, err := ac.CoreV1().ResourceQuotas(w.ns).Get(ctx, "gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().ResourceQuotas(w.ns).Update(ctx, q, metav1.UpdateOptions{})
	forbidden(t, who, "update quotas", err)
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u
}
