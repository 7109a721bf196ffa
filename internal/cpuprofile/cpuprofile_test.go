package cpuprofile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The profile is written where the variable says, and nothing happens
// without it; an unwritable path is said on stderr, not fatal.
func TestStart(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == Env {
				return v
			}
			return ""
		}
	}
	var stderr bytes.Buffer
	Start(env(""), &stderr)()
	if stderr.Len() != 0 {
		t.Errorf("without %s: stderr %q, want nothing", Env, stderr.String())
	}

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	Start(env(path), &stderr)()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("profile %s: %v, %v; want a non-empty file", path, fi, err)
	}

	bad := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	Start(env(bad), &stderr)()
	if !strings.HasPrefix(stderr.String(), Env+": ") {
		t.Errorf("unwritable path: stderr %q, want it to start %q", stderr.String(), Env+": ")
	}
}
