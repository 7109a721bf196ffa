package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Comment is s made safe to write after "# " on one line: every character
// that a YAML 1.1 or 1.2 parser, a shell or a terminal could take as a line
// break or a control sequence is written as a Go escape (\n, \x1b,
// \u2028), and invalid UTF-8 as \x escapes. A comment can then never end
// early and let the rest of a label value be read as YAML.
func Comment(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is each line of text (split at \n) as Comment writes it, for a
// multi-line note written as several comment lines.
func Lines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		out = append(out, Comment(l))
	}
	return out
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune: C0 and C1 controls (tab aside, which neither YAML nor a
// shell reads as a break), DEL, NEL and the Unicode line and paragraph
// separators (YAML 1.1 breaks lines at U+0085, U+2028 and U+2029), the
// byte order mark, and the bidirectional controls that make a terminal
// show text other than what is there.
func unsafeRune(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r) && !unicode.IsGraphic(r)
}
