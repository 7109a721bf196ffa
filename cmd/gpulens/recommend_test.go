package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	demoTSDBOnce sync.Once
	demoTSDBDir  string
	demoTSDBErr  string
	// demoTSDBJSON is the report the demo printed as it wrote the TSDB.
	demoTSDBJSON []byte
)

// demoTSDB simulates six hours of the default fleet once for the tests of
// this file; the end is fixed so the figures are reproducible.
func demoTSDB(t *testing.T) string {
	t.Helper()
	demoTSDBOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpulens-recommend-")
		if err != nil {
			demoTSDBErr = err.Error()
			return
		}
		demoTSDBDir = filepath.Join(dir, "tsdb")
		var stdout, stderr bytes.Buffer
		if code := execute([]string{"demo", "--duration", "6h", "--end", "2026-01-05T14:00:00Z", "--step", "2m",
			"--data-dir", demoTSDBDir, "--format", "json"}, &stdout, &stderr); code != exitOK {
			demoTSDBErr = stderr.String()
		}
		demoTSDBJSON = stdout.Bytes()
	})
	if demoTSDBErr != "" {
		t.Fatal(demoTSDBErr)
	}
	return demoTSDBDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoTSDBDir != "" {
		os.RemoveAll(filepath.Dir(demoTSDBDir))
	}
	os.Exit(code)
}

func recommendArgs(dir string, extra ...string) []string {
	return append([]string{"recommend", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--no-kubernetes"}, extra...)
}

func TestRecommendJSON(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "--format", "json", "--all"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%.300s", err, stdout.String())
	}
	if len(out) == 0 {
		t.Fatal("no findings on the demo fleet")
	}
	kinds := map[string]bool{}
	for _, f := range out {
		for _, field := range []string{"kind", "severity", "evidence", "recommendation", "monthly_savings_usd", "confidence"} {
			if _, ok := f[field]; !ok {
				t.Errorf("finding %v lacks %q", f["kind"], field)
			}
		}
		kinds[f["kind"].(string)] = true
	}
	for _, k := range []string{"idle-allocation", "unallocated-capacity"} {
		if !kinds[k] {
			t.Errorf("the demo fleet yields no %s finding; kinds: %v", k, kinds)
		}
	}
	if !strings.Contains(stderr.String(), "skipped: untainted-gpu-node") {
		t.Errorf("without cluster access the skipped findings must be said: %s", stderr.String())
	}
}

// TestRecommendYAMLPatchesParse: without cluster access every workload is
// a bare pod, whose changes cannot be applied to it: the stream is the
// delete commands and the manifests' patches in comments, and any document
// is an object.
func TestRecommendYAMLPatchesParse(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "--format", "yaml"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	objectDocs(t, stdout.Bytes())
	for _, want := range []string{"# release: a bare pod has nothing to scale: kubectl -n research-notebooks delete pod ", "#   kind: Pod\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q:\n%s", want, stdout.String())
		}
	}
}

func TestRecommendBadFormat(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"recommend", "--data-dir", t.TempDir(), "--format", "xml"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr.String())
	}
}
