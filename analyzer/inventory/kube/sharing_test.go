package kube

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

func TestParseSharing(t *testing.T) {
	tests := []struct {
		file    string
		want    inventory.SharingConfig
		wantErr []string // substrings of the error
	}{
		{file: "time-slicing.yaml", want: inventory.SharingConfig{
			TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}, RenameByDefault: true, FailRequestsGT1: true, MIGStrategy: "none",
		}},
		{file: "time-slicing-mig-single.yaml", want: inventory.SharingConfig{
			TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 2, "nvidia.com/mig-1g.10gb": 3}, MIGStrategy: "single",
		}},
		{file: "mps.yaml", want: inventory.SharingConfig{MPS: map[vocab.Resource]int{"nvidia.com/gpu": 4}, RenameByDefault: true}},
		{file: "mig-only.yaml", want: inventory.SharingConfig{MIGStrategy: "mixed"}},
		{file: "unknown-fields.yaml", want: inventory.SharingConfig{TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 8}, MIGStrategy: "none"}},
		{file: "empty.yaml", want: inventory.SharingConfig{}},
		// yaml.v3 reports the line where the enclosing block starts.
		{file: "malformed.yaml", wantErr: []string{"line 3", "did not find expected key"}},
		{file: "wrong-type.yaml", wantErr: []string{"line 6", "four"}},
		{file: "zero-replicas.yaml", wantErr: []string{"sharing.timeSlicing", "nvidia.com/gpu", "0 replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", "sharing", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseSharing(string(doc))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q spans lines; Skipped entries are one line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestReadSharingConfigMaps(t *testing.T) {
	tests := []struct {
		name        string
		configMaps  []string
		wantConfigs []string
		wantSkipped []string // one entry each, by prefix
	}{
		{
			name:        "defaults, one missing",
			wantConfigs: []string{"a100-40gb", "h100-mig"},
		},
		{
			name:        "explicit, with broken keys",
			configMaps:  []string{"nvidia-device-plugin/nvidia-device-plugin-configs"},
			wantConfigs: []string{"default"},
			wantSkipped: []string{
				`configmap nvidia-device-plugin/nvidia-device-plugin-configs key "l40s": yaml: line 3: did not find expected key`,
				`configmap nvidia-device-plugin/nvidia-device-plugin-configs key "t4": yaml: unmarshal errors: line 6:`,
			},
		},
		{
			name:        "explicit and missing",
			configMaps:  []string{"gpu-operator/time-slicing-config", "gpu-operator/device-plugin-config", "time-slicing-config"},
			wantConfigs: []string{"a100-40gb", "h100-mig"},
			wantSkipped: []string{
				"configmap gpu-operator/device-plugin-config: not found",
				`configmap "time-slicing-config": want namespace/name`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.DevicePluginConfigMaps = tt.configMaps
			inv := Read(t.Context(), fakeCluster(t, "testdata/configmaps-broken.yaml"), o)

			if got := slices.Sorted(maps.Keys(inv.Sharing)); !slices.Equal(got, tt.wantConfigs) {
				t.Errorf("configs = %v, want %v", got, tt.wantConfigs)
			}
			if len(inv.Skipped) != len(tt.wantSkipped) {
				t.Fatalf("Skipped = %q, want %d entries", inv.Skipped, len(tt.wantSkipped))
			}
			for i, want := range tt.wantSkipped {
				if !strings.HasPrefix(inv.Skipped[i], want) {
					t.Errorf("Skipped[%d] = %q, want prefix %q", i, inv.Skipped[i], want)
				}
			}
		})
	}
}
