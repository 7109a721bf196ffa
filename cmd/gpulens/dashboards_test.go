package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDashboardsCommand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
		files  int
		schema string
	}{
		{"native", []string{"--schema", "native"}, exitOK, "", 5, "native"},
		{"dcgm", []string{"--schema", "dcgm-exporter"}, exitOK, "", 5, "dcgm-exporter"},
		{"default schema", nil, exitOK, "", 5, "native"},
		{"unknown schema", []string{"--schema", "dcgm"}, exitUsage, `--schema: "dcgm" is not one of native, dcgm-exporter`, 0, ""},
		// The cluster variable reads the store's cluster label; schema ""
		// marks files that differ from the committed ones.
		{"cluster label", []string{"--cluster-label", "k8s_cluster"}, exitOK, "", 5, ""},
		{"cluster label not a label", []string{"--cluster-label", "9bad"}, exitUsage, `--cluster-label: "9bad" is not a label name`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			code := execute(append([]string{"dashboards", "--output-dir", dir}, tc.args...), &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tc.code, tc.stderr)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != tc.files || strings.Count(stdout.String(), "\n") != tc.files {
				t.Errorf("%d files, stdout %q; want %d", len(entries), stdout.String(), tc.files)
			}
			if tc.schema == "" {
				for _, e := range entries {
					got, _ := os.ReadFile(filepath.Join(dir, e.Name()))
					if e.Name() != "findings.json" && (!bytes.Contains(got, []byte(`k8s_cluster=~\"$cluster\"`)) || bytes.Contains(got, []byte(`{cluster=~`))) {
						t.Errorf("%s: the panels do not select k8s_cluster", e.Name())
					}
				}
				return
			}
			// What it writes is what the repository commits.
			for _, e := range entries {
				got, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				want, err := os.ReadFile(filepath.Join("../../dashboards", tc.schema, e.Name()))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s differs from dashboards/%s/%s (%v)", e.Name(), tc.schema, e.Name(), err)
				}
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"dashboards"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--output-dir is required") {
		t.Errorf("without --output-dir: exit %d, %q", code, stderr.String())
	}
}

// TestDashboardsDeprecatedOut: --out, the flag's name before every
// command's directory flag was --output-dir, still writes the dashboards,
// with a deprecation warning on stderr (kubectl's rule for a renamed flag).
func TestDashboardsDeprecatedOut(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"dashboards", "--out", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 || !strings.Contains(stderr.String(), "deprecated, use --output-dir") {
		t.Errorf("%d files, stderr %q; want 5 files and the deprecation", len(entries), stderr.String())
	}
}
