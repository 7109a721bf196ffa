package inventory

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/vocab"
)

// AllocationOf is how a pod is given its GPUs: vocab.AllocationPathDRA when it has a
// GPU claim (whether or not it also has GPU limits: a right-sizing of its
// claim is what applies there), vocab.AllocationPathDevicePlugin when it has GPU
// limits only, "" for a pod the inventory does not know or one without
// GPUs.
func (inv *Inventory) AllocationOf(namespace, pod string) vocab.AllocationPath {
	if inv == nil {
		return ""
	}
	p, ok := inv.Pods[PodKey{namespace, pod}]
	switch {
	case !ok:
		return ""
	case len(inv.ClaimsOf(namespace, []string{pod})) > 0:
		return vocab.AllocationPathDRA
	case len(p.GPURequests) > 0:
		return vocab.AllocationPathDevicePlugin
	}
	return ""
}

// ClaimsOf are the GPU claims of a workload's pods (those of pods the
// inventory knows), one per entry of their spec.resourceClaims that names
// a GPU claim, in the order of the first pod's entries. A template's
// claim is described from the template, a named claim from the claim;
// an entry whose object could not be read is left out.
func (inv *Inventory) ClaimsOf(namespace string, pods []string) []dra.Claim {
	if inv == nil {
		return nil
	}
	var out []dra.Claim
	index := map[[3]string]int{} // entry name, template, claim
	for _, name := range pods {
		p, ok := inv.Pods[PodKey{namespace, name}]
		if !ok {
			continue
		}
		for _, pc := range p.Claims {
			c, ok := inv.claim(namespace, pc)
			if !ok {
				continue
			}
			key := [3]string{c.PodClaim, c.Template, c.ResourceClaim}
			i, seen := index[key]
			if !seen {
				i = len(out)
				index[key] = i
				out = append(out, c)
			}
			if !slices.Contains(out[i].Pods, name) {
				out[i].Pods = append(out[i].Pods, name)
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Pods)
	}
	return out
}

// GPUClaimOf is the first of ClaimsOf, whole; nil when the workload's pods
// have no GPU claim (they use the device plugin, or the claims could not
// be read). GPUClaimFor narrows it to one container's requests.
func (inv *Inventory) GPUClaimOf(namespace string, pods []string) *dra.Claim {
	cs := inv.ClaimsOf(namespace, pods)
	if len(cs) == 0 {
		return nil
	}
	return &cs[0]
}

// GPUClaimFor is the claim a right-sizing of container's GPU changes: the
// first of ClaimsOf that container uses, narrowed to the requests it names
// (dra.Claim.For), so that of a claim with a slice for each container the
// one changed is the container's own. Where container uses none by name
// (it is "", or the metrics name it differently), GPUClaimOf.
func (inv *Inventory) GPUClaimFor(namespace string, pods []string, container string) *dra.Claim {
	cs := inv.ClaimsOf(namespace, pods)
	for i := range cs {
		if c, ok := cs[i].For(container); ok {
			return c
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return &cs[0]
}

// claim describes one entry of a pod's spec.resourceClaims; false when it
// names no GPU claim the inventory read.
func (inv *Inventory) claim(namespace string, pc PodClaim) (dra.Claim, bool) {
	c := dra.Claim{Namespace: namespace, PodClaim: pc.Name, Containers: pc.Containers}
	var spec ClaimSpec
	if pc.Template != "" {
		t, ok := inv.ClaimTemplates[ClaimKey{namespace, pc.Template}]
		if !ok {
			return dra.Claim{}, false
		}
		c.Template, spec = pc.Template, t
	} else {
		rc, ok := inv.Claims[ClaimKey{namespace, pc.Claim}]
		if !ok {
			return dra.Claim{}, false
		}
		c.ResourceClaim, spec = pc.Claim, rc.ClaimSpec
		c.SharedBy = inv.claimUsers(ClaimKey{namespace, pc.Claim}, rc.ReservedFor)
	}
	if len(spec.GPU) == 0 {
		return dra.Claim{}, false
	}
	c.Requests, c.Spec, c.Metadata = slices.Clone(spec.GPU), spec.Spec, spec.Metadata
	return c, true
}

// IndexClaimUsers records, per ResourceClaim, the pods whose spec names it
// and which have not finished (a finished pod's reservation is released),
// so that ClaimsOf tells a shared claim without a scan of every pod.
func (inv *Inventory) IndexClaimUsers() {
	users := map[ClaimKey][]string{}
	for key, p := range inv.Pods {
		if p.Phase == "Succeeded" || p.Phase == "Failed" {
			continue
		}
		for _, pc := range p.Claims {
			if pc.Template == "" && pc.Claim != "" {
				k := ClaimKey{key.Namespace, pc.Claim}
				users[k] = append(users[k], key.Name)
			}
		}
	}
	inv.ClaimUsers = users
}

// claimUsers are the pods that use a ResourceClaim: those whose spec names
// it, and those the scheduler reserved it for (which covers pods the
// inventory did not list), sorted.
func (inv *Inventory) claimUsers(key ClaimKey, reservedFor []string) []string {
	users := slices.Clone(reservedFor)
	for _, p := range inv.ClaimUsers[key] {
		if !slices.Contains(users, p) {
			users = append(users, p)
		}
	}
	slices.Sort(users)
	return users
}
