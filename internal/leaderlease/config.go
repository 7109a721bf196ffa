package leaderlease

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
)

// Config names the Lease and the candidate. Zero durations take the
// defaults of Kubernetes' own controllers (kube-controller-manager's
// --leader-elect-lease-duration, -renew-deadline and -retry-period).
type Config struct {
	// Client reads and writes the Lease: get, create and update on
	// coordination.k8s.io leases in Namespace.
	Client kubernetes.Interface
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// Identity is this candidate's, written as the Lease's holderIdentity:
	// unique among the candidates, else two could both believe they hold
	// it. Identity() makes one.
	Identity string
	// LeaseDuration is how long the others wait, after they last saw the
	// Lease change, before they take it over. Whole seconds: the Lease
	// stores it as leaseDurationSeconds.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// stops acting. Shorter than LeaseDuration: the difference is the time
	// the leader's func has to stop before another can take over.
	RenewDeadline time.Duration
	// RetryPeriod is the interval between tries to acquire or renew.
	RetryPeriod time.Duration
	// Logger receives the transitions (slog.Default() when nil), and
	// client-go's own leader-election log lines.
	Logger *slog.Logger
}

// Kubernetes' defaults (k8s.io/component-base/config/v1alpha1, defaults.go:
// RecommendedDefaultLeaderElectionConfiguration).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// withDefaults fills in the zero durations and the logger.
func (c Config) withDefaults() Config {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// validate names every field that is wrong, so that one run of a
// misconfigured binary shows all of them. It checks what client-go's
// NewLeaderElector would refuse, with the field's name, and what it
// accepts but gets wrong: a LeaseDuration that is not whole seconds is
// truncated when written, and under a second reads as no lease at all.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("leaderlease: "+format, a...)) }
	if c.Client == nil {
		bad("Config.Client is nil")
	}
	if c.Namespace == "" {
		bad("Config.Namespace is empty")
	} else if msgs := validation.IsDNS1123Label(c.Namespace); len(msgs) > 0 {
		bad("Config.Namespace %q: %s", c.Namespace, strings.Join(msgs, "; "))
	}
	if c.Name == "" {
		bad("Config.Name is empty")
	} else if msgs := validation.IsDNS1123Subdomain(c.Name); len(msgs) > 0 {
		bad("Config.Name %q: %s", c.Name, strings.Join(msgs, "; "))
	}
	if strings.TrimSpace(c.Identity) == "" {
		bad("Config.Identity is empty: each candidate needs its own (leaderlease.Identity())")
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"LeaseDuration", c.LeaseDuration}, {"RenewDeadline", c.RenewDeadline}, {"RetryPeriod", c.RetryPeriod}} {
		if d.v < 0 {
			bad("Config.%s is negative (%s)", d.field, d.v)
		}
	}
	if c.LeaseDuration > 0 && (c.LeaseDuration < time.Second || c.LeaseDuration%time.Second != 0) {
		bad("Config.LeaseDuration %s is not a whole number of seconds (the Lease stores leaseDurationSeconds)", c.LeaseDuration)
	}
	if c.LeaseDuration > 0 && c.RenewDeadline >= c.LeaseDuration {
		bad("Config.RenewDeadline %s must be shorter than Config.LeaseDuration %s: a leader must give up before the others may take over", c.RenewDeadline, c.LeaseDuration)
	}
	if c.RetryPeriod > 0 && float64(c.RenewDeadline) <= leaderelection.JitterFactor*float64(c.RetryPeriod) {
		bad("Config.RenewDeadline %s must be longer than %.1f × Config.RetryPeriod %s (client-go's JitterFactor)", c.RenewDeadline, leaderelection.JitterFactor, c.RetryPeriod)
	}
	return errors.Join(errs...)
}

// Identity is this process's candidate identity: the host's name (a pod's
// name) and a random suffix, as kube-controller-manager makes its own
// (cmd/kube-controller-manager/app/controllermanager.go: hostname + "_" +
// a UUID). The hostname alone is not enough: a candidate that reads its
// own identity in a valid Lease takes it as its own (client-go's
// IsLeader), so two processes of one host would both act.
func Identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leaderlease: identity: %w", err)
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("leaderlease: identity: %w", err)
	}
	return host + "_" + hex.EncodeToString(b), nil
}
