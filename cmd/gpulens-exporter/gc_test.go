package main

import (
	"strings"
	"testing"
)

// TestGCTarget: the running exporter reports its garbage collector's
// target as Go's collector does (go_gc_gogc_percent): defaultGOGC when the
// environment leaves GOGC unset, the environment's value otherwise.
func TestGCTarget(t *testing.T) {
	for _, tc := range []struct {
		env, want string
	}{
		{"", "go_gc_gogc_percent 50\n"},
		{"100", "go_gc_gogc_percent 100\n"},
	} {
		t.Run("GOGC="+tc.env, func(t *testing.T) {
			t.Setenv("GOGC", tc.env)
			p := startExporter(t, nil, "http", simArgs...)
			waitHealthy(t, p)
			_, body := get(t, "http://"+p.addr+"/metrics")
			if !strings.Contains(body, "\n"+tc.want) {
				i := max(strings.Index(body, "\ngo_gc_gogc_percent "), 0)
				t.Errorf("want %q in /metrics, got %q", tc.want, body[i:min(i+30, len(body))])
			}
		})
	}
}
