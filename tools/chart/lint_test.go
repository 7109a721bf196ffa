package chart

import "testing"

// TestLint is `helm lint --strict` through Helm's packages, with the
// default values and with every matrix entry's.
func TestLint(t *testing.T) {
	for _, e := range matrix(t) {
		t.Run(e.name, func(t *testing.T) {
			for _, msg := range Lint(chartDir, Release{Values: values(t, e)}) {
				t.Error(msg)
			}
		})
	}
}
