package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestQuotaCommand: without cluster access no quota is known, which the
// command says with exit 6 and no output, rather than print "no patches"
// as if every quota fitted; a bad format is a usage error.
func TestQuotaCommand(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	code := execute([]string{"quota", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--step", "2m",
		"--no-kubernetes", "-o", "yaml"}, &stdout, &stderr)
	if code != exitNoCluster || stdout.Len() != 0 || !strings.Contains(stderr.String(), "no cluster access: the quotas are not known (--no-kubernetes") {
		t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q", code, exitNoCluster, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := execute([]string{"quota", "--data-dir", dir, "-o", "pdf"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-o:") {
		t.Errorf("bad format: exit %d, %q", code, stderr.String())
	}
}
