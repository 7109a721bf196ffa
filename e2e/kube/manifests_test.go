package kube

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// manifestsPath is the chart rendered with default values, whose RBAC the
// tests here run the code under. tools/chart renders the chart for a
// matrix of values, decodes every object strictly and applies it to this
// same server with server-side dry-run; it also fails when this file is
// stale.
const manifestsPath = "../../deploy/manifests/gpulens.yaml"

// manifest is one object of the rendered chart.
type manifest struct {
	gvk schema.GroupVersionKind
	// typed is the object as client-go's scheme decodes it.
	typed runtime.Object
	// raw is the object as written, for applying it unchanged.
	raw *unstructured.Unstructured
}

func (m manifest) String() string {
	return m.gvk.Kind + " " + m.raw.GetNamespace() + "/" + m.raw.GetName()
}

// crdKinds are the prometheus-operator kinds the chart can render; the test
// server has no CustomResourceDefinitions for them.
var crdKinds = map[string]bool{"ServiceMonitor": true, "PrometheusRule": true}

// loadManifests decodes every object of the rendered chart strictly: a
// field client-go's types do not know (a typo) fails the test here, before
// the server is asked. Objects of crdKinds are returned undecoded.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	return loadManifestsFrom(t, manifestsPath)
}

// loadManifestsFrom is loadManifests of another render of the chart.
func loadManifestsFrom(t *testing.T, manifestsPath string) []manifest {
	t.Helper()
	b, err := os.ReadFile(manifestsPath)
	if err != nil {
		t.Fatal(err)
	}
	strict := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []manifest
	for _, doc := range splitYAML(t, b) {
		raw := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &raw.Object); err != nil {
			t.Fatalf("%s: %v", manifestsPath, err)
		}
		if len(raw.Object) == 0 {
			continue // a document of comments only
		}
		m := manifest{gvk: raw.GroupVersionKind(), raw: raw}
		if !crdKinds[m.gvk.Kind] {
			obj, gvk, err := strict.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", manifestsPath, m, err)
			}
			m.typed, m.gvk = obj, *gvk
		}
		out = append(out, m)
	}
	return out
}

// splitYAML splits a multi-document YAML stream.
func splitYAML(t *testing.T, b []byte) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
}

// applier applies objects by server-side apply, which creates or updates
// and so makes tests rerunnable on one server.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(t *testing.T, cfg *rest.Config) *applier {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDiscoveryRESTMapper(groups)}
}

// apply sends obj with strict field validation, so that the server's
// schema judges every field.
func (a *applier) apply(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
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
	opts := metav1.PatchOptions{FieldManager: "gpulens-e2e", Force: &force, FieldValidation: metav1.FieldValidationStrict}
	return ri.Patch(t.Context(), obj.GetName(), types.ApplyPatchType, body, opts)
}
