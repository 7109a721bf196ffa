package session

import "strings"

// Secrets are read from a file (re-read where the library allows) or the
// environment, as Prometheus's own tools take them, and also as flags
// where they always were: a flag's value is in /proc/PID/cmdline and the
// shell's history, a file's or the environment's is not.
const (
	EnvBearerToken       = "GPULENS_BEARER_TOKEN"
	EnvBasicAuthUser     = "GPULENS_BASIC_AUTH_USER"
	EnvBasicAuthPassword = "GPULENS_BASIC_AUTH_PASSWORD"
)

// RemoteSecretsFromEnv fills the source's credentials the flags left
// empty from the environment: a file flag, when given, wins.
func (f *Flags) RemoteSecretsFromEnv(getenv func(string) string) {
	if f.Remote.BearerTokenFile == "" {
		f.Remote.BearerToken = strings.TrimSpace(getenv(EnvBearerToken))
	}
	if f.Remote.BasicAuthUser == "" {
		f.Remote.BasicAuthUser = getenv(EnvBasicAuthUser)
	}
	if f.Remote.BasicAuthPasswordFile == "" {
		f.Remote.BasicAuthPassword = strings.TrimSpace(getenv(EnvBasicAuthPassword))
	}
}
