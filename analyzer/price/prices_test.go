package price

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestDefaultPrices(t *testing.T) {
	p := DefaultPrices()
	if p.Date != "2026-12" || p.Currency != "USD" || len(p.Sources) == 0 {
		t.Errorf("default table: date %q, currency %q, %d sources", p.Date, p.Currency, len(p.Sources))
	}
	// Every model a public cloud rents by the hour has a price. A30, H800,
	// GH200 and RTX PRO 6000 have no list price to cite: their cost is
	// unknown (said, not guessed) until a --prices file sets one.
	unpriced := []string{"A30", "H800-80GB", "GH200-96GB", "RTX-PRO-6000"}
	for _, k := range ModelKeys() {
		v, err := p.PerHour(k)
		if slices.Contains(unpriced, k) {
			if err == nil {
				t.Errorf("PerHour(%s) = %v: where is the price from? Update the sources and this test", k, v)
			}
			continue
		}
		if err != nil || v <= 0 {
			t.Errorf("PerHour(%s) = %v, %v", k, v, err)
		}
	}
	if v, err := p.PerHour("NVIDIA H100 80GB HBM3"); err != nil || v != 6.88 {
		t.Errorf("PerHour(H100 product name) = %v, %v; want 6.88", v, err)
	}
}

func TestPriceOverride(t *testing.T) {
	p, err := LoadPrices("testdata/prices/override.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model string
		want  float64
	}{
		{"NVIDIA H100 80GB HBM3", 3.90},          // exact product name wins
		{"NVIDIA H100 PCIe", 4.10},               // falls back to the key
		{"NVIDIA RTX 6000 Ada Generation", 1.20}, // a model the catalog lacks
		{"NVIDIA L4", 0.80},                      // untouched default
	}
	for _, tt := range tests {
		if got, err := p.PerHour(tt.model); err != nil || got != tt.want {
			t.Errorf("PerHour(%q) = %v, %v; want %v", tt.model, got, err, tt.want)
		}
	}
	if p.Date != "2027-01" || len(p.Sources) != 1 || len(p.Files) != 2 {
		t.Errorf("override: date %q, sources %q, files %q", p.Date, p.Sources, p.Files)
	}
	if _, err := p.PerHour("NVIDIA GH200 480GB"); !errors.Is(err, ErrNoPrice) || !strings.Contains(err.Error(), `no price for model "NVIDIA GH200 480GB"`) {
		t.Errorf("unknown model: %v", err)
	}
	var none *Prices
	if _, err := none.PerHour("NVIDIA L4"); !errors.Is(err, ErrNoPrice) {
		t.Errorf("nil table: %v", err)
	}
}

func TestPriceFileErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"bad-value.yaml", `testdata/prices/bad-value.yaml:3: prices.L4: want a positive number of USD per GPU-hour, got "free"`},
		{"unknown-key.yaml", `testdata/prices/unknown-key.yaml:2: region: unknown key`},
		{"zero.yaml", `testdata/prices/zero.yaml:2: prices.T4: want a positive number`},
		{"currency.yaml", `testdata/prices/currency.yaml:1: currency: only USD is supported`},
		{"bad-discount.yaml", `testdata/prices/bad-discount.yaml:2: discounts.H100-80GB: want the part taken off the price, at least 0 and under 1`},
		{"missing.yaml", "no such file"},
		{"typo.yaml", `testdata/prices/typo.yaml:5: prices.H100-80G: unknown model "H100-80G": did you mean H100-80GB?`},
		{"typo-discount.yaml", `testdata/prices/typo-discount.yaml:2: discounts.A100-80BG: unknown model "A100-80BG": did you mean A100-80GB?`},
		// Keys are matched case-folded, so these two are one key; at
		// 36bc8ff the later won in silence.
		{"duplicate.yaml", `testdata/prices/duplicate.yaml:5: prices.h100-80gb: given twice, on lines 3 and 5: keep one`},
	}
	for _, tt := range tests {
		_, err := LoadPrices("testdata/prices/" + tt.file)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.file, err, tt.want)
		}
	}
}

// TestDiscountsAndSources: a pool's discount comes off its list price, by
// catalog key or exact product name, and the source says both where the
// price and where the discount came from.
func TestDiscountsAndSources(t *testing.T) {
	base := DefaultPrices()
	p, err := LoadPrices("testdata/prices/discounts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := base.PerHour("NVIDIA H100 80GB HBM3")
	a100, _ := base.PerHour("NVIDIA A100-SXM4-80GB")
	for _, tt := range []struct {
		model  string
		want   float64
		source string
	}{
		{"NVIDIA H100 80GB HBM3", h100 * 0.7, "embedded prices.yaml (" + base.Date + "), less 30% from testdata/prices/discounts.yaml"},
		{"NVIDIA L4", 1.00 * 0.5, "testdata/prices/discounts.yaml (2026-11), less 50% from testdata/prices/discounts.yaml"},
		{"NVIDIA A100-SXM4-80GB", a100, "embedded prices.yaml (" + base.Date + ")"},
		{"NVIDIA GH200 144G HBM3e", 0, ""},
	} {
		got, err := p.PerHour(tt.model)
		if tt.source == "" {
			if err == nil {
				t.Errorf("%s: priced %.4f, want no price", tt.model, got)
			}
		} else if err != nil || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %.4f (%v), want %.4f", tt.model, got, err, tt.want)
		}
		if s := p.Source(tt.model); s != tt.source {
			t.Errorf("%s: source %q, want %q", tt.model, s, tt.source)
		}
	}
}

// TestInstancePrices: a node is priced by its instance type, whatever the
// label's case, less its pool's discount, and says where both come from.
func TestInstancePrices(t *testing.T) {
	base := DefaultPrices()
	p, err := LoadPrices("testdata/prices/discounts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const h100 = "NVIDIA H100 80GB HBM3"
	list, src, ok := base.PerNodeHour("p5.48xlarge", h100)
	if !ok || list != 55.04 || src != "instance p5.48xlarge in embedded prices.yaml ("+base.Date+")" {
		t.Errorf("p5.48xlarge: %v %q %v", list, src, ok)
	}
	v, src, ok := p.PerNodeHour("p5.48xlarge", h100)
	if !ok || math.Abs(v-list*0.7) > 1e-9 || !strings.HasSuffix(src, ", less 30% from testdata/prices/discounts.yaml") {
		t.Errorf("discounted p5.48xlarge: %v %q %v", v, src, ok)
	}
	if _, _, ok := base.PerNodeHour("standard_nd96isr_h100_v5", h100); !ok {
		t.Error("the Azure type in lower case is not found")
	}
	if _, _, ok := base.PerNodeHour("x9.unknown", h100); ok {
		t.Error("an unknown instance type has a price")
	}
}

func TestPriceFileTakesProductNames(t *testing.T) {
	p, err := LoadPrices("testdata/prices/product-names.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]float64{"NVIDIA RTX PRO 6000 Blackwell Server Edition": 3.10, "GRID A100-10C": 0.70} {
		if got, err := p.PerHour(model); err != nil || got != want {
			t.Errorf("PerHour(%q) = %v, %v; want %v", model, got, err, want)
		}
	}
}

// TestUndatedFileAndUnmatchedKeys: a user's price file without a date is
// said to be undated, not shown under the embedded table's date; a price
// that matches no GPU of the data (an NVML product name written a little
// wrong: NVML reports "NVIDIA H100 80GB HBM3", go-nvml's dgxh100 mock
// and dcgm-exporter's modelName alike) is named with the model meant. At
// 36bc8ff the file took the embedded table's date and the key was ignored
// in silence, the H100 keeping the table's price.
func TestUndatedFileAndUnmatchedKeys(t *testing.T) {
	base := DefaultPrices()
	p, err := LoadPrices("testdata/prices/undated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := base.Date + ", testdata/prices/undated.yaml undated"; p.Date != want {
		t.Errorf("Date %q, want %q", p.Date, want)
	}
	if src := p.Source("NVIDIA L4"); src != "testdata/prices/undated.yaml" {
		t.Errorf("L4's source %q, want the file without a date", src)
	}
	got := p.Unmatched([]string{"NVIDIA H100 80GB HBM3", "NVIDIA L4"})
	want := []string{`testdata/prices/undated.yaml: the price of "nvidia h100 80gb hbm" matches no GPU of the data: did you mean "NVIDIA H100 80GB HBM3"?`}
	if !slices.Equal(got, want) {
		t.Errorf("Unmatched = %q, want %q", got, want)
	}
	// The embedded table's own keys are never reported: it prices every
	// catalog model, most of which a fleet does not have.
	if got := base.Unmatched([]string{"NVIDIA L4"}); len(got) != 0 {
		t.Errorf("the embedded table reported: %q", got)
	}
}
