package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestVersion: `gpulens version` and `gpulens --version` print the same
// text, and the version is not empty for a test binary built without the
// Makefile's -ldflags (internal/buildinfo says "devel"). At 36bc8ff the
// version was empty and --version an unknown flag (exit 2).
func TestVersion(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		if code := execute(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		first, _, _ := strings.Cut(stdout.String(), "\n")
		if strings.HasPrefix(first, "gpulens, version  ") || !strings.HasPrefix(first, "gpulens, version ") {
			t.Errorf("%v: %q names no version", args, first)
		}
		outs = append(outs, stdout.String())
	}
	if outs[0] != outs[1] {
		t.Errorf("version and --version differ:\n%s\n%s", outs[0], outs[1])
	}
}
