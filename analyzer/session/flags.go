package session

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/alecthomas/units"
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/source"
)

// Flags are the CLI's flags of every command that reads metrics, as given:
// where the metrics are, how to reach them, which window, which schema,
// and the cluster and configuration to join them with. Config turns them
// into a session's Config.
type Flags struct {
	MaxSamples    int
	PrometheusURL string
	DataDir       string
	Remote        source.RemoteOptions
	Headers       []string
	// MaxReplySize is --query.max-reply-size as given (64MiB, 1GiB; "0":
	// no limit), Remote.MaxReplyBytes once parsed.
	MaxReplySize string

	Schema string
	Since  string
	Until  string
	// MaxWindow bounds the window read, once started at the store's
	// first sample ("0": no bound).
	MaxWindow string
	Step      time.Duration

	TeamLabel    string
	Kubeconfig   string
	Contexts     []string
	AllContexts  bool
	NoKubernetes bool
	ClusterLabel string

	ConfigFile string
	PricesFile string
	DCGMFields string
	// CostBasis is gpulens report's --cost-basis; other commands leave it
	// empty.
	CostBasis string
	// JudgeNow ends the window at now even where the store stopped
	// earlier (Config.EndAtLastSample false): serve and reclaim judge the
	// fleet as it is now, and a store that stopped is stale data
	// (fleet.Result.Stale), not a window moved to its end.
	JudgeNow bool
}

// FlagError is a malformed flag; its message names the flag.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

func flagErr(format string, args ...any) error { return &FlagError{fmt.Errorf(format, args...)} }

// ParseWindow reads a window length the way PromQL writes durations
// (30m, 36h, 7d, 2w), which is what people type after using Prometheus.
func ParseWindow(s string) (time.Duration, error) {
	d, err := model.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 36h, 7d or 2w", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return time.Duration(d), nil
}

// Window parses Since and Until; malformed values are *FlagError.
func (f *Flags) Window(now time.Time) (start, end time.Time, err error) {
	length, err := ParseWindow(f.Since)
	if err != nil {
		return start, end, flagErr("--since: %w", err)
	}
	end = now.UTC().Truncate(time.Minute)
	if f.Until != "" {
		if end, err = time.Parse(time.RFC3339, f.Until); err != nil {
			return start, end, flagErr("--until: %q is not an RFC 3339 time such as 2026-01-05T14:00:00Z", f.Until)
		}
	}
	return end.Add(-length), end, nil
}

// Config maps the flags to a session's config over the window ending at
// now (or Until); malformed flags are *FlagError.
func (f *Flags) Config(now time.Time, logger *slog.Logger, obs Observer) (Config, error) {
	start, end, err := f.Window(now)
	if err != nil {
		return Config{}, err
	}
	if f.Step < time.Second || f.Step%time.Second != 0 {
		return Config{}, flagErr("--step: %s is not a positive whole number of seconds", f.Step)
	}
	var maxWindow time.Duration
	if f.MaxWindow != "" && f.MaxWindow != "0" {
		if maxWindow, err = ParseWindow(f.MaxWindow); err != nil {
			return Config{}, flagErr("--max-window: %w", err)
		}
	}
	cfg := Config{
		MaxWindow:     maxWindow,
		PrometheusURL: f.PrometheusURL, DataDir: f.DataDir, Remote: f.Remote, MaxSamples: f.MaxSamples,
		Schema: f.Schema, Start: start, End: end, EndAtLastSample: f.Until == "" && !f.JudgeNow, Step: f.Step, ConfigFile: f.ConfigFile, PricesFile: f.PricesFile, DCGMFieldsFile: f.DCGMFields,
		Kubernetes: kube.Options{Kubeconfig: f.Kubeconfig, TeamLabel: f.TeamLabel},
		Contexts:   f.Contexts, AllContexts: f.AllContexts, ClusterLabel: f.ClusterLabel,
		Logger: logger, Observer: obs,
	}
	switch b := ledger.Basis(f.CostBasis); b {
	case "", ledger.Allocation, ledger.Usage:
		cfg.CostBasis = b
	default:
		return cfg, flagErr("--cost-basis: %q is not allocation or usage", f.CostBasis)
	}
	if f.ClusterLabel != "" && !model.LabelName(f.ClusterLabel).IsValidLegacy() {
		return cfg, flagErr("--cluster-label: %q is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", f.ClusterLabel)
	}
	if f.NoKubernetes {
		if len(f.Contexts) > 0 || f.AllContexts {
			return cfg, &FlagError{errors.New("--no-kubernetes and --context or --all-contexts are exclusive: give one")}
		}
		cfg.NoKubernetes = "--no-kubernetes was given"
	}
	// Empty is the zero Flags' no limit; the CLI's default is a size.
	if f.MaxReplySize != "" {
		// Prometheus's own sizes, as its body_size_limit reads them
		// (config.ScrapeConfig.BodySizeLimit is a units.Base2Bytes): KB
		// and KiB are both 1024, a bare number has no unit and is refused.
		n, err := units.ParseBase2Bytes(f.MaxReplySize)
		switch {
		case err != nil:
			return cfg, flagErr("--%s: %q is not a size such as 64MiB, 512MB or 1GiB, or 0 for no limit (%v)", InputMaxReply, f.MaxReplySize, err)
		case n < 0:
			return cfg, flagErr("--%s: %q must not be negative (0: no limit)", InputMaxReply, f.MaxReplySize)
		}
		cfg.Remote.MaxReplyBytes = int64(n)
	}
	cfg.Remote.Headers = map[string]string{}
	for _, h := range f.Headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return cfg, flagErr("--header: %q is not K=V", h)
		}
		cfg.Remote.Headers[strings.TrimSpace(k)] = v
	}
	return cfg, nil
}
