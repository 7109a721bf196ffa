package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
)

// A block whose meta.json is corrupt is named in an error with exit 5;
// Prometheus's tsdb skips it silently, and the report then said "no GPU
// series" about a store that has them.
func TestCorruptBlockMetaIsNamed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(path string) error
		want    string
	}{
		{"truncated", func(p string) error { return os.WriteFile(p, []byte(`{"ulid": "01`), 0o644) }, "is not a block's meta.json"},
		{"wrong version", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, bytes.Replace(b, []byte(`"version": 1`), []byte(`"version": 7`), 1), 0o644)
		}, "has version 7"},
		{"missing", os.Remove, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tsdb")
			if err := os.CopyFS(dir, os.DirFS(demoTSDB(t))); err != nil {
				t.Fatal(err)
			}
			block := firstBlock(t, dir)
			meta := filepath.Join(dir, block, "meta.json")
			if err := tc.corrupt(meta); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			code := execute([]string{"report", "--data-dir", dir, "--until", "2026-01-05T14:00:00Z", "--since", "6h", "--step", "2m", "--no-kubernetes"}, &bytes.Buffer{}, &stderr)
			if code != exitData {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitData, stderr.String())
			}
			for _, w := range []string{"--data-dir", "block " + block, tc.want} {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q: %s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "no GPU series") {
				t.Errorf("a corrupt block is reported as no data: %s", stderr.String())
			}
		})
	}
}

func firstBlock(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := ulid.ParseStrict(e.Name()); err == nil && e.IsDir() {
			return e.Name()
		}
	}
	t.Fatalf("%s holds no block", dir)
	return ""
}
