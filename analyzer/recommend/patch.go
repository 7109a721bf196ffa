package recommend

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Patch is a strategic-merge patch for a workload, in both encodings
// (`kubectl patch --type strategic -p` takes either).
type Patch struct {
	// Target is Kind/namespace/name.
	Target string
	YAML   string
	JSON   string
	// Workload, Change and Claims are what the patch is built from, for
	// analyzer/manifest to build it again as a typed object: the
	// container's change, or the pod template's resourceClaims entries to
	// point at other templates.
	Workload workload.Ref
	Change   PatchChange
	Claims   []PodClaim
}

// PodClaim is a pod spec's resourceClaims entry: its name and the
// ResourceClaimTemplate it is generated from.
type PodClaim struct {
	Name, Template string
}

// PatchChange is what a patch does to one container.
type PatchChange struct {
	// Limits are GPU resources to set; Remove are resource names to drop
	// from limits and requests (a strategic-merge null deletes a key).
	Limits map[vocab.Resource]int64
	Remove []vocab.Resource
	// Env are environment variables to set (merged by name).
	Env map[string]string
}

// podSpecPath is where a kind keeps its pod template's spec.
func podSpecPath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return []string{"spec", "template", "spec"}
	}
}

// BuildPatch renders c for w's container; nil when the data does not
// say which container holds the GPU (w.Container empty). A strategic
// merge matches containers by name and adds one it does not find, so a
// patch naming a guessed container would add a container without an image
// rather than change the GPU's; ContainerUnknown says the change in
// words instead.
func BuildPatch(w workload.Ref, c PatchChange) *Patch {
	if w.Container == "" {
		return nil
	}
	// The patch is the Kubernetes API's: resource names as its keys.
	limits := map[string]any{}
	requests := map[string]any{}
	for _, r := range c.Remove {
		if _, set := c.Limits[r]; !set {
			limits[string(r)], requests[string(r)] = nil, nil
		}
	}
	for r, n := range c.Limits {
		limits[string(r)] = n
	}
	container := map[string]any{"name": w.Container}
	res := map[string]any{}
	if len(limits) > 0 {
		res["limits"] = limits
	}
	if len(requests) > 0 {
		res["requests"] = requests
	}
	if len(res) > 0 {
		container["resources"] = res
	}
	if len(c.Env) > 0 {
		var env []any
		for _, k := range sortedKeys(c.Env) {
			env = append(env, map[string]any{"name": k, "value": c.Env[k]})
		}
		container["env"] = env
	}
	var doc any = map[string]any{"containers": []any{container}}
	path := podSpecPath(w.Kind)
	for i := len(path) - 1; i >= 0; i-- {
		doc = map[string]any{path[i]: doc}
	}
	y, err := yaml.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("patch: %v", err)) // maps of strings and ints always marshal
	}
	j, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("patch: %v", err))
	}
	return &Patch{Target: w.String(), YAML: string(y), JSON: string(j), Workload: w, Change: c}
}

// ContainerUnknown is c in words for w, whose container holding the GPU
// is not in the data: the field of the pod template to change, with the
// container left for the reader to name.
func ContainerUnknown(w workload.Ref, c PatchChange) string {
	field := strings.Join(podSpecPath(w.Kind), ".") + ".containers[<the GPU container>]"
	var do []string
	for _, r := range sortedKeys(c.Limits) {
		do = append(do, fmt.Sprintf("set %s.resources.limits[%s] to %d", field, r, c.Limits[r]))
	}
	var drop []string
	for _, r := range c.Remove {
		if _, set := c.Limits[r]; !set && !slices.Contains(drop, string(r)) {
			drop = append(drop, string(r))
		}
	}
	if len(drop) > 0 {
		do = append(do, fmt.Sprintf("remove %s from %s.resources.limits and .requests", strings.Join(drop, " and "), field))
	}
	for _, k := range sortedKeys(c.Env) {
		do = append(do, fmt.Sprintf("set %s.env[%s] to %q", field, k, c.Env[k]))
	}
	return fmt.Sprintf("%s: %s; no patch is written: the container holding the GPU is not in the data (no container label on its series, and no pod spec from the cluster with one GPU container)",
		w, strings.Join(do, ", "))
}

// patchOr sets r's patch of c for w, or, where w's container is not in
// the data, says the change in words (ByHand, and in Notes).
func (r *Recommendation) patchOr(w workload.Ref, c PatchChange) {
	if r.Patch = BuildPatch(w, c); r.Patch != nil {
		return
	}
	r.ByHand = ContainerUnknown(w, c)
	r.Notes = append(r.Notes, r.ByHand)
}

// Sharing is a device plugin sharing config in data: its strategy
// (vocab.SharingTimeSlicing or SharingMPS) and the replicas of each GPU.
type Sharing struct {
	Strategy vocab.Sharing
	Replicas int
}

// Name is the config's name in the device plugin's config map, which the
// nodes' nvidia.com/device-plugin.config label selects.
func (s Sharing) Name() string {
	if s.Strategy == vocab.SharingMPS {
		return fmt.Sprintf("mps-%d", s.Replicas)
	}
	return fmt.Sprintf("time-slicing-%d", s.Replicas)
}

// sharingOf is the config of timeSlicingConfig, in data.
func sharingOf(mode vocab.Sharing, replicas int) *Sharing {
	if mode != vocab.SharingMPS {
		mode = vocab.SharingTimeSlicing
	}
	return &Sharing{Strategy: mode, Replicas: replicas}
}

// timeSlicingConfig is the device plugin config that advertises replicas
// of each GPU as nvidia.com/gpu.shared, so that only pods asking for a
// shared GPU get one.
func timeSlicingConfig(mode vocab.Sharing, replicas int) string {
	key := "timeSlicing"
	if mode == vocab.SharingMPS {
		key = "mps"
	}
	return strings.Join([]string{
		"version: v1",
		"sharing:",
		"  " + key + ":",
		"    renameByDefault: true",
		"    resources:",
		"      - name: nvidia.com/gpu",
		fmt.Sprintf("        replicas: %d", replicas),
		"",
	}, "\n")
}
