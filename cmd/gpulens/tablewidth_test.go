package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpulens/gpulens/internal/termtable"
)

// TestTablesFitOnTheDemoWeek: every command's default table on the demo's
// week is within 120 columns, and -o wide has the long columns the
// default leaves out, as kubectl's -o wide does (issue 54: the table
// report was over 300 columns wide). The week is simulated at 5-minute
// steps, not the demo's 1: the same fleet, workloads and names, five
// times fewer samples.
func TestTablesFitOnTheDemoWeek(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a week")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	until := "2026-01-05T00:00:00Z"
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"demo", "--duration", "7d", "--step", "5m", "--previous-step", "0", "--end", until, "--data-dir", dir, "--quiet"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, stderr.String())
	}
	// The demo's own output is the report's table.
	checkWidth(t, "demo", stdout.String())
	cases := []struct {
		cmd string
		// wideOnly are headers that -o wide shows and the default not.
		wideOnly []string
	}{
		{"report", []string{"PRICE SOURCE", "NAMESPACES", "UNMEASURED GPU-H", "ALLOCATION"}},
		{"recommend", []string{"KIND", "CONFIDENCE"}},
		{"plan", []string{"METHOD", "CONTENDED STEPS"}},
		{"quota", []string{"FLAVOR", "NAMESPACES"}},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			out := map[string]string{}
			for _, format := range []string{"table", "wide"} {
				var stdout, stderr bytes.Buffer
				args := []string{c.cmd, "--data-dir", dir, "--since", "7d", "--until", until, "--step", "5m", "--quiet", "-o", format}
				if code := execute(args, &stdout, &stderr); code != exitOK {
					t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
				}
				out[format] = stdout.String()
			}
			checkWidth(t, c.cmd, out["table"])
			if strings.Count(out["table"], "\n") < 10 {
				t.Errorf("the %s table has %d lines:\n%s", c.cmd, strings.Count(out["table"], "\n"), out["table"])
			}
			for _, h := range c.wideOnly {
				if !strings.Contains(out["wide"], h) || strings.Contains(out["table"], "  "+h+"  ") {
					t.Errorf("%s: want %q in -o wide's header and not the default's", c.cmd, h)
				}
			}
		})
	}
}

// checkWidth fails on every line of out past termtable.Width columns.
func checkWidth(t *testing.T, what, out string) {
	t.Helper()
	n := 0
	for l := range strings.Lines(out) {
		n++
		if w := utf8.RuneCountInString(strings.TrimSuffix(l, "\n")); w > termtable.Width {
			t.Errorf("%s: line %d is %d columns: %.100q…", what, n, w, l)
		}
	}
}
