package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Secrets are read from a file (re-read where the library allows) or the
// environment, as Prometheus's own tools take them, and also as flags
// where they always were: a flag's value is in /proc/PID/cmdline and the
// shell's history, a file's or the environment's is not.
const (
	envBearerToken          = "GPULENS_BEARER_TOKEN"
	envBasicAuthUser        = "GPULENS_BASIC_AUTH_USER"
	envBasicAuthPassword    = "GPULENS_BASIC_AUTH_PASSWORD"
	envAlertmanagerPassword = "GPULENS_ALERTMANAGER_PASSWORD"
	envPushToken            = "GPULENS_PUSH_TOKEN"
)

// remoteSecretsFromEnv fills the source's credentials the flags left
// empty from the environment.
func (f *sourceFlags) remoteSecretsFromEnv(getenv func(string) string) {
	if f.Remote.BearerTokenFile == "" {
		f.Remote.BearerToken = strings.TrimSpace(getenv(envBearerToken))
	}
	if f.Remote.BasicAuthUser == "" {
		f.Remote.BasicAuthUser = getenv(envBasicAuthUser)
	}
	if f.Remote.BasicAuthPasswordFile == "" {
		f.Remote.BasicAuthPassword = strings.TrimSpace(getenv(envBasicAuthPassword))
	}
}

// serveSecrets are serve's own credentials: the Alertmanagers' basic auth
// and the push URL's bearer token.
type serveSecrets struct {
	amUser, amPasswordFile string
	pushTokenFile          string
}

func (s *serveSecrets) register(f *pflag.FlagSet) {
	f.StringVar(&s.amUser, "alertmanager.basic-auth-user", "", "Basic auth user for every --alertmanager.url without user info of its own")
	f.StringVar(&s.amPasswordFile, "alertmanager.basic-auth-password-file", "", "File holding the Alertmanagers' basic auth password (default: $"+envAlertmanagerPassword+" if set), for a user of --alertmanager.basic-auth-user or a --alertmanager.url's user info")
	f.StringVar(&s.pushTokenFile, "push.bearer-token-file", "", "File holding a bearer token for --push.url (default: $"+envPushToken+" if set)")
}

// secret is the content of file, else the environment's variable env.
func secret(flag, file, env string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(env)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usageError{fmt.Errorf("--%s: %w", flag, err)}
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", usageError{fmt.Errorf("--%s: %s is empty", flag, file)}
	}
	return v, nil
}

// alertmanagerURLs sets the password from the file or the environment
// into each URL's user info (the notifier sends it as a header and never
// shows it), with --alertmanager.basic-auth-user where the URL names no
// user. A URL with a password of its own keeps it.
func (s serveSecrets) alertmanagerURLs(urls []string, getenv func(string) string) ([]string, error) {
	pw, err := secret("alertmanager.basic-auth-password-file", s.amPasswordFile, envAlertmanagerPassword, getenv)
	if err != nil {
		return nil, err
	}
	if pw == "" {
		if s.amUser != "" {
			return nil, usageError{errors.New("--alertmanager.basic-auth-user: no password: give --alertmanager.basic-auth-password-file or $" + envAlertmanagerPassword)}
		}
		return urls, nil
	}
	out := make([]string, len(urls))
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, usageError{errors.New("--alertmanager.url: not an http(s) URL with a host")}
		}
		if _, has := u.User.Password(); !has {
			user := u.User.Username()
			if user == "" {
				user = s.amUser
			}
			if user == "" {
				return nil, usageError{errors.New("--alertmanager.basic-auth-password-file: no user: give --alertmanager.basic-auth-user or user info in --alertmanager.url")}
			}
			u.User = url.UserPassword(user, pw)
		}
		out[i] = u.String()
	}
	return out, nil
}

// pushToken is the push's bearer token, "" for none.
func (s serveSecrets) pushToken(getenv func(string) string) (string, error) {
	return secret("push.bearer-token-file", s.pushTokenFile, envPushToken, getenv)
}
