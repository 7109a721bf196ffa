package report

import "testing"

// TestCSVText: a label value that a spreadsheet would run as a formula
// (issue 44: a namespace "=HYPERLINK(...)") is written as text.
func TestCSVText(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"+1":                         "'+1",
		"-2+3":                       "'-2+3",
		"@SUM(A1)":                   "'@SUM(A1)",
		"\tx":                        "'\tx",
		"\rx":                        "'\rx",
		"team-a":                     "team-a",
		"":                           "",
		"a=b":                        "a=b",
	} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q, want %q", in, got, want)
		}
	}
}
