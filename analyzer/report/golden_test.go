package report

import (
	"bytes"
	"os"
	"testing"
)

// TestGolden renders the fixture week in every format and compares it
// with testdata/report.golden.* (go test -update rewrites them).
func TestGolden(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	ext := map[string]string{"table": "txt", "markdown": "md", "html": "html", "json": "json", "csv": "csv"}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, r, format); err != nil {
				t.Fatal(err)
			}
			path := "testdata/report.golden." + ext[format]
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s; run go test -update and review the diff", format, path)
			}
			// Rendering twice gives the same bytes: nothing depends on
			// map order or the clock.
			var again bytes.Buffer
			_ = Render(&again, r, format)
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Errorf("%s is not deterministic", format)
			}
		})
	}
}
