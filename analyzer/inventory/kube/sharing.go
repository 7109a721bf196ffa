package kube

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

	"github.com/gpulens/gpulens/analyzer/inventory"
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
func parseSharing(doc string) (inventory.SharingConfig, error) {
	var pc pluginConfig
	if err := yaml.Unmarshal([]byte(doc), &pc); err != nil {
		return inventory.SharingConfig{}, errors.New(oneLine(err.Error()))
	}
	sc := inventory.SharingConfig{MIGStrategy: pc.Flags.MIGStrategy}
	var err error
	if ts := pc.Sharing.TimeSlicing; ts != nil {
		if sc.TimeSlicing, err = replicas("timeSlicing", ts); err != nil {
			return inventory.SharingConfig{}, err
		}
		sc.RenameByDefault = ts.RenameByDefault
		sc.FailRequestsGT1 = ts.FailRequestsGreaterThanOne
	}
	if mps := pc.Sharing.MPS; mps != nil {
		if sc.MPS, err = replicas("mps", mps); err != nil {
			return inventory.SharingConfig{}, err
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

func replicas(strategy string, s *sharingSpec) (map[vocab.Resource]int, error) {
	if len(s.Resources) == 0 {
		return nil, nil
	}
	out := make(map[vocab.Resource]int, len(s.Resources))
	for _, res := range s.Resources {
		if res.Name == "" {
			return nil, fmt.Errorf("sharing.%s: resource without a name", strategy)
		}
		// The plugin refuses such a config too, so no node runs with it.
		if res.Replicas < 1 {
			return nil, fmt.Errorf("sharing.%s: %s has %d replicas", strategy, res.Name, res.Replicas)
		}
		out[vocab.Resource(res.Name)] = res.Replicas
	}
	return out, nil
}
