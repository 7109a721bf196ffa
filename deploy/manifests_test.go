// Package deploy holds the Helm chart and the manifests rendered from it;
// this test checks the security promises of the rendered manifests.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

type object struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Rules []struct {
		Resources []string `yaml:"resources"`
		Verbs     []string `yaml:"verbs"`
	} `yaml:"rules"`
	Spec struct {
		Template struct {
			Spec struct {
				HostPID     bool `yaml:"hostPID"`
				HostNetwork bool `yaml:"hostNetwork"`
				Containers  []struct {
					Args            []string `yaml:"args"`
					SecurityContext struct {
						Privileged               *bool `yaml:"privileged"`
						AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
						ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
						Capabilities             struct {
							Drop []string `yaml:"drop"`
							Add  []string `yaml:"add"`
						} `yaml:"capabilities"`
					} `yaml:"securityContext"`
					VolumeMounts []struct {
						MountPath string `yaml:"mountPath"`
						ReadOnly  bool   `yaml:"readOnly"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func load(t *testing.T) []object {
	t.Helper()
	b, err := os.ReadFile("manifests/gpulens.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []object
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o object
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if o.Kind != "" {
			out = append(out, o)
		}
	}
}

func TestExporterLeastPrivilege(t *testing.T) {
	var ds, role *object
	objs := load(t)
	for i := range objs {
		switch objs[i].Kind {
		case "DaemonSet":
			ds = &objs[i]
		case "ClusterRole":
			if objs[i].Metadata.Name == "gpulens-exporter" {
				role = &objs[i]
			}
		}
	}
	if ds == nil || role == nil {
		t.Fatal("the manifests lack the exporter DaemonSet or its ClusterRole")
	}
	pod := ds.Spec.Template.Spec
	if pod.HostPID || pod.HostNetwork {
		t.Error("hostPID/hostNetwork must be opt-in (exporter.processAttribution.enabled)")
	}
	if !slices.Contains(pod.Containers[0].Args, "--path.procfs=") {
		t.Error("without hostPID the exporter must be told per-process attribution is off")
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Error("the exporter must not be privileged nor escalate")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Error("the root filesystem must be read-only")
		}
		if !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("capabilities: drop %v add %v, want drop ALL", sc.Capabilities.Drop, sc.Capabilities.Add)
		}
		for _, m := range c.VolumeMounts {
			if !m.ReadOnly {
				t.Errorf("volume %s is mounted read-write", m.MountPath)
			}
		}
	}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if !slices.Contains([]string{"get", "list", "watch"}, v) {
				t.Errorf("the exporter may %s %v: it only reads", v, r.Resources)
			}
		}
		for _, res := range r.Resources {
			if !slices.Contains([]string{"pods", "nodes"}, res) {
				t.Errorf("the exporter may read %s: it needs only pods and nodes", res)
			}
		}
	}
}
