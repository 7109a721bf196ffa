package report

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestCheckSelector: a selector no finding could match, whatever the
// data, is refused with what there is; any other passes. Each refused
// case was accepted at 36bc8ff (and answered "No findings to act on").
func TestCheckSelector(t *testing.T) {
	for _, c := range []struct {
		sel, err string
	}{
		{"", ""},
		{"!node", ""},
		{"kind=idle-allocation,severity!=info", ""},
		{"kind in (hami-overcommit,idle-allocation)", ""},
		{"workload_kind=StatefulSet", ""},
		{"team=anything-the-data-may-hold", ""},
		{"tema=team-nlp", `no finding carries the label "tema" (did you mean "team"?)`},
		{"nodes", `no finding carries the label "nodes" (did you mean "node"?)`},
		{"kind=idle-alocation", `kind "idle-alocation" is not a finding's kind (did you mean "idle-allocation"?)`},
		{"kind notin (bogus)", `kind "bogus" is not a finding's kind: the kinds are`},
		{"severity=warn", `severity "warn" is not a finding's severity (did you mean "warning"?): the severities are critical, info, warning`},
	} {
		sel, err := labels.Parse(c.sel)
		if err != nil {
			t.Fatalf("%q: %v", c.sel, err)
		}
		err = CheckSelector(sel)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.sel, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one containing %q", c.sel, err, c.err)
		}
	}
}
