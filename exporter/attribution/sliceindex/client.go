package sliceindex

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/apiclient"
)

// NewClient returns a REST client of resource.k8s.io/v1 only, decoding
// into this package's cut-down types.
func NewClient(cfg *rest.Config) (*rest.RESTClient, error) {
	return apiclient.New(cfg, "/apis", ResourceV1, AddToScheme)
}

// NodeSlices lists and watches driver's ResourceSlices of node. The API
// server indexes slices by spec.nodeName and spec.driver
// (k8s.io/kubernetes pkg/apis/resource/v1/conversion.go accepts both as
// field labels), so it sends a handful of slices rather than the cluster's.
func NodeSlices(c cache.Getter, node, driver string) cache.ListerWatcher {
	sel := fields.AndSelectors(
		fields.OneTermEqualSelector("spec.nodeName", node),
		fields.OneTermEqualSelector("spec.driver", driver))
	return cache.NewListWatchFromClient(c, "resourceslices", metav1.NamespaceAll, sel)
}
