package inventory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// pluginConfig is the part of the NVIDIA device plugin's config file
// (api/config/v1 in k8s-device-plugin) that describes sharing. Unknown
// fields are ignored so that newer plugin versions still parse.
type pluginConfig struct {
	Version string `yaml:"version"`
	Flags   struct {
		MIGStrategy string `yaml:"migStrategy"`
	} `yaml:"flags"`
	Sharing struct {
		TimeSlicing *sharingSpec `yaml:"timeSlicing"`
		MPS         *sharingSpec `yaml:"mps"`
	} `yaml:"sharing"`
}

type sharingSpec struct {
	RenameByDefault            bool `yaml:"renameByDefault"`
	FailRequestsGreaterThanOne bool `yaml:"failRequestsGreaterThanOne"`
	Resources                  []struct {
		Name     string `yaml:"name"`
		Replicas int    `yaml:"replicas"`
	} `yaml:"resources"`
}

// readSharing reads the device plugin ConfigMaps by name. They are fetched
// with GET rather than listed so that the RBAC rule can be limited to
// these names and nothing else in the namespace is readable.
func (r *reader) readSharing(ctx context.Context) {
	refs, defaults := r.o.configMaps()
	for _, ref := range refs {
		ns, name, ok := strings.Cut(ref, "/")
		if !ok || ns == "" || name == "" {
			r.inv.Skipped = append(r.inv.Skipped, fmt.Sprintf("configmap %q: want namespace/name", ref))
			continue
		}
		cm, err := r.c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if defaults && apierrors.IsNotFound(err) {
				r.o.Logger.Debug("no device plugin config", "configmap", ref)
				continue
			}
			r.skip("configmap "+ref, err, "sharing taken from node labels")
			continue
		}
		// Sorted, so that which of two equally named configs wins and the
		// order of Skipped entries do not depend on map order.
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			sc, err := parseSharing(cm.Data[key])
			if err != nil {
				r.inv.Skipped = append(r.inv.Skipped, fmt.Sprintf("configmap %s key %q: %v", ref, key, err))
				continue
			}
			if prev, dup := r.inv.Sharing[key]; dup {
				r.o.Logger.Warn("device plugin config defined twice; keeping the first",
					"config", key, "kept", prev.Source, "ignored", ref)
				continue
			}
			sc.Source = ref
			r.inv.Sharing[key] = sc
		}
	}
}

// parseSharing parses one device plugin config file.
func parseSharing(doc string) (SharingConfig, error) {
	var pc pluginConfig
	if err := yaml.Unmarshal([]byte(doc), &pc); err != nil {
		return SharingConfig{}, errors.New(oneLine(err.Error()))
	}
	sc := SharingConfig{MIGStrategy: pc.Flags.MIGStrategy}
	var err error
	if ts := pc.Sharing.TimeSlicing; ts != nil {
		if sc.TimeSlicing, err = replicas("timeSlicing", ts); err != nil {
			return SharingConfig{}, err
		}
		sc.RenameByDefault = ts.RenameByDefault
		sc.FailRequestsGT1 = ts.FailRequestsGreaterThanOne
	}
	if mps := pc.Sharing.MPS; mps != nil {
		if sc.MPS, err = replicas("mps", mps); err != nil {
			return SharingConfig{}, err
		}
		sc.RenameByDefault = sc.RenameByDefault || mps.RenameByDefault
		sc.FailRequestsGT1 = sc.FailRequestsGT1 || mps.FailRequestsGreaterThanOne
	}
	return sc, nil
}

// oneLine joins yaml.v3's "unmarshal errors:" list, one error a line, into
// a single line, since each Skipped entry is one line of a report.
func oneLine(msg string) string {
	head, rest, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg
	}
	lines := strings.Split(rest, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return head + " " + strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "; ")
}

func replicas(strategy string, s *sharingSpec) (map[string]int, error) {
	if len(s.Resources) == 0 {
		return nil, nil
	}
	out := make(map[string]int, len(s.Resources))
	for _, res := range s.Resources {
		if res.Name == "" {
			return nil, fmt.Errorf("sharing.%s: resource without a name", strategy)
		}
		// The plugin refuses such a config too, so no node runs with it.
		if res.Replicas < 1 {
			return nil, fmt.Errorf("sharing.%s: %s has %d replicas", strategy, res.Name, res.Replicas)
		}
		out[res.Name] = res.Replicas
	}
	return out, nil
}

// SharingFor returns the sharing config a node's device plugin runs with.
// A node labelled nvidia.com/device-plugin.config gets that config. An
// unlabelled node gets the ClusterPolicy's default config, which the
// inventory does not read (it is a GPU Operator custom resource); it is
// assumed to be the only config when there is exactly one, as in the
// GPU Operator's documented setup ("any"), unless GFD reports the node as
// not shared. ok is false otherwise: the node's GFD labels (Replicas,
// SharingStrategy) are then the only evidence.
func (inv *Inventory) SharingFor(n Node) (SharingConfig, bool) {
	if inv == nil {
		return SharingConfig{}, false
	}
	if n.DevicePluginCfg != "" {
		sc, ok := inv.Sharing[n.DevicePluginCfg]
		return sc, ok
	}
	if len(inv.Sharing) != 1 || n.SharingStrategy == signals.SharingNone {
		return SharingConfig{}, false
	}
	for _, sc := range inv.Sharing {
		return sc, true
	}
	return SharingConfig{}, false
}

// NodeSharing is how the cluster says a node's whole (non-MIG) GPUs are
// shared.
type NodeSharing struct {
	// Strategy is signals.SharingTimeSlicing or signals.SharingMPS.
	Strategy string
	// Replicas is each GPU's replica count; 0 when not known.
	Replicas int
	// Source says where the strategy was read, in words, for findings.
	Source string
}

// SharedGPUs says whether the node's whole GPUs are time-sliced or MPS,
// and ok false when the cluster says they are not shared or does not
// say. GFD's labels are what the node's device plugin runs with, so they
// win: the strategy label (GFD from v0.15 on), then a replicas label
// above 1 alone (earlier GFD, which had only time-slicing). Without
// them, the node's device plugin config (SharingFor) decides, from its
// replicas of a full-GPU resource.
func (inv *Inventory) SharedGPUs(node string) (NodeSharing, bool) {
	if inv == nil || !inv.Available {
		return NodeSharing{}, false
	}
	n, ok := inv.Nodes[node]
	if !ok {
		return NodeSharing{}, false
	}
	switch n.SharingStrategy {
	case signals.SharingTimeSlicing, signals.SharingMPS:
		return NodeSharing{Strategy: n.SharingStrategy, Replicas: n.Replicas,
			Source: fmt.Sprintf("node %s's label %s=%s", n.Name, LabelSharingStrategy, n.SharingStrategy)}, true
	case signals.SharingNone:
		return NodeSharing{}, false
	}
	if n.Replicas > 1 {
		return NodeSharing{Strategy: signals.SharingTimeSlicing, Replicas: n.Replicas,
			Source: fmt.Sprintf("node %s's label %s=%d", n.Name, LabelGPUReplicas, n.Replicas)}, true
	}
	sc, ok := inv.SharingFor(n)
	if !ok {
		return NodeSharing{}, false
	}
	for _, s := range []struct {
		strategy string
		replicas map[string]int
	}{{signals.SharingMPS, sc.MPS}, {signals.SharingTimeSlicing, sc.TimeSlicing}} {
		if r := wholeGPUReplicas(s.replicas); r > 1 {
			return NodeSharing{Strategy: s.strategy, Replicas: r,
				Source: fmt.Sprintf("the device plugin config in %s", sc.Source)}, true
		}
	}
	return NodeSharing{}, false
}

// wholeGPUReplicas is the replica count of a full-GPU resource
// (nvidia.com/gpu, or a renamed one such as nvidia.com/gpu.shared), not of
// a MIG resource (nvidia.com/mig-1g.10gb).
func wholeGPUReplicas(replicas map[string]int) int {
	out := 0
	for _, name := range slices.Sorted(maps.Keys(replicas)) {
		if !strings.HasPrefix(name, vocab.ResourceMIGPrefix) {
			out = max(out, replicas[name])
		}
	}
	return out
}
