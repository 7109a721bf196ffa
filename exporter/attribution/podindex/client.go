package podindex

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/apiclient"
)

// NewClient returns a REST client of the core/v1 API only, which is all the
// exporter reads (its node's pods, and the node's labels). Its scheme knows
// core/v1 and nothing else, unlike client-go's kubernetes.Clientset, whose
// scheme registers every API group. It decodes into this package's cut-down
// API types (APIPod, APINode), not k8s.io/api's.
func NewClient(cfg *rest.Config) (*rest.RESTClient, error) {
	return apiclient.New(cfg, "/api", CoreV1, AddToScheme)
}

// NodePods lists and watches the pods bound to node, in every namespace.
// The field selector makes the API server send this node's pods only.
func NodePods(c cache.Getter, node string) cache.ListerWatcher {
	return cache.NewListWatchFromClient(c, "pods", metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", node))
}

// NodeLabels reads node's labels.
func NodeLabels(ctx context.Context, c rest.Interface, node string) (map[string]string, error) {
	var n APINode
	if err := c.Get().Resource("nodes").Name(node).Do(ctx).Into(&n); err != nil {
		return nil, fmt.Errorf("reading node %s: %w", node, err)
	}
	return n.Labels, nil
}
