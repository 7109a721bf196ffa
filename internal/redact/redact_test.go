package redact

import (
	"encoding/base64"
	"testing"
)

func TestApply(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("user:pa55w0rd"))
	for _, tc := range []struct {
		name string
		s    *Secrets
		msg  string
		want string
	}{
		{"URL password, plain and as a Basic header", Of([]string{"http://user:pa55w0rd@prom:9090"}),
			`Get "http://user:pa55w0rd@prom:9090/api/v1/query": 401: Authorization: Basic ` + basic,
			`Get "http://user:<redacted>@prom:9090/api/v1/query": 401: Authorization: Basic <redacted>`},
		{"URL query, whole and by value", Of([]string{"http://vm:8428/api/v1/import?authKey=s3cr3tkey"}),
			`cannot push to "http://vm:8428/api/v1/import?authKey=s3cr3tkey": s3cr3tkey refused`,
			`cannot push to "http://vm:8428/api/v1/import?<redacted>": <redacted> refused`},
		{"escaped password", Of([]string{"http://u:p%40ss%2Fword@h/"}), `http://u:p%40ss%2Fword@h/ and p@ss/word`, `http://u:<redacted>@h/ and <redacted>`},
		{"a token from a file, with its newline", Of(nil, "tok-123456\n"), "Bearer tok-123456", "Bearer <redacted>"},
		{"short values are kept", Of(nil, "on"), "turned on", "turned on"},
		{"no secrets", &Secrets{}, "plain", "plain"},
		{"nil", nil, "plain", "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Apply(tc.msg); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	var s Secrets
	s.AddPath("https://hooks.slack.com/services/T0/B0/hooksecret")
	if got := s.Apply("no such hook /services/T0/B0/hooksecret"); got != "no such hook <redacted>" {
		t.Errorf("path: %s", got)
	}
}
