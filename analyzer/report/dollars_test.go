package report

import "testing"

// TestDollars: recommend's savings column writes money as the report
// does, with thousands separators; at 36bc8ff it wrote "$5774" where the
// report wrote "$5,774".
func TestDollars(t *testing.T) {
	for v, want := range map[float64]string{5774: "$5,774", -717: "-$717", 1234567.4: "$1,234,567", 0: "$0", 999.6: "$1,000"} {
		if got := dollars(v); got != want {
			t.Errorf("dollars(%v) = %q, want %q", v, got, want)
		}
	}
}
