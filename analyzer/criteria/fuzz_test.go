package criteria

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseConfig proves a findings config never panics the parser, that
// whatever it accepts passes validation (so a detector never sees a ratio
// above 1 or no minimum sample count), and that a refusal names the file.
func FuzzParseConfig(f *testing.F) {
	f.Add(defaultConfig)
	files, _ := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("idle: {max_avg_utilization: .nan}\n"))
	f.Add([]byte("oom_risk: {warning_ratio: 0.9, critical_ratio: 0.8}\n"))
	f.Add([]byte("recommend: [1, 2]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := DefaultConfig()
		err := parseConfig(&c, data, "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			var fe *FileError
			if errors.As(err, &fe) && fe.Line < 0 {
				t.Fatalf("error %q has a negative line", err)
			}
			return
		}
		if probs := c.problems(); len(probs) > 0 {
			t.Fatalf("accepted a config with problems %v", probs)
		}
	})
}
