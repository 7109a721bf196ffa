// Package apiclient builds the exporter's REST clients: each knows one API
// group version and decodes into its caller's cut-down types, so the
// exporter links neither k8s.io/api nor client-go's typed clientset, whose
// scheme registers every API group (docs/ARCHITECTURE.md, "Memory").
package apiclient

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// New returns a REST client of gv alone, served under apiPath ("/api" for
// core, "/apis" for named groups), whose scheme is what add registers.
func New(cfg *rest.Config, apiPath string, gv schema.GroupVersion, add func(*runtime.Scheme) error) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := add(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = apiPath
	c.GroupVersion = &gv
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}
