package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// FromFindings is every change the findings recommend, as objects: per
// cluster the device plugin configs first (pods asking for a shared GPU
// wait for them), then each finding's claim template and patch, or the
// release of its allocation. A finding with no change, or one made by
// hand (a named ResourceClaim, a bare pod), is words alone.
func FromFindings(fs []findings.Finding) []Doc {
	var out []Doc
	cfg := map[string]*configs{}
	var order []string
	for _, f := range fs {
		r := f.Recommendation
		if r == nil {
			continue
		}
		if cfg[f.Cluster] == nil {
			cfg[f.Cluster] = &configs{}
			order = append(order, f.Cluster)
		}
		if r.Sharing != nil && r.DevicePluginConfig != "" {
			cfg[f.Cluster].addDevicePlugin(r.Sharing.Name(), r.DevicePluginConfig)
		}
		docs := findingDocs(f)
		for i := range docs {
			docs[i].Cluster = f.Cluster
		}
		out = append(out, docs...)
	}
	var head []Doc
	for _, c := range order {
		head = append(head, cfg[c].docs(c)...)
	}
	return Merged(append(head, out...))
}

// findingDocs are one finding's documents; the first says why.
func findingDocs(f findings.Finding) []Doc {
	r := f.Recommendation
	why := []string{f.Summary}
	if r.Summary != "" && r.Summary != f.Summary {
		why = append(why, r.Summary)
	}
	var docs []Doc
	switch {
	case r.Action == recommend.ActionRelease:
		docs = append(docs, releaseDoc(r.Workload))
	case r.Allocation == vocab.AllocationPathDRA && r.Claim != "":
		if t := r.ClaimTemplate; t != nil {
			docs = append(docs, claimTemplateDoc(t))
		}
		if r.Patch != nil {
			docs = append(docs, patchDoc(r.Patch))
		}
		notes := append([]string{"allocation: dra, through " + r.Claim}, r.Notes...)
		if len(docs) == 0 {
			docs = append(docs, Doc{})
		}
		docs[0].Comments = append(notes, docs[0].Comments...)
	case r.Patch != nil:
		docs = append(docs, patchDoc(r.Patch))
	case r.ByHand != "":
		// The container is not in the data: the change in words, no
		// patch.
		docs = append(docs, Doc{Comments: []string{r.ByHand}})
	case r.Sharing != nil:
		// The device plugin config alone: its ConfigMap comes first.
		docs = append(docs, Doc{Comments: []string{fmt.Sprintf("roll out device plugin config %q (ConfigMap %s/%s above) to the nodes %s runs on",
			r.Sharing.Name(), OperatorNamespace, DevicePluginConfigMap, r.Workload)}})
	default:
		return nil
	}
	if r.Sharing != nil && (r.Patch != nil || r.ByHand != "") {
		docs[0].Comments = append(docs[0].Comments, fmt.Sprintf("with device plugin config %q (ConfigMap %s/%s above) on the nodes it runs on",
			r.Sharing.Name(), OperatorNamespace, DevicePluginConfigMap))
	}
	docs[0].Comments = append(why, docs[0].Comments...)
	return docs
}

// claimTemplateDoc is t as a typed ResourceClaimTemplate: its spec, read
// from the inventory, is decoded strictly into resource.k8s.io/v1's
// types, so that a field they do not know is said rather than passed on.
func claimTemplateDoc(t *recommend.Manifest) Doc {
	b, err := json.Marshal(t.Spec)
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // JSON-shaped
	}
	var spec resourcev1.ResourceClaimTemplateSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return Doc{Comments: []string{fmt.Sprintf("ResourceClaimTemplate %s/%s: its spec does not decode as resource.k8s.io/v1 (%v); create it from the claim's spec by hand", t.Namespace, t.Name, err)}}
	}
	obj := toMap(&resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace},
		Spec:       spec,
	})
	return Doc{Comments: []string{"create the new claim template before the patch that points the workload at it (a template's spec is immutable)"}, Object: obj}
}
