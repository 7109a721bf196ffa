package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// KueueAPI is the Kueue API version read: v1beta2, the storage version
// since Kueue 0.15 (v1beta1 is served beside it).
const KueueAPI = "kueue.x-k8s.io/v1beta2"

// Kueue holds Kueue's queues, where Kueue is installed: each team's
// ClusterQueue with its GPU quotas per ResourceFlavor, the LocalQueues that
// map namespaces to them, and the flavors' node labels.
type Kueue struct {
	ClusterQueues []ClusterQueue
	LocalQueues   []LocalQueue
	// Flavors maps a ResourceFlavor to its node labels, which tell the GPU
	// model it stands for (nvidia.com/gpu.product, GPU Feature Discovery's).
	Flavors map[string]map[string]string
}

// ClusterQueue is a Kueue ClusterQueue's GPU quotas.
type ClusterQueue struct {
	Name string
	// Cohort is the cohort it borrows in; a borrowing limit needs one.
	Cohort string
	Quotas []KueueQuota
}

// KueueQuota is one GPU resource of one flavor of a ClusterQueue.
type KueueQuota struct {
	Flavor, Resource string
	Nominal          float64
	// Borrowing is the borrowing limit; nil when none is set (the cohort's
	// unused quota, all of it).
	Borrowing *float64
	// Path is the JSON pointer of the resource's entry in the object, for
	// a JSON patch.
	Path string
}

// LocalQueue maps a namespace to a ClusterQueue.
type LocalQueue struct {
	Namespace, Name, ClusterQueue string
}

// Namespaces are the namespaces whose LocalQueues point at cq, sorted.
func (k *Kueue) Namespaces(cq string) []string {
	if k == nil {
		return nil
	}
	var out []string
	for _, lq := range k.LocalQueues {
		if lq.ClusterQueue == cq && !slices.Contains(out, lq.Namespace) {
			out = append(out, lq.Namespace)
		}
	}
	slices.Sort(out)
	return out
}

// readKueue lists ClusterQueues, LocalQueues and ResourceFlavors through
// the API server's REST paths, so that the analyzer links no Kueue client.
// A cluster without Kueue (no such API) is no failure: Kueue stays nil.
func readKueue(ctx context.Context, r *reader) (func(), error) {
	if _, err := r.c.Discovery().ServerResourcesForGroupVersion(KueueAPI); err != nil {
		if apierrors.IsNotFound(err) {
			return func() {}, nil
		}
		return nil, err
	}
	rc := r.c.Discovery().RESTClient()
	if rc == nil {
		return func() {}, nil // a fake clientset's discovery has no REST client
	}
	list := func(resource string, into any) error {
		body, err := rc.Get().AbsPath("/apis/" + KueueAPI + "/" + resource).DoRaw(ctx)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, into); err != nil {
			return fmt.Errorf("%s: %w", resource, err)
		}
		return nil
	}
	var cqs struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				CohortName     string `json:"cohortName"`
				ResourceGroups []struct {
					Flavors []struct {
						Name      string `json:"name"`
						Resources []struct {
							Name           string             `json:"name"`
							NominalQuota   resource.Quantity  `json:"nominalQuota"`
							BorrowingLimit *resource.Quantity `json:"borrowingLimit"`
						} `json:"resources"`
					} `json:"flavors"`
				} `json:"resourceGroups"`
			} `json:"spec"`
		} `json:"items"`
	}
	var lqs struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				ClusterQueue string `json:"clusterQueue"`
			} `json:"spec"`
		} `json:"items"`
	}
	var rfs struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				NodeLabels map[string]string `json:"nodeLabels"`
			} `json:"spec"`
		} `json:"items"`
	}
	for _, l := range []struct {
		resource string
		into     any
	}{{"clusterqueues", &cqs}, {"localqueues", &lqs}, {"resourceflavors", &rfs}} {
		if err := list(l.resource, l.into); err != nil {
			return nil, err
		}
	}
	k := &Kueue{Flavors: map[string]map[string]string{}}
	for _, item := range cqs.Items {
		cq := ClusterQueue{Name: item.Metadata.Name, Cohort: item.Spec.CohortName}
		for g, rg := range item.Spec.ResourceGroups {
			for f, fl := range rg.Flavors {
				for i, res := range fl.Resources {
					if !IsGPUResource(corev1.ResourceName(res.Name)) {
						continue
					}
					q := KueueQuota{Flavor: fl.Name, Resource: res.Name, Nominal: res.NominalQuota.AsApproximateFloat64(),
						Path: fmt.Sprintf("/spec/resourceGroups/%d/flavors/%d/resources/%d", g, f, i)}
					if res.BorrowingLimit != nil {
						v := res.BorrowingLimit.AsApproximateFloat64()
						q.Borrowing = &v
					}
					cq.Quotas = append(cq.Quotas, q)
				}
			}
		}
		k.ClusterQueues = append(k.ClusterQueues, cq)
	}
	for _, item := range lqs.Items {
		k.LocalQueues = append(k.LocalQueues, LocalQueue{Namespace: item.Metadata.Namespace, Name: item.Metadata.Name, ClusterQueue: item.Spec.ClusterQueue})
	}
	for _, item := range rfs.Items {
		k.Flavors[item.Metadata.Name] = item.Spec.NodeLabels
	}
	return func() { r.inv.Kueue = k }, nil
}
