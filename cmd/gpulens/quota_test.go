package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestQuotaCommand: without cluster access there are no quotas to advise,
// which the command says instead of failing; a bad format is a usage error.
func TestQuotaCommand(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	code := execute([]string{"quota", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--step", "2m",
		"--no-kubernetes", "--format", "json"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var out struct {
		Quotas []json.RawMessage `json:"quotas"`
		Notes  []string          `json:"notes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(out.Quotas) != 0 || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "no cluster access") {
		t.Errorf("quotas %d, notes %q; want none and the reason", len(out.Quotas), out.Notes)
	}
	stderr.Reset()
	if code := execute([]string{"quota", "--data-dir", dir, "--format", "pdf"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--format") {
		t.Errorf("bad format: exit %d, %q", code, stderr.String())
	}
}
