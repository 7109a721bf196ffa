package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

// readKueue lists ClusterQueues, LocalQueues and ResourceFlavors through
// the API server's REST paths, so that the analyzer links no Kueue client.
// A cluster without Kueue (no such API) is no failure: Kueue stays nil.
func readKueue(ctx context.Context, r *reader) (func(), error) {
	if _, err := r.c.Discovery().ServerResourcesForGroupVersion(inventory.KueueAPI); err != nil {
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
		body, err := rc.Get().AbsPath("/apis/" + inventory.KueueAPI + "/" + resource).DoRaw(ctx)
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
	k := &inventory.Kueue{Flavors: map[string]map[string]string{}}
	for _, item := range cqs.Items {
		cq := inventory.ClusterQueue{Name: item.Metadata.Name, Cohort: item.Spec.CohortName}
		for g, rg := range item.Spec.ResourceGroups {
			for f, fl := range rg.Flavors {
				for i, res := range fl.Resources {
					r := vocab.Resource(res.Name)
					if !r.IsGPU() {
						continue
					}
					q := inventory.KueueQuota{Flavor: fl.Name, Resource: r, Nominal: res.NominalQuota.AsApproximateFloat64(),
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
		k.LocalQueues = append(k.LocalQueues, inventory.LocalQueue{Namespace: item.Metadata.Namespace, Name: item.Metadata.Name, ClusterQueue: item.Spec.ClusterQueue})
	}
	for _, item := range rfs.Items {
		k.Flavors[item.Metadata.Name] = item.Spec.NodeLabels
	}
	return func() { r.inv.Kueue = k }, nil
}
