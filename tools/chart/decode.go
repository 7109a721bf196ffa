package chart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// Scheme knows every kind the chart may render: Kubernetes' built-in
// types as client-go has them, and the Prometheus Operator's
// ServiceMonitor and PrometheusRule as its own Go types define them.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientscheme.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}()

// strict rejects unknown and duplicate fields, where the default decoder
// drops them: a misspelt securityContext would otherwise decode to an
// object without one.
var strict = serializer.NewCodecFactory(Scheme, serializer.EnableStrict).UniversalDeserializer()

// Object is one rendered object.
type Object struct {
	// Source is the template that rendered it (templates/daemonset.yaml).
	Source string
	GVK    schema.GroupVersionKind
	// Typed is the object as Scheme's Go types decode it.
	Typed runtime.Object
	// Raw is the object as rendered, for sending it to a server unchanged.
	Raw *unstructured.Unstructured
	doc []byte
}

func (o Object) String() string {
	name := o.Raw.GetName()
	if ns := o.Raw.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", o.GVK.Kind, name, o.Source)
}

var sourceLine = regexp.MustCompile(`(?m)^# Source: [^/\n]+/(\S+)$`)

// Decode splits a rendered manifest into objects and decodes each one
// strictly with Scheme: an unknown field, a kind Scheme does not know or
// a value of the wrong type is an error that names the object's template.
func Decode(manifest string) ([]Object, error) {
	objs, err := Split(manifest)
	if err != nil {
		return nil, err
	}
	for i, o := range objs {
		typed, gvk, err := strict.Decode(o.doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", o.Source, o.Raw.GetKind(), o.Raw.GetName(), err)
		}
		objs[i].Typed, objs[i].GVK = typed, *gvk
	}
	return objs, nil
}

// Split splits a rendered manifest into objects as written, without
// Go types (Typed is nil): what a server is sent, so that the server
// judges them on its own.
func Split(manifest string) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader([]byte(manifest))))
	var out []Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		source := "?"
		if m := sourceLine.FindSubmatch(doc); m != nil {
			source = string(m[1])
		}
		raw := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &raw.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(raw.Object) == 0 {
			continue // comments only
		}
		out = append(out, Object{Source: source, GVK: raw.GroupVersionKind(), Raw: raw, doc: doc})
	}
}
