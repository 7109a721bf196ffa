package serve

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveSecrets: the password and the token come from their file,
// else their variable; each mistake is a *ConfigError naming its flag.
func TestResolveSecrets(t *testing.T) {
	dir := t.TempDir()
	pwFile, tokFile, empty := filepath.Join(dir, "pw"), filepath.Join(dir, "tok"), filepath.Join(dir, "empty")
	for p, v := range map[string]string{pwFile: "s3cret\n", tokFile: " t0k\n", empty: "\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	am := []string{"http://am-0:9093", "http://bob@am-1:9093", "http://carol:own@am-2:9093"}
	for _, c := range []struct {
		name      string
		cfg       Config
		env       map[string]string
		wantURLs  []string
		wantToken string
		err       string
	}{
		{name: "none", cfg: Config{Alertmanagers: am}, wantURLs: am},
		{name: "password file and user", cfg: Config{Alertmanagers: am, AlertmanagerUser: "alice", AlertmanagerPasswordFile: pwFile},
			wantURLs: []string{"http://alice:s3cret@am-0:9093", "http://bob:s3cret@am-1:9093", "http://carol:own@am-2:9093"}},
		{name: "password from the environment", cfg: Config{Alertmanagers: am[1:2]}, env: map[string]string{EnvAlertmanagerPassword: "envpw"},
			wantURLs: []string{"http://bob:envpw@am-1:9093"}},
		{name: "user without password", cfg: Config{Alertmanagers: am, AlertmanagerUser: "alice"},
			err: "--alertmanager.basic-auth-user: no password: give --alertmanager.basic-auth-password-file or $GPULENS_ALERTMANAGER_PASSWORD"},
		{name: "password without user", cfg: Config{Alertmanagers: am[:1], AlertmanagerPasswordFile: pwFile},
			err: "--alertmanager.basic-auth-password-file: no user"},
		{name: "missing password file", cfg: Config{AlertmanagerPasswordFile: filepath.Join(dir, "nope")},
			err: "--alertmanager.basic-auth-password-file: open "},
		{name: "empty token file", cfg: Config{PushTokenFile: empty}, err: "--push.bearer-token-file: " + empty + " is empty"},
		{name: "token file wins", cfg: Config{PushTokenFile: tokFile}, env: map[string]string{EnvPushToken: "env"}, wantToken: "t0k"},
		{name: "token from the environment", env: map[string]string{EnvPushToken: " env\n"}, wantToken: "env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Getenv = func(k string) string { return c.env[k] }
			err := cfg.resolveSecrets()
			if c.err != "" {
				var ce *ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want a *ConfigError containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Alertmanagers, c.wantURLs) || cfg.PushToken != c.wantToken {
				t.Errorf("urls %q token %q, want %q %q", cfg.Alertmanagers, cfg.PushToken, c.wantURLs, c.wantToken)
			}
		})
	}
}
