package serve

import "testing"

func TestRedactURLSecrets(t *testing.T) {
	for _, tt := range []struct{ name, raw, msg, want string }{
		{"query token, as given and re-encoded", "http://vm:8428/api/v1/import?authKey=t0k%2Fen-1",
			`cannot push to "http://vm:8428/api/v1/import?authKey=t0k%2Fen-1": Post "http://vm:8428/api/v1/import?authKey=t0k/en-1": refused`,
			`cannot push to "http://vm:8428/api/v1/import?<redacted>": Post "http://vm:8428/api/v1/import?authKey=<redacted>": refused`},
		{"user info password", "http://u:pa55word@vm:8428/", `push to "http://u:pa55word@vm:8428/" failed`, `push to "http://u:<redacted>@vm:8428/" failed`},
		{"short values are left", "http://vm/?a=1", `"http://vm/?a=1" failed`, `"http://vm/?a=1" failed`},
		{"nothing secret", "http://vm:8428/api/v1/import", "push to http://vm:8428/api/v1/import failed", "push to http://vm:8428/api/v1/import failed"},
	} {
		if got := redactURLSecrets(tt.msg, tt.raw); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
