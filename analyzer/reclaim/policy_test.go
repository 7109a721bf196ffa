package reclaim

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	if p.Idle.For != 24*time.Hour || p.GracePeriod != 4*time.Hour || p.MaxActionsPerHour != 10 ||
		p.Idle.MaxAvgUtilization != 0.02 || p.Idle.MaxP95Utilization != 0.05 || p.Idle.MinCoverage != 0.95 {
		t.Errorf("defaults: %+v", p)
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"overrides", "idle:\n  for: 2d\ngrace_period: 90m\n", ""},
		{"unknown top key", "idle:\n  for: 2d\ngrace: 1h\n", "%s:3: grace: unknown key"},
		{"unknown nested key", "idle:\n  max_util: 0.1\n", "%s:2: idle.max_util: unknown key"},
		{"bad duration", "idle:\n  for: a day\n", `%s:2: idle.for: want a duration such as 24h or 90m, got "a day"`},
		{"grace not below window", "idle:\n  for: 4h\ngrace_period: 4h\n", "%s:3: grace_period: 4h: want less than idle.for (4h)"},
		// The file sets idle.for; the grace period's default clashes with
		// it, and the key the file set is the one named, with its line.
		{"window below default grace", "idle:\n  for: 3h\n", "%s:2: idle.for: 3h: want more than grace_period (4h)"},
		{"ratio", "idle:\n  max_avg_utilization: 2\n", "%s:2: idle.max_avg_utilization: 2 is not a ratio in (0, 1]"},
		{"p95 below avg", "idle:\n  max_avg_utilization: 0.1\n", "%s:2: idle.max_avg_utilization: 0.1 is above idle.max_p95_utilization (0.05): a p95 is never below its average"},
		{"p95 set below avg", "idle:\n  max_p95_utilization: 0.01\n", "%s:2: idle.max_p95_utilization: 0.01 is below idle.max_avg_utilization (0.02): a p95 is never below its average"},
		{"rate", "max_actions_per_hour: 0\n", "%s:1: max_actions_per_hour: 0: want at least 1 (dry run is the way to act on nothing)"},
		{"not a number", "max_actions_per_hour: many\n", `%s:1: max_actions_per_hour: want a int, got "many"`},
		{"a list", "idle: [1]\n", "%s:1: idle: want a mapping"},
		{"foreign file", "root: x\n", "%s: not a reclaim policy: none of its top-level keys is one of idle, grace_period, max_actions_per_hour (nothing of the file is shown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := LoadPolicy(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Idle.For != 48*time.Hour || p.GracePeriod != 90*time.Minute || p.MaxActionsPerHour != 10 {
					t.Errorf("got %+v", p)
				}
				return
			}
			want := sprintf(tc.want, path)
			if err == nil || err.Error() != want {
				t.Errorf("got error %v\nwant       %s", err, want)
			}
		})
	}
}
