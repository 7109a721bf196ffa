package reclaim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/leaderlease"
)

// Config is what `gpulens reclaim` runs with: its flags, parsed.
type Config struct {
	// Open opens a session over the window of length window ending now:
	// the policy's idle.for, since idle means idle for all of it.
	Open   func(ctx context.Context, window time.Duration) (*session.Session, error)
	Client kubernetes.Interface
	// PolicyFile is read over the defaults (--policy.file).
	PolicyFile string
	// Cluster is the cluster label value of this cluster's series in a
	// store of several (--cluster); empty for a store of one.
	Cluster             string
	Act                 bool          // --act
	Interval            time.Duration // --interval
	Alertmanagers       []string      // --alertmanager.url
	Resend              time.Duration // --alertmanager.resend-interval
	Listen              string        // --web.listen-address: /metrics
	LeaseNamespace      string        // --leader-election.namespace; empty: no election
	LeaseName, Identity string
	Logger              *slog.Logger
}

// RegisterFlags registers c's flags.
func (c *Config) RegisterFlags(f *pflag.FlagSet) {
	f.StringVar(&c.PolicyFile, "policy.file", "", "YAML policy over the defaults (idle.for, idle.max_avg_utilization, idle.max_p95_utilization, idle.min_coverage, grace_period, max_actions_per_hour)")
	f.BoolVar(&c.Act, "act", false, "Change workloads: scale to zero and suspend. Without it, reclaim only announces and logs what it would do")
	f.StringVar(&c.Cluster, "cluster", "", "This cluster's value of --cluster-label in a store of several clusters")
	f.DurationVar(&c.Interval, "interval", 15*time.Minute, "How often the analysis and the decisions run")
	f.StringArrayVar(&c.Alertmanagers, "alertmanager.url", nil, "Alertmanager to send pending reclaims to (repeatable)")
	f.DurationVar(&c.Resend, "alertmanager.resend-interval", time.Minute, "How often active alerts are sent again")
	f.StringVar(&c.Listen, "web.listen-address", ":9847", "Address serving /metrics and /healthz (empty: none)")
	f.StringVar(&c.LeaseNamespace, "leader-election.namespace", "", "Namespace of the coordination.k8s.io Lease that keeps one replica acting (empty: no election; run one replica)")
	f.StringVar(&c.LeaseName, "leader-election.name", "gpulens-reclaim", "Name of that Lease")
}

// ConfigError is a mistake in the flags: the CLI's usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Run runs the controller until ctx ends, SIGINT or SIGTERM, as the
// Lease's leader when LeaseNamespace is set.
func Run(ctx context.Context, c Config) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Interval <= 0 {
		return &ConfigError{fmt.Errorf("--interval: %s must be positive", c.Interval)}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Identity == "" {
		// The host alone is not unique: client-go takes its own identity
		// found in a Lease for its own (internal/leaderlease).
		id, err := leaderlease.Identity()
		if err != nil {
			return err
		}
		c.Identity = id
	}
	policy, err := LoadPolicy(c.PolicyFile)
	if err != nil {
		return &ConfigError{err}
	}
	m := NewMetrics()
	var notifier *notify.Notifier
	if len(c.Alertmanagers) > 0 {
		notifier, err = notify.New(notify.Options{URLs: c.Alertmanagers, ResendInterval: c.Resend, Metrics: m.Set, Logger: c.Logger.With("component", "notify")})
		if err != nil {
			return &ConfigError{fmt.Errorf("--alertmanager.url: %w", err)}
		}
		go notifier.Run(ctx)
	}
	if c.Listen != "" {
		l, err := net.Listen("tcp", c.Listen)
		if err != nil {
			return &ConfigError{fmt.Errorf("--web.listen-address: %w", err)}
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _ = m.Write(w) })
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
	}
	open := func(ctx context.Context) (*session.Session, error) { return c.Open(ctx, policy.Idle.For) }
	ctl := New(Options{Client: c.Client, Policy: policy, Analyze: FromSession(open, c.Cluster), Act: c.Act, Notifier: notifier,
		Metrics: m, Logger: c.Logger.With("component", "reclaim"), Identity: c.Identity})
	mode := "dry run: announcing and logging, changing no workload (--act to act)"
	if c.Act {
		mode = "acting"
	}
	c.Logger.Info("reclaim starting", "mode", mode, "idle_for", policy.Idle.For, "grace_period", policy.GracePeriod,
		"max_actions_per_hour", policy.MaxActionsPerHour, "interval", c.Interval)
	if c.LeaseNamespace == "" {
		ctl.Run(ctx, c.Interval)
		return nil
	}
	// One leader acts; a replica that loses the Lease stops its cycle
	// and campaigns again (internal/leaderlease releases the Lease only
	// after the cycle has returned, so two never act at once).
	return leaderlease.Run(ctx, leaderlease.Config{Client: c.Client, Namespace: c.LeaseNamespace, Name: c.LeaseName,
		Identity: c.Identity, Logger: c.Logger}, func(ctx context.Context) { ctl.Run(ctx, c.Interval) })
}

// OneContext is the kubeconfig context reclaim acts through, of the
// --context values given: its writes go to one API server, so one
// reclaimer runs per cluster and several contexts are an error. A
// CONTEXT=CLUSTER value names the cluster after the "=", not the context.
func OneContext(contexts []string, all bool) (string, error) {
	if len(contexts) > 1 || all {
		return "", &ConfigError{errors.New("reclaim acts on one cluster: give at most one --context (run one reclaimer per cluster)")}
	}
	if len(contexts) == 0 {
		return "", nil
	}
	ctx, _, _ := strings.Cut(contexts[0], "=")
	return ctx, nil
}
