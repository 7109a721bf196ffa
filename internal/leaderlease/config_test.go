package leaderlease

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

func valid() Config {
	return Config{Client: fake.NewClientset(), Namespace: "gpulens", Name: "gpulens-reclaim", Identity: "gpulens-analyzer-7d9f-abcde"}
}

// TestValidate: each wrong field is named, all of them at once, and the
// defaults fill what is left zero. The bounds are client-go's
// NewLeaderElector's (RenewDeadline < LeaseDuration, RenewDeadline >
// 1.2 × RetryPeriod) and the Lease's leaseDurationSeconds.
func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Config)
		want []string // substrings, one per error; none: valid
	}{
		{name: "defaults", edit: func(*Config) {}},
		{name: "no client", edit: func(c *Config) { c.Client = nil }, want: []string{"Config.Client is nil"}},
		{name: "no names", edit: func(c *Config) { c.Namespace, c.Name, c.Identity = "", "", " " },
			want: []string{"Config.Namespace is empty", "Config.Name is empty", "Config.Identity is empty"}},
		{name: "bad names", edit: func(c *Config) { c.Namespace, c.Name = "GPU_lens", "Reclaim" },
			want: []string{`Config.Namespace "GPU_lens"`, `Config.Name "Reclaim"`}},
		{name: "fractional lease", edit: func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 1500*time.Millisecond, time.Second, 100*time.Millisecond
		},
			want: []string{"Config.LeaseDuration 1.5s is not a whole number of seconds"}},
		{name: "sub-second lease", edit: func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 500*time.Millisecond, 400*time.Millisecond, 100*time.Millisecond
		},
			want: []string{"Config.LeaseDuration 500ms is not a whole number of seconds"}},
		// 10s default renew deadline against a 5s lease.
		{name: "renew past lease", edit: func(c *Config) { c.LeaseDuration = 5 * time.Second },
			want: []string{"Config.RenewDeadline 10s must be shorter than Config.LeaseDuration 5s"}},
		// 1.2 × 2s = 2.4s ≥ 2.4s: refused, as client-go does (<=).
		{name: "retry too close", edit: func(c *Config) { c.RenewDeadline = 2400 * time.Millisecond },
			want: []string{"Config.RenewDeadline 2.4s must be longer than 1.2 × Config.RetryPeriod 2s"}},
		{name: "negative", edit: func(c *Config) { c.RetryPeriod = -time.Second },
			want: []string{"Config.RetryPeriod is negative (-1s)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.edit(&c)
			err := c.withDefaults().validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validate passed, want %q", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("%d errors, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c := valid().withDefaults()
	if c.LeaseDuration != 15*time.Second || c.RenewDeadline != 10*time.Second || c.RetryPeriod != 2*time.Second || c.Logger == nil {
		t.Errorf("defaults: %+v", c)
	}
}

// TestRunRefusesBadConfig: Run returns the config's error without calling
// fn or touching the API.
func TestRunRefusesBadConfig(t *testing.T) {
	c := valid()
	c.Identity = ""
	err := Run(context.Background(), c, func(context.Context) { t.Error("fn ran") })
	if err == nil || !strings.Contains(err.Error(), "Config.Identity") {
		t.Fatalf("Run: %v, want the Identity's error", err)
	}
}

// TestIdentity: the host's name, then a suffix that differs between two
// processes of one host.
func TestIdentity(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	a, errA := Identity()
	b, errB := Identity()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !strings.HasPrefix(a, host+"_") || len(a) != len(host)+1+8 || a == b {
		t.Errorf("identities %q and %q, want %s_ and 8 hex digits, different", a, b, host)
	}
}
