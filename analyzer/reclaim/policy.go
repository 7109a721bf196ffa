package reclaim

import (
	"cmp"
	_ "embed"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/internal/promdur"
)

//go:embed defaults.yaml
var defaultPolicy []byte

// Policy says when a workload's GPUs are idle enough to reclaim, and how
// cautiously; defaults.yaml documents each field and why its default.
type Policy struct {
	Idle struct {
		// For is the analysis window: the workload must have held its
		// GPUs, idle, for all of it.
		For               time.Duration `yaml:"for"`
		MaxAvgUtilization float64       `yaml:"max_avg_utilization"`
		MaxP95Utilization float64       `yaml:"max_p95_utilization"`
		MinCoverage       float64       `yaml:"min_coverage"`
		// MaxAvgMemoryActivity bounds the average memory activity of
		// the workload's GPUs (or MIG instances) over the window, where
		// the store has it (signals.MemoryActivity).
		MaxAvgMemoryActivity float64 `yaml:"max_avg_memory_activity"`
	} `yaml:"idle"`
	GracePeriod       time.Duration `yaml:"grace_period"`
	MaxActionsPerHour int           `yaml:"max_actions_per_hour"`
}

// DefaultPolicy is defaults.yaml.
func DefaultPolicy() Policy {
	var p Policy
	if err := parsePolicy(&p, defaultPolicy, "embedded defaults.yaml"); err != nil {
		panic(err) // a broken embedded file is a build defect; TestDefaultPolicy guards it
	}
	return p
}

// LoadPolicy reads a policy file over the defaults; an empty path is the
// defaults. Errors name the file, the line and the key
// (*criteria.FileError), as the findings config's do.
func LoadPolicy(path string) (Policy, error) {
	p := DefaultPolicy()
	if path == "" {
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("reclaim policy: %w", err)
	}
	return p, parsePolicy(&p, data, path)
}

func parsePolicy(p *Policy, data []byte, file string) error {
	lines, err := criteria.DecodeStrict(data, file, "reclaim policy", "idle, grace_period, max_actions_per_hour", p)
	if err != nil {
		return err
	}
	probs := p.problems()
	for i, pr := range probs {
		// A default that clashes with a key the file set is said of
		// that key, at its line.
		if lines[pr.key] == 0 && pr.alt != nil && lines[pr.alt.key] > 0 {
			probs[i] = *pr.alt
		}
	}
	// A key the file set comes before a default's problem (that one has
	// no line of its own).
	slices.SortStableFunc(probs, func(a, b problem) int { return cmp.Compare(min(1, lines[b.key]), min(1, lines[a.key])) })
	for _, pr := range probs {
		return &criteria.FileError{File: file, Line: lines[pr.key], Key: pr.key, Msg: pr.msg}
	}
	return nil
}

// problem is a key's value that is wrong; alt says it of the other key
// of a clash, for when the file set that one and not this.
type problem struct {
	key, msg string
	alt      *problem
}

// problems are the values that would make a reclaim unsafe or
// meaningless.
func (p *Policy) problems() []problem {
	var out []problem
	ratio := func(key string, v float64, allowZero bool) {
		if !(v <= 1) || v < 0 || (!allowZero && v == 0) {
			out = append(out, problem{key: key, msg: fmt.Sprintf("%v is not a ratio in (0, 1]", v)})
		}
	}
	ratio("idle.max_avg_utilization", p.Idle.MaxAvgUtilization, true)
	ratio("idle.max_p95_utilization", p.Idle.MaxP95Utilization, true)
	ratio("idle.max_avg_memory_activity", p.Idle.MaxAvgMemoryActivity, true)
	ratio("idle.min_coverage", p.Idle.MinCoverage, false)
	if p.Idle.MaxP95Utilization < p.Idle.MaxAvgUtilization {
		out = append(out, problem{"idle.max_p95_utilization", fmt.Sprintf("%v is below idle.max_avg_utilization (%v): a p95 is never below its average", p.Idle.MaxP95Utilization, p.Idle.MaxAvgUtilization),
			&problem{key: "idle.max_avg_utilization", msg: fmt.Sprintf("%v is above idle.max_p95_utilization (%v): a p95 is never below its average", p.Idle.MaxAvgUtilization, p.Idle.MaxP95Utilization)}})
	}
	if p.Idle.For < time.Hour {
		out = append(out, problem{key: "idle.for", msg: fmt.Sprintf("%s: want at least 1h; a shorter window takes a pause for idleness", promdur.Format(p.Idle.For))})
	}
	if p.GracePeriod < time.Minute {
		out = append(out, problem{key: "grace_period", msg: fmt.Sprintf("%s: want at least 1m; a reclaim is announced before it happens", promdur.Format(p.GracePeriod))})
	} else if p.GracePeriod >= p.Idle.For {
		// The analysis at the end of the grace period must cover all of
		// it, so that activity in it is seen and cancels the reclaim.
		out = append(out, problem{"grace_period", fmt.Sprintf("%s: want less than idle.for (%s)", promdur.Format(p.GracePeriod), promdur.Format(p.Idle.For)),
			&problem{key: "idle.for", msg: fmt.Sprintf("%s: want more than grace_period (%s)", promdur.Format(p.Idle.For), promdur.Format(p.GracePeriod))}})
	}
	if p.MaxActionsPerHour < 1 {
		out = append(out, problem{key: "max_actions_per_hour", msg: fmt.Sprintf("%d: want at least 1 (dry run is the way to act on nothing)", p.MaxActionsPerHour)})
	}
	slices.SortStableFunc(out, func(a, b problem) int { return cmp.Compare(a.key, b.key) })
	return out
}
