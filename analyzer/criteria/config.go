package criteria

import (
	"cmp"
	_ "embed"
	"fmt"
	"os"
	"slices"
	"strings"
)

//go:embed defaults.yaml
var defaultConfig []byte

// Config holds the thresholds; defaults.yaml documents each.
type Config struct {
	MinCoverage float64 `yaml:"min_coverage" json:"min_coverage"`
	MinSamples  int     `yaml:"min_samples" json:"min_samples"`
	Idle        struct {
		MaxAvgUtilization float64 `yaml:"max_avg_utilization" json:"max_avg_utilization"`
		MinHeldHours      float64 `yaml:"min_held_hours" json:"min_held_hours"`
	} `yaml:"idle" json:"idle"`
	Underused struct {
		MaxAvgUtilization float64 `yaml:"max_avg_utilization" json:"max_avg_utilization"`
	} `yaml:"underused" json:"underused"`
	OOMRisk struct {
		WarningRatio       float64 `yaml:"warning_ratio" json:"warning_ratio"`
		CriticalRatio      float64 `yaml:"critical_ratio" json:"critical_ratio"`
		GrowthHorizonHours float64 `yaml:"growth_horizon_hours" json:"growth_horizon_hours"`
	} `yaml:"oom_risk" json:"oom_risk"`
	MIG struct {
		UndersizedRatio float64 `yaml:"undersized_ratio" json:"undersized_ratio"`
	} `yaml:"mig" json:"mig"`
	Training struct {
		MinLoad  float64 `yaml:"min_load" json:"min_load"`
		MinHours float64 `yaml:"min_hours" json:"min_hours"`
	} `yaml:"training" json:"training"`
	Unallocated struct {
		MinRatio float64 `yaml:"min_ratio" json:"min_ratio"`
	} `yaml:"unallocated" json:"unallocated"`
	Thermal struct {
		MinRatio float64 `yaml:"min_ratio" json:"min_ratio"`
	} `yaml:"thermal" json:"thermal"`
	Quota struct {
		Margin float64 `yaml:"margin" json:"margin"`
	} `yaml:"quota" json:"quota"`
	Recommend Policy `yaml:"recommend" json:"recommend"`
}

// DefaultConfig is defaults.yaml.
func DefaultConfig() Config {
	var c Config
	if err := parseConfig(&c, defaultConfig, "embedded defaults.yaml"); err != nil {
		panic(err) // a broken embedded file is a build defect; a test guards it
	}
	return c
}

// LoadConfig reads a config file over the defaults; an empty path is the
// defaults. Errors name the file, the line and the key.
func LoadConfig(path string) (Config, error) {
	c := DefaultConfig()
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("findings config: %w", err)
	}
	err = parseConfig(&c, data, path)
	return c, err
}

func parseConfig(c *Config, data []byte, file string) error {
	lines, err := DecodeStrict(data, file, "findings config", "the keys of analyzer/criteria/defaults.yaml", c)
	if err != nil {
		return err
	}
	probs := c.problems()
	// Report a key the file set before one whose default merely clashes
	// with it (that one has no line of its own).
	slices.SortStableFunc(probs, func(a, b problem) int { return cmp.Compare(min(1, lines[b.key]), min(1, lines[a.key])) })
	for _, p := range probs {
		return &FileError{File: file, Line: lines[p.key], Key: p.key, Msg: p.msg}
	}
	return nil
}

type problem struct{ key, msg string }

// problems are the values that would make findings meaningless.
func (c *Config) problems() []problem {
	var out []problem
	ratio := func(key string, v float64, allowZero bool) {
		if !(v <= 1) || v < 0 || (!allowZero && v == 0) {
			out = append(out, problem{key, fmt.Sprintf("%v is not a ratio in (0, 1]", v)})
		}
	}
	ratio("min_coverage", c.MinCoverage, true)
	ratio("idle.max_avg_utilization", c.Idle.MaxAvgUtilization, false)
	ratio("underused.max_avg_utilization", c.Underused.MaxAvgUtilization, false)
	ratio("oom_risk.warning_ratio", c.OOMRisk.WarningRatio, false)
	ratio("mig.undersized_ratio", c.MIG.UndersizedRatio, false)
	ratio("training.min_load", c.Training.MinLoad, false)
	ratio("unallocated.min_ratio", c.Unallocated.MinRatio, false)
	ratio("thermal.min_ratio", c.Thermal.MinRatio, false)
	ratio("quota.margin", c.Quota.Margin, true)
	if c.MinSamples < 1 {
		out = append(out, problem{"min_samples", fmt.Sprintf("%d: want at least 1", c.MinSamples)})
	}
	for key, v := range map[string]float64{"idle.min_held_hours": c.Idle.MinHeldHours, "training.min_hours": c.Training.MinHours,
		"oom_risk.growth_horizon_hours": c.OOMRisk.GrowthHorizonHours} {
		if !(v >= 0) {
			out = append(out, problem{key, fmt.Sprintf("%v: want 0 or more hours", v)})
		}
	}
	if !(c.OOMRisk.CriticalRatio >= c.OOMRisk.WarningRatio && c.OOMRisk.CriticalRatio <= 2) {
		out = append(out, problem{"oom_risk.critical_ratio", fmt.Sprintf("%v: want at least warning_ratio (%v), at most 2", c.OOMRisk.CriticalRatio, c.OOMRisk.WarningRatio)})
	}
	if c.Idle.MaxAvgUtilization > c.Underused.MaxAvgUtilization {
		out = append(out, problem{"idle.max_avg_utilization", "must not exceed underused.max_avg_utilization"})
	}
	if err := c.Recommend.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), " ")
		out = append(out, problem{"recommend." + key, err.Error()})
	}
	// Map iteration above is unordered; report the first key by name so
	// the error is stable.
	slices.SortStableFunc(out, func(a, b problem) int { return cmp.Compare(a.key, b.key) })
	return out
}
