// Package termtable writes gpulens's terminal tables and prose as kubectl
// does: the default output fits a terminal of Width columns, and -o wide
// adds the long columns and leaves every line whole.
//
// Every cell and every line of prose is escaped first (safetext.Cell,
// safetext.Line: no control character, no tab, no line break of the
// store's text reaches the terminal) and only then wrapped or cut, so a
// label value never starts a line of its own: the lines a wrap adds are
// continuations of their record, indented under it.
package termtable

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gpulens/gpulens/internal/safetext"
)

// Width is the widest line of the default output: 120 columns, a laptop
// terminal's half screen or a full one at a readable size, where the
// table report was over 300 before (issue 54).
const Width = 120

// minWrap is the narrowest a wrapped column is made: narrower, a sentence
// reads as a word a line.
const minWrap = 24

// gap is the spaces between columns, as text/tabwriter's padding 2 wrote
// them.
const gap = 2

// Column is a table's column.
type Column struct {
	Name string
	// Wide columns are shown by -o wide only.
	Wide bool
	// Wrap columns hold prose (a summary, a list of workloads): where the
	// table is wider than Width their cells are wrapped within them.
	Wrap bool
}

// Table is rows of cells under Columns, each row written on a line of its
// own (and the continuation lines of its wrapped cells).
type Table struct {
	// Indent is written before every line.
	Indent  string
	Columns []Column
	rows    [][]string
}

// New is a table of columns, named by header (upper-cased when written).
func New(cols ...Column) *Table { return &Table{Columns: cols} }

// Row adds a row; its cells are in Columns' order.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the table: every column and every whole cell where wide,
// else the columns that are not Wide, within Width where it can.
func (t *Table) Write(w io.Writer, wide bool) error {
	var cols []int
	for i, c := range t.Columns {
		if wide || !c.Wide {
			cols = append(cols, i)
		}
	}
	grid := make([][]string, 0, len(t.rows)+1)
	head := make([]string, len(cols))
	for k, i := range cols {
		head[k] = strings.ToUpper(t.Columns[i].Name)
	}
	grid = append(grid, head)
	for _, row := range t.rows {
		cells := make([]string, len(cols))
		for k, i := range cols {
			if i < len(row) {
				cells[k] = safetext.Cell(row[i])
			}
		}
		grid = append(grid, cells)
	}
	widths := make([]int, len(cols))
	for _, row := range grid {
		for k, c := range row {
			widths[k] = max(widths[k], runes(c))
		}
	}
	if !wide {
		t.fit(cols, widths)
	}
	var b strings.Builder
	for r, row := range grid {
		lines := make([][]string, len(row))
		n := 1
		for k, c := range row {
			switch {
			case r == 0 || runes(c) <= widths[k]:
				lines[k] = []string{c}
			case t.Columns[cols[k]].Wrap:
				lines[k] = wrap(c, widths[k])
			default:
				lines[k] = []string{cut(c, widths[k])}
			}
			n = max(n, len(lines[k]))
		}
		for l := range n {
			var line strings.Builder
			line.WriteString(t.Indent)
			for k := range row {
				c := ""
				if l < len(lines[k]) {
					c = lines[k][l]
				}
				line.WriteString(c)
				if k < len(row)-1 {
					line.WriteString(strings.Repeat(" ", max(0, widths[k]-runes(c))+gap))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit narrows widths to Width: the Wrap columns first, to the room the
// others leave (none narrower than minWrap), then, while the line is
// still too wide, the widest other column, whose cells are then cut in
// their middle.
func (t *Table) fit(cols []int, widths []int) {
	total := func() int {
		n := runes(t.Indent) + gap*(len(widths)-1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	if total() <= Width {
		return
	}
	// The room the other columns leave is shared among the Wrap
	// columns, the narrowest first: one narrower than its share keeps
	// its width, and leaves the rest to the others.
	var wraps []int
	room := Width - total()
	for k, i := range cols {
		if t.Columns[i].Wrap {
			wraps = append(wraps, k)
			room += widths[k]
		}
	}
	slices.SortStableFunc(wraps, func(a, b int) int { return widths[a] - widths[b] })
	for n, k := range wraps {
		share := room / (len(wraps) - n)
		widths[k] = min(widths[k], max(minWrap, share))
		room -= widths[k]
	}
	// A cut column keeps its header's width, and 5 characters: two of
	// the start, the ellipsis, two of the end.
	floor := func(k int) int { return max(5, runes(t.Columns[cols[k]].Name)) }
	for total() > Width {
		widest := -1
		for k, i := range cols {
			if !t.Columns[i].Wrap && widths[k] > floor(k) && (widest < 0 || widths[k] > widths[widest]) {
				widest = k
			}
		}
		if widest < 0 || widths[widest] <= floor(widest) {
			return // nothing left to narrow: the line is as short as it gets
		}
		widths[widest] = max(floor(widest), widths[widest]-(total()-Width))
	}
}

// cut shortens s to width with an ellipsis in its middle, which keeps a
// name's start and end (a node and a GPU's UUID's last digits).
func cut(s string, width int) string {
	rs := []rune(s)
	if len(rs) <= width {
		return s
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return string(rs[:head]) + "…" + string(rs[len(rs)-tail:])
}

// wrap breaks s into lines of at most width, at spaces and after a
// comma, a slash or a hyphen where it can, else within a word.
func wrap(s string, width int) []string {
	var out []string
	rs := []rune(s)
	for len(rs) > width {
		// The last space that leaves a third of the line filled, else
		// the last break after punctuation (a long name, a MIG layout),
		// else within the word.
		space, punct := -1, -1
		for i := width; i > 0 && (space < 0 || punct < 0); i-- {
			if space < 0 && rs[i] == ' ' {
				space = i // the space ends the line, unwritten
			}
			if punct < 0 && strings.ContainsRune(",/-", rs[i-1]) {
				punct = i
			}
		}
		at := space
		if space < width/3 && punct > 0 {
			at = punct
		}
		if at <= 0 {
			at = width
		}
		out = append(out, strings.TrimRight(string(rs[:at]), " "))
		rs = []rune(strings.TrimLeft(string(rs[at:]), " "))
	}
	return append(out, strings.TrimRight(string(rs), " "))
}

// Prose writes text after prefix ("Note: ") as a paragraph: escaped
// (safetext.Line), then, unless wide, wrapped at Width with the lines
// after the first indented by indent, which should not be empty: a line
// that starts at the first column is a record's first (the hostile label
// test counts them).
func Prose(w io.Writer, prefix, indent, text string, wide bool) error {
	s := prefix + safetext.Line(text)
	if wide || runes(s) <= Width {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	first := true
	var b strings.Builder
	rest := s
	for rest != "" {
		width := Width
		if !first {
			width -= runes(indent)
		}
		lines := wrap(rest, width)
		line := lines[0]
		if !first {
			b.WriteString(indent)
		}
		b.WriteString(line + "\n")
		rest = strings.TrimLeft(string([]rune(rest)[runes(line):]), " ")
		first = false
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runes(s string) int { return utf8.RuneCountInString(s) }
