package source

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals/dcgm"
)

// TestDetectMixedCounters: Detect reads a store as of mixed counters
// files only where some whole GPU reports another tenant field and not
// FB_USED (the fixtures of analyzer/findings/testdata/counters, an hour
// of one-minute scrapes): the default counters file's store and the
// trimmed one's are read as before, the mixed one's from the three names
// it holds.
func TestDetectMixedCounters(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Hour)
	for _, tt := range []struct {
		file        string
		tenantField string
		mixed       string
	}{
		{"default-held.prom", "", ""},
		{"gr-engine-only.prom", dcgm.GREngineActive, ""},
		{"mixed-trimmed.prom", "", dcgm.FBUsed + "|" + dcgm.GPUUtil + "|" + dcgm.GREngineActive},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("../findings/testdata/counters/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			db, err := OpenEmbedded(t.TempDir(), EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			app := db.Appender(context.Background())
			for ts := start; !ts.After(end); ts = ts.Add(time.Minute) {
				if _, err := AppendExposition(app, data, "", ts); err != nil {
					t.Fatal(err)
				}
			}
			if err := app.Commit(); err != nil {
				t.Fatal(err)
			}
			sch, err := Detect(context.Background(), db, start, end, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := sch.(dcgm.Schema)
			if !ok || d.TenantField != tt.tenantField || d.MixedNames != tt.mixed {
				t.Errorf("got %#v, want dcgm-exporter with tenants from %q, mixed names %q", sch, tt.tenantField, tt.mixed)
			}
		})
	}
}
