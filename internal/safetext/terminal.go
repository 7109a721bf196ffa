package safetext

import (
	"strings"
	"unicode/utf8"
)

// CellMax is how many characters of a cell a terminal table shows. A
// cell is a name or a finding's sentence: the longest name Kubernetes
// allows is 253 characters (a DNS subdomain: a pod, a node), and the
// longest sentence of the golden reports, which names three workloads and
// a node, about 560. A value far past that is no Kubernetes name, and a
// 100 KB one would otherwise stretch its column, and so every row of the
// table, across thousands of screen lines.
const CellMax = 1024

// LineMax is how many characters of a line of prose (a headline, a
// section's introduction, a note) a terminal shows: several names in a
// sentence fit, a 100 KB value does not flood the screen.
const LineMax = 4096

// Cell is s made safe for one cell of a terminal table written with
// text/tabwriter: control characters (C0 with ESC, BEL, CR and LF, DEL,
// C1) and invalid UTF-8 are written as Go escapes (\x1b) as Comment does,
// and so is a tab, which tabwriter would read as the end of the cell; the
// row stays one row with its columns. A value longer than CellMax is cut
// with an ellipsis.
func Cell(s string) string {
	return truncate(strings.ReplaceAll(Comment(s), "\t", `\t`), CellMax)
}

// Line is s made safe for a line of prose on a terminal: no control
// character, a tab included (gpulens writes none in prose, and one from a
// label would misalign what follows), reaches it, and it is cut at
// LineMax characters.
func Line(s string) string {
	return truncate(strings.ReplaceAll(Comment(s), "\t", `\t`), LineMax)
}

// truncate cuts s to at most max runes, the last an ellipsis. Cutting an
// escape in the middle (\x1…) leaves only printable characters.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
