package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulens/gpulens/internal/safetext"
)

// writeMarkdown prints GitHub-flavoured Markdown, which Slack, wikis and
// pull requests render.
func writeMarkdown(w io.Writer, r *Report) error {
	return writeMarkdownSections(w, r, r.sections())
}

// writeMarkdownSections prints the title, the headline and secs, which
// the webhook message shortens.
func writeMarkdownSections(w io.Writer, r *Report, secs []section) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "# %s\n\n%s\n", r.title(), mdEscape(r.subtitle()))
	for _, s := range append([]section{r.headlineSection()}, secs...) {
		fmt.Fprintf(ew, "\n## %s\n\n", s.Title)
		if s.Intro != "" {
			fmt.Fprintf(ew, "%s\n\n", mdEscape(s.Intro))
		}
		if len(s.Rows) == 0 {
			fmt.Fprintln(ew, s.Empty)
			continue
		}
		fmt.Fprintf(ew, "| %s |\n|%s\n", strings.Join(s.Header, " | "), strings.Repeat(" --- |", len(s.Header)))
		for _, row := range s.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = mdEscape(c)
			}
			fmt.Fprintf(ew, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	return ew.err
}

// mdEscape keeps names from breaking a table or turning into markup.
var mdEscape = safetext.MarkdownCell
