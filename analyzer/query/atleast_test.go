package query

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
)

// TestAtLeast: the range matchers' expression matches exactly the values
// at or above its bound in byte order, for bounds and values of digits,
// separators, letters of both cases and runes past ASCII
// (BenchmarkAtLeast times its compiling).
func TestAtLeast(t *testing.T) {
	bounds := []string{"", "0", "-", "9", "A", "Z", "_", "a", "n", "z", "~", "é", "node-1234", "gpu-node-00123", "GPU-09", "Node_7", "ζ-1"}
	values := append([]string{"", " ", "/", "00", "10", "AA", "[", "`", "aa", "zz", "{", "\u00ff", "ſ", "K", "node-1233", "node-1234", "node-1234a",
		"node-1235", "node-12", "node-2", "node-", "node", "gpu-node-00122", "gpu-node-00124", "GPU-1", "Node_6", "ζ-0", "ζ-10", "ζ-2", "\U0001f600"}, bounds...)
	for _, lo := range bounds {
		m, err := labels.NewMatcher(labels.MatchRegexp, "node", atLeast(lo))
		if err != nil {
			t.Fatalf("atLeast(%q): %v", lo, err)
		}
		for _, v := range values {
			if got, want := m.Matches(v), v >= lo; got != want {
				t.Errorf("atLeast(%q) matches %q: %v, want %v", lo, v, got, want)
			}
		}
	}
}

// BenchmarkAtLeast is one bound of a 10,000-GPU fleet's node shards
// compiled, as the parser, the range matchers and tsdb's inverse of the
// upper bound each do: 29.7 ms with a class [^\x00-r] for each rune r
// (above), 0.23 ms split below 'A' (2 shared cores, under load).
func BenchmarkAtLeast(b *testing.B) {
	for b.Loop() {
		labels.MustNewMatcher(labels.MatchRegexp, "node", atLeast("node-1234"))
	}
}
