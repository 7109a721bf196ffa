package quota

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/vocab"
)

// Kinds of quota advised.
const (
	KindClusterQueue  = "ClusterQueue"
	KindResourceQuota = "ResourceQuota"
)

// gpuProductLabel is GPU Feature Discovery's node label for the GPU model,
// which a ResourceFlavor selects nodes by.
const gpuProductLabel = vocab.LabelGPUProduct

// Advice is one quota, what was held under it, and what it should be.
type Advice struct {
	// Cluster is the cluster the quota is of, where a store of several
	// clusters is advised cluster by cluster; empty for one cluster.
	Cluster   string `json:"cluster,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Flavor is the ClusterQueue's ResourceFlavor; Resource the GPU
	// resource counted (nvidia.com/gpu, nvidia.com/mig-1g.10gb, ...).
	Flavor   string         `json:"flavor,omitempty"`
	Resource vocab.Resource `json:"resource"`
	// Namespaces are those whose pods count against it.
	Namespaces []string `json:"namespaces"`
	// Quota and Borrowing are today's (Borrowing nil: none set).
	Quota     float64  `json:"quota"`
	Borrowing *float64 `json:"borrowing_limit"`
	// Peak and P95 are of the GPUs held at once over the window's steps.
	Peak float64 `json:"peak"`
	P95  float64 `json:"p95"`
	// Advised and AdvisedBorrowing are the quota to set: the p95 with the
	// margin, and the rest of the peak as a borrowing limit (ClusterQueues
	// in a cohort only).
	Advised          int  `json:"advised"`
	AdvisedBorrowing *int `json:"advised_borrowing_limit,omitempty"`
	// Patch is the change, as PatchType (json for a ClusterQueue, whose
	// lists a merge patch would replace; merge for a ResourceQuota); empty
	// when nothing changes.
	Patch     string   `json:"patch,omitempty"`
	PatchType string   `json:"patch_type,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Changes says whether the advice changes the quota.
func (a Advice) Changes() bool { return a.Patch != "" }

// Advise compares every GPU quota of inv with what its namespaces held at
// each step of d, and advises quota = ⌈p95 × (1 + margin)⌉ and, in a cohort,
// a borrowing limit up to the peak.
func Advise(d *plan.Data, inv *inventory.Inventory, margin float64) []Advice {
	var out []Advice
	if inv == nil || d == nil {
		return nil
	}
	if k := inv.Kueue; k != nil {
		for _, cq := range k.ClusterQueues {
			nss := k.Namespaces(cq.Name)
			for _, q := range cq.Quotas {
				a := Advice{Kind: KindClusterQueue, Name: cq.Name, Flavor: q.Flavor, Resource: q.Resource, Namespaces: nss,
					Quota: q.Nominal, Borrowing: q.Borrowing}
				product := k.Flavors[q.Flavor][gpuProductLabel]
				if product == "" {
					a.Notes = append(a.Notes, fmt.Sprintf("flavor %s selects no %s label: every GPU model counts against it", q.Flavor, gpuProductLabel))
				}
				a.Peak, a.P95 = held(d, nss, q.Resource, product)
				a.advise(margin, cq.Cohort != "", q.Path)
				out = append(out, a)
			}
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(inv.Quotas)) {
		for _, rq := range inv.Quotas[ns] {
			v, ok := rq.Hard["requests."+string(vocab.ResourceGPU)]
			if !ok {
				continue
			}
			a := Advice{Kind: KindResourceQuota, Name: rq.Name, Namespace: ns, Resource: vocab.ResourceGPU,
				Namespaces: []string{ns}, Quota: float64(v)}
			a.Peak, a.P95 = held(d, a.Namespaces, a.Resource, "")
			a.advise(margin, false, "")
			out = append(out, a)
		}
	}
	return out
}

// advise sets the advised quota and borrowing limit and the patch.
func (a *Advice) advise(margin float64, cohort bool, path string) {
	a.Advised = int(math.Ceil(a.P95*(1+margin) - 1e-9))
	peak := int(math.Ceil(a.Peak - 1e-9))
	switch {
	case a.Kind == KindClusterQueue && cohort && peak > a.Advised:
		b := peak - a.Advised
		a.AdvisedBorrowing = &b
	case peak > a.Advised && a.Kind == KindClusterQueue:
		a.Notes = append(a.Notes, fmt.Sprintf("the peak of %d GPUs is above the advised quota and the queue is in no cohort, so it cannot borrow: its pods queue at the peak (a cohort, or a quota of %d, covers it)", peak, peak))
	case peak > a.Advised:
		a.Notes = append(a.Notes, fmt.Sprintf("the peak of %d GPUs is above the advised quota: pods beyond it are refused at the peak (a quota of %d covers it)", peak, peak))
	}
	if a.Kind == KindResourceQuota {
		if float64(a.Advised) != a.Quota {
			b, _ := json.Marshal(map[string]any{"spec": map[string]any{"hard": map[string]string{"requests." + string(a.Resource): strconv.Itoa(a.Advised)}}})
			a.Patch, a.PatchType = string(b), "merge"
		}
		return
	}
	var ops []map[string]any
	if float64(a.Advised) != a.Quota {
		ops = append(ops, map[string]any{"op": "replace", "path": path + "/nominalQuota", "value": strconv.Itoa(a.Advised)})
	}
	if a.AdvisedBorrowing != nil && (a.Borrowing == nil || *a.Borrowing != float64(*a.AdvisedBorrowing)) {
		// add replaces a member that is there too (RFC 6902).
		ops = append(ops, map[string]any{"op": "add", "path": path + "/borrowingLimit", "value": strconv.Itoa(*a.AdvisedBorrowing)})
	}
	if len(ops) > 0 {
		b, _ := json.Marshal(ops)
		a.Patch, a.PatchType = string(b), "json"
	}
}

// held is the peak and the p95, over the window's steps, of the GPUs of
// resource that pods of namespaces held at once, on GPUs of product
// (empty: any). A lane is one place held at a time; a time-sliced or MPS
// replica counts one nvidia.com/gpu, as the device plugin advertises it
// without renameByDefault, and a MIG slice one of its own resource.
func held(d *plan.Data, namespaces []string, resource vocab.Resource, product string) (peak, p95 float64) {
	counts := make([]float64, d.Steps)
	for _, pool := range d.Pools {
		if product != "" && strings.ReplaceAll(pool.Product, " ", "-") != product {
			continue
		}
		for _, l := range pool.Lanes {
			if !slices.Contains(namespaces, l.Workload.Namespace) || resourceOf(l.From) != resource {
				continue
			}
			for t := range counts {
				if t < len(l.Mem) && (l.Mem[t] > 0 || l.Load[t] > 0) {
					counts[t]++
				}
			}
		}
	}
	if len(counts) == 0 {
		return 0, 0
	}
	peak = slices.Max(counts)
	sorted := slices.Clone(counts)
	slices.Sort(sorted)
	// The nearest-rank p95: the smallest count at or above 95% of the steps.
	k := int(math.Ceil(0.95*float64(len(sorted)))) - 1
	return peak, sorted[max(k, 0)]
}

// resourceOf is the extended resource a lane's pods requested, from the
// plan's From: whole, time-slicing, mps or "mig <profile>".
func resourceOf(from string) vocab.Resource {
	if p, ok := strings.CutPrefix(from, "mig "); ok {
		return vocab.MIGResource(p)
	}
	return vocab.ResourceGPU
}
