package termtable

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFitsWidth: a table wider than Width loses its Wide columns, wraps
// its prose column within the rest and, -o wide, has them all on one line
// a row. Expected lines are laid out by hand.
func TestFitsWidth(t *testing.T) {
	why := strings.Repeat("word ", 30) // 150 characters of prose
	tb := New(Column{Name: "Team"}, Column{Name: "Namespaces", Wide: true}, Column{Name: "Why", Wrap: true})
	tb.Row("nlp", "team-nlp", why)
	var narrow, wide bytes.Buffer
	if err := tb.Write(&narrow, false); err != nil {
		t.Fatal(err)
	}
	_ = tb.Write(&wide, true)
	// TEAM is 4 wide, then 2 spaces: 114 columns for the prose, which
	// holds 23 words (23×5 − 1 = 114), the last space dropped.
	line1 := "nlp   " + strings.TrimSpace(strings.Repeat("word ", 23))
	line2 := "      " + strings.TrimSpace(strings.Repeat("word ", 7))
	want := "TEAM  WHY\n" + line1 + "\n" + line2 + "\n"
	if narrow.String() != want {
		t.Errorf("default:\n%s\nwant:\n%s", narrow.String(), want)
	}
	wantWide := "TEAM  NAMESPACES  WHY\nnlp   team-nlp    " + strings.TrimSpace(why) + "\n"
	if wide.String() != wantWide {
		t.Errorf("wide:\n%s\nwant:\n%s", wide.String(), wantWide)
	}
}

// TestCutsNames: without a prose column, the widest column is cut in its
// middle to fit; a hostile cell is escaped before it is measured, and
// stays on its row.
func TestCutsNames(t *testing.T) {
	tb := New(Column{Name: "Subject"}, Column{Name: "Savings"})
	name := "gpu-h100-01/" + strings.Repeat("x", 120) + "-98ba7d724518"
	tb.Row(name, "$1")
	tb.Row("evil\nname\x1b[31m", "$2")
	var out bytes.Buffer
	_ = tb.Write(&out, false)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	// 120 - 2 - len("SAVINGS") = 111 for the subject: 55 runes, "…", 55.
	if want := name[:55] + "…" + name[len(name)-55:] + "  $1"; lines[1] != want {
		t.Errorf("row %q, want %q", lines[1], want)
	}
	if !strings.HasPrefix(lines[2], `evil\nname\x1b[31m`) {
		t.Errorf("hostile row %q, want it escaped", lines[2])
	}
}

// TestProse: a note is wrapped at Width under a hanging indent, and not
// at all -o wide.
func TestProse(t *testing.T) {
	text := strings.Repeat("abcdefghi ", 20) // 200 characters
	var out, wide bytes.Buffer
	_ = Prose(&out, "Note: ", "  ", text, false)
	_ = Prose(&wide, "Note: ", "  ", text, true)
	// "Note: " and 11 words of 10 fill 116 columns, the 12th would be 126.
	want := "Note: " + strings.TrimSpace(strings.Repeat("abcdefghi ", 11)) + "\n  " + strings.TrimSpace(strings.Repeat("abcdefghi ", 9)) + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if strings.Count(wide.String(), "\n") != 1 {
		t.Errorf("wide: %q, want one line", wide.String())
	}
}
