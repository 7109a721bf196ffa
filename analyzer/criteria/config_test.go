package criteria

import (
	"strings"
	"testing"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.MinCoverage != 0.5 || c.Idle.MaxAvgUtilization != 0.05 || c.Underused.MaxAvgUtilization != 0.6 ||
		c.OOMRisk.WarningRatio != 0.9 || c.OOMRisk.CriticalRatio != 1 || c.Unallocated.MinRatio != 0.5 ||
		c.Recommend != DefaultPolicy() {
		t.Errorf("defaults: %+v", c)
	}
}

func TestLoadConfig(t *testing.T) {
	c, err := LoadConfig("testdata/config/ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Idle.MaxAvgUtilization != 0.02 || c.Recommend.MIGShare != ShareMemory || c.Idle.MinHeldHours != 4 {
		t.Errorf("override: %+v", c)
	}
	tests := []struct{ file, want string }{
		{"unknown-key.yaml", "testdata/config/unknown-key.yaml:3: idle.min_hours: unknown key"},
		{"bad-ratio.yaml", "testdata/config/bad-ratio.yaml:3: oom_risk.warning_ratio: 1.5 is not a ratio"},
		{"bad-share.yaml", `testdata/config/bad-share.yaml:2: recommend.mig_share: mig_share "sms": want compute or memory`},
		{"bad-type.yaml", `testdata/config/bad-type.yaml:1: min_samples: want a int, got "many"`},
		{"missing.yaml", "no such file"},
	}
	for _, tt := range tests {
		_, err := LoadConfig("testdata/config/" + tt.file)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.file, err, tt.want)
		}
	}
}
