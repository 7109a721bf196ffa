package chart

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestDryRun applies every object of every matrix entry to the real
// kube-apiserver of scripts/test-servers.sh with server-side dry-run:
// the server's schema validation (strict: an unknown field is an error),
// defaulting and admission judge each object as on install, and nothing
// is stored. The Prometheus Operator's CRDs are registered first, so its
// kinds are checked against their OpenAPI schemas too. What the server
// cannot judge without a kubelet (that the pods start) is out of reach.
func TestDryRun(t *testing.T) {
	cfg := adminConfig(t)
	registerCRDs(t, cfg)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := newApplier(t, cfg)
	for _, e := range matrix(t) {
		t.Run(e.name, func(t *testing.T) {
			// Not decoded first: the server, not client-go's types,
			// judges what it is sent (TestMatrix decodes).
			manifest, err := Render(chartDir, Release{Values: values(t, e)})
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Split(manifest)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if ns := o.Raw.GetNamespace(); ns != "" {
					ensureNamespace(t, c, ns)
				}
			}
			for _, o := range objs {
				out, err := a.dryRun(t, o.Raw)
				if err != nil {
					t.Errorf("%s: %v", o, err)
					continue
				}
				// Defaulting ran: the server filled in what the chart
				// leaves out.
				if o.GVK.Kind == "DaemonSet" {
					if p, _, _ := unstructured.NestedString(out.Object, "spec", "template", "spec", "dnsPolicy"); p != "ClusterFirst" {
						t.Errorf("%s: dnsPolicy after defaulting = %q, want ClusterFirst", o, p)
					}
				}
			}
		})
	}
}

// adminConfig is the cluster-admin identity of the test server.
func adminConfig(t *testing.T) *rest.Config {
	t.Helper()
	path := testenv.Env(t, "GPULENS_TEST_KUBECONFIG")
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.Timeout = 30 * time.Second
	return cfg
}

// registerCRDs creates (or updates) testdata/crds' definitions and waits
// until the server serves them.
func registerCRDs(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/crds/*.yaml")
	if err != nil || len(files) != 2 {
		t.Fatalf("testdata/crds: %d files (%v), want ServiceMonitor's and PrometheusRule's: run go generate", len(files), err)
	}
	ctx := t.Context()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds := ext.ApiextensionsV1().CustomResourceDefinitions()
		if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			crd.ResourceVersion = cur.ResourceVersion
			if _, err := crds.Update(ctx, &crd, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("%s: update: %v", f, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !established(ctx, ext, crd.Name) {
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s not established after 30s", crd.Name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func established(ctx context.Context, ext apiextensions.Interface, name string) bool {
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// ensureNamespace creates a namespace if absent. It is never deleted:
// without a namespace controller it would stay Terminating, and other
// tests sharing the server (e2e/kube) use the same names.
func ensureNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("namespace %s: %v", name, err)
	}
}

type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// newApplier maps kinds to resources from the server's discovery, once
// the CRDs are served.
func newApplier(t *testing.T, cfg *rest.Config) *applier {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Discovery lags a CRD's Established condition by a moment.
	var mapper meta.RESTMapper
	deadline := time.Now().Add(30 * time.Second)
	for {
		groups, err := restmapper.GetAPIGroupResources(dc)
		if err != nil {
			t.Fatal(err)
		}
		mapper = restmapper.NewDiscoveryRESTMapper(groups)
		_, err1 := mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}, "v1")
		_, err2 := mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}, "v1")
		if err1 == nil && err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's discovery lacks the Prometheus Operator's kinds: %v, %v", err1, err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: mapper}
}

// dryRun sends obj by server-side apply with dryRun=All and strict field
// validation.
func (a *applier) dryRun(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = a.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	return ri.Patch(t.Context(), obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager:    "gpulens-chart-test",
		Force:           &force,
		FieldValidation: metav1.FieldValidationStrict,
		DryRun:          []string{metav1.DryRunAll},
	})
}
