package safetext

import "strings"

// lineBreaks are the breaks a Markdown row cannot hold: a cell is one line.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ", "\u0085", " ")

// markdownCell escapes the characters that end a GitHub-flavoured Markdown
// table cell (|, and a backslash that would escape the escape) or start
// markup (emphasis, code, links and images, HTML).
var markdownCell = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;",
)

// MarkdownCell is s safe in a Markdown table cell or a line of Markdown
// text: it renders as the same characters, on one line, with no markup;
// other control characters are written as Comment writes them.
func MarkdownCell(s string) string {
	return markdownCell.Replace(Comment(lineBreaks.Replace(s)))
}
