// Package testenv lets tests use real external programs (promtool,
// prometheus, alertmanager, victoria-metrics, chromium): locally a missing
// program skips the test, in CI (CI=true) it fails it, so CI can never pass
// by skipping the end-to-end tests.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI.
func InCI() bool { return os.Getenv("CI") == "true" }

// LookPath returns the path of a program the test needs.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, name+" is not installed (Debian package installed by .ci/run)")
	}
	return p
}

// Env returns an environment variable that .ci/run sets, such as
// GPULENS_TEST_PROMETHEUS_URL.
func Env(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		missing(t, name+" is not set (scripts/test-servers.sh start sets it)")
	}
	return v
}

func missing(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true: %s", why)
	}
	t.Skipf("skipping: %s", why)
}
