package price

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzOverridePrices proves a --prices file never panics the parser, that
// an accepted table only holds prices a saving can be computed from (finite,
// positive, at most $10,000 an hour), and that a refusal leaves no table.
func FuzzOverridePrices(f *testing.F) {
	f.Add(defaultPrices)
	files, _ := filepath.Glob(filepath.Join("testdata", "prices", "*.yaml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("prices: {H100: .inf, A100: 1e-400}\n"))
	f.Add([]byte("prices: {\"  h100 \": 2}\nsources: [a, [b]]\n"))
	f.Add([]byte("date: [2026]\n"))
	f.Add([]byte("- a\n- b\n"))
	base := DefaultPrices()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := base.Override(data, "fuzz.yaml")
		if err != nil {
			if p != nil {
				t.Fatal("Override returned a table with an error")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if p.Currency != "USD" {
			t.Fatalf("accepted currency %q", p.Currency)
		}
		if got := p.Files[len(p.Files)-1]; got != "fuzz.yaml" {
			t.Fatalf("Files = %v, want fuzz.yaml last", p.Files)
		}
		for _, m := range p.Models() {
			// An empty key would price every GPU of unknown model.
			if strings.TrimSpace(m) == "" {
				t.Fatalf("accepted an empty model name from %q", data)
			}
			v, err := p.PerHour(m)
			if err != nil || !(v > 0 && v <= 1e4) {
				t.Fatalf("PerHour(%q) = %v, %v: want a price in (0, 10000]", m, v, err)
			}
		}
		if len(base.Models()) != len(DefaultPrices().Models()) {
			t.Fatal("Override changed the table it was called on")
		}
	})
}
