package session

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/source"
)

// TestRemoteSecretsFromEnv: the environment fills what no flag gave, and a
// file flag wins over its variable (the file is read later, by the source).
func TestRemoteSecretsFromEnv(t *testing.T) {
	env := map[string]string{EnvBearerToken: " tok\n", EnvBasicAuthUser: "alice", EnvBasicAuthPassword: "pw\n"}
	for _, c := range []struct {
		name  string
		flags source.RemoteOptions
		env   map[string]string
		want  source.RemoteOptions
	}{
		{name: "no environment"},
		{name: "environment", env: env, want: source.RemoteOptions{BearerToken: "tok", BasicAuthUser: "alice", BasicAuthPassword: "pw"}},
		{name: "files win", env: env,
			flags: source.RemoteOptions{BearerTokenFile: "/t", BasicAuthUser: "bob", BasicAuthPasswordFile: "/p"},
			want:  source.RemoteOptions{BearerTokenFile: "/t", BasicAuthUser: "bob", BasicAuthPasswordFile: "/p"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Flags{Remote: c.flags}
			f.RemoteSecretsFromEnv(func(k string) string { return c.env[k] })
			if f.Remote.BearerToken != c.want.BearerToken || f.Remote.BasicAuthUser != c.want.BasicAuthUser ||
				f.Remote.BasicAuthPassword != c.want.BasicAuthPassword {
				t.Errorf("got token %q user %q password %q, want %q %q %q", f.Remote.BearerToken, f.Remote.BasicAuthUser,
					f.Remote.BasicAuthPassword, c.want.BearerToken, c.want.BasicAuthUser, c.want.BasicAuthPassword)
			}
		})
	}
}
