package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file given to a flag that wants a scenario, a findings config, a price
// table or a field map is quoted in errors only when it is one: a file of
// another kind (a shadow file, a credentials file) is refused without a
// line of it, and a file of the kind still has its offending key named.
func TestForeignFilesAreNotEchoed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shadow := write("shadow", "root:$6$abcdefgh$SECRETHASH1234567890:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
	creds := write("creds.yaml", "password: SECRETHASH1234567890\napi_key: SECRETHASH1234567890\n")
	list := write("list.yaml", "- SECRETHASH1234567890\n")
	data := filepath.Join(dir, "tsdb") // refused after the files are read
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"scenario: shadow", []string{"demo", "--scenario", shadow}, "not a scenario"},
		{"scenario: credentials", []string{"demo", "--scenario", creds}, "not a scenario"},
		{"scenario: a list", []string{"demo", "--scenario", list}, "not a scenario"},
		{"config: shadow", []string{"report", "--data-dir", data, "--config", shadow}, "not a findings config"},
		{"config: credentials", []string{"report", "--data-dir", data, "--config", creds}, "not a findings config"},
		{"prices: shadow", []string{"report", "--data-dir", data, "--prices", shadow}, "not a price table"},
		{"prices: credentials", []string{"report", "--data-dir", data, "--prices", creds}, "not a price table"},
		{"field map: shadow", []string{"report", "--data-dir", data, "--dcgm-fields", shadow}, "not a dcgm-exporter field map"},
		{"field map: credentials", []string{"report", "--data-dir", data, "--dcgm-fields", creds}, "not a dcgm-exporter field map"},
		{"a scenario's own typo is named", []string{"demo", "--scenario", write("sc.yaml", "seed: 1\nnodez: []\n")}, "nodez"},
		{"a price table's own typo is named", []string{"report", "--data-dir", data, "--prices", write("p.yaml", "currency: USD\npricez: {}\n")}, "pricez"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := execute(tc.args, &bytes.Buffer{}, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q: %s", tc.want, stderr.String())
			}
			for _, s := range []string{"SECRETHASH", "root:", "daemon:"} {
				if strings.Contains(stderr.String(), s) {
					t.Errorf("stderr quotes the file (%q): %s", s, stderr.String())
				}
			}
		})
	}
}
