package safetext

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCSVCell guards issue 52's ledger-csv: a label value that a
// spreadsheet runs as a formula is written as text; one that merely holds
// a formula character later is left alone.
func TestCSVCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"+1", "'+1"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"\nx", "'\nx"},
		{"\x00x", "'\x00x"},
		{"team-a", "team-a"},
		{"a=b", "a=b"},
		{"", ""},
	} {
		if got := CSVCell(tt.in); got != tt.want {
			t.Errorf("CSVCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCell guards issue 52's terminal tables: no control character
// reaches the terminal (an OSC 52 clipboard write, a CR that overwrites
// the row), a tab does not add a column, and a 100 KB value is cut.
func TestCell(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	for _, tt := range []struct{ in, want string }{
		{"team-a", "team-a"},
		{"\x1b]52;c;ZWNobyBoaQ==\x07", `\x1b]52;c;ZWNobyBoaQ==\a`},
		{"ok\rforged row", `ok\rforged row`},
		{"a\nb", `a\nb`},
		{"a\tb", `a\tb`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"ünïcode ✓", "ünïcode ✓"},
		{long, strings.Repeat("x", CellMax-1) + "…"},
		{strings.Repeat("x", CellMax), strings.Repeat("x", CellMax)},
	} {
		if got := Cell(tt.in); got != tt.want {
			t.Errorf("Cell(%.40q) = %.40q (%d runes), want %.40q", tt.in, got, utf8.RuneCountInString(got), tt.want)
		}
	}
	if got := Line(long); utf8.RuneCountInString(got) != LineMax || !strings.HasSuffix(got, "…") {
		t.Errorf("Line(100 KB) has %d runes", utf8.RuneCountInString(got))
	}
	if got := Line("a\tb\x1bc\nd"); got != `a\tb\x1bc\nd` {
		t.Errorf("Line = %q", got)
	}
}

// TestShellArg guards issue 52's suggested commands: each word reads back
// as the value, whatever it holds, and an honest name stays bare. The
// round trip runs sh itself (POSIX 2.2.2: single quotes keep everything).
func TestShellArg(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"team-a", "team-a"},
		{"nvidia.com/device-plugin.config=a100-mig", "nvidia.com/device-plugin.config=a100-mig"},
		{"", "''"},
		{"x; rm -rf ~", `'x; rm -rf ~'`},
		{"it's", `'it'\''s'`},
		{"$(id)`id`", "'$(id)`id`'"},
		{"~root", "'~root'"},
		{"a b\tc", "'a b\tc'"},
		{"*", "'*'"},
	} {
		if got := ShellArg(tt.in); got != tt.want {
			t.Errorf("ShellArg(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ kind, name, want string }{
		{"deployment", "web", "deployment web"},
		{"deployment", "--all", "deployment/--all"},
		{"pod", "-x; id", "'pod/-x; id'"},
		{"pod", "a b", "pod 'a b'"},
	} {
		if got := ShellObject(tt.kind, tt.name); got != tt.want {
			t.Errorf("ShellObject(%q, %q) = %q, want %q", tt.kind, tt.name, got, tt.want)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to read the words back")
	}
	for _, v := range []string{"x; rm -rf ~", "it's", "$(id)`id`", "'''", "a\nb", "\\'\"", "*", "~", ""} {
		out, err := exec.Command(sh, "-c", "printf %s "+ShellArg(v)).Output()
		if err != nil || string(out) != v {
			t.Errorf("sh read %q back as %q (%v)", v, out, err)
		}
	}
}
