package report

import (
	"bytes"
	"os"
	"testing"
)

// goldenExt is each format's golden file's extension.
var goldenExt = map[string]string{"table": "txt", "wide": "wide.txt", "markdown": "md", "html": "html", "json": "json", "yaml": "yaml", "csv": "csv", "ledger-csv": "ledger.csv"}

// checkGolden compares got with the file at path, or rewrites it with
// go test -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; run go test -update and review the diff", path)
	}
}

// TestGolden renders the fixture week in every format and compares it
// with testdata/report.golden.* (go test -update rewrites them).
func TestGolden(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, r, format); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata/report.golden."+goldenExt[format], buf.Bytes())
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
