package serve

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// serve's own credentials, the Alertmanagers' basic auth password and the
// push URL's bearer token, are read from a file or the environment, never
// from a flag: a flag's value is in /proc/PID/cmdline and the shell's
// history, a file's or the environment's is not.
const (
	EnvAlertmanagerPassword = "GPULENS_ALERTMANAGER_PASSWORD"
	EnvPushToken            = "GPULENS_PUSH_TOKEN"
)

// resolveSecrets reads the password and the token the Config names into
// Alertmanagers and PushToken, as *ConfigError naming the flag.
func (c *Config) resolveSecrets() error {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	urls, err := c.alertmanagerURLs(getenv)
	if err != nil {
		return err
	}
	c.Alertmanagers = urls
	tok, err := secret("push.bearer-token-file", c.PushTokenFile, EnvPushToken, getenv)
	if err != nil {
		return err
	}
	if tok != "" {
		c.PushToken = tok
	}
	return nil
}

// secret is the content of file, else the environment's variable env.
func secret(flag, file, env string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(env)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &ConfigError{fmt.Errorf("--%s: %w", flag, err)}
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", &ConfigError{fmt.Errorf("--%s: %s is empty", flag, file)}
	}
	return v, nil
}

// alertmanagerURLs sets the password from the file or the environment
// into each URL's user info (the notifier sends it as a header and never
// shows it), with AlertmanagerUser where the URL names no user. A URL
// with a password of its own keeps it.
func (c *Config) alertmanagerURLs(getenv func(string) string) ([]string, error) {
	pw, err := secret("alertmanager.basic-auth-password-file", c.AlertmanagerPasswordFile, EnvAlertmanagerPassword, getenv)
	if err != nil {
		return nil, err
	}
	if pw == "" {
		if c.AlertmanagerUser != "" {
			return nil, &ConfigError{errors.New("--alertmanager.basic-auth-user: no password: give --alertmanager.basic-auth-password-file or $" + EnvAlertmanagerPassword)}
		}
		return c.Alertmanagers, nil
	}
	out := make([]string, len(c.Alertmanagers))
	for i, raw := range c.Alertmanagers {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, &ConfigError{errors.New("--alertmanager.url: not an http(s) URL with a host")}
		}
		if _, has := u.User.Password(); !has {
			user := u.User.Username()
			if user == "" {
				user = c.AlertmanagerUser
			}
			if user == "" {
				return nil, &ConfigError{errors.New("--alertmanager.basic-auth-password-file: no user: give --alertmanager.basic-auth-user or user info in --alertmanager.url")}
			}
			u.User = url.UserPassword(user, pw)
		}
		out[i] = u.String()
	}
	return out, nil
}
