package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpulens/gpulens/analyzer/report"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/internal/termtable"
)

// TestHostileLabelValues guards issue 52: every command that reads a
// store, in every format, renders a store whose label values are hostile
// (hostile_fixture_test.go) in the shape it renders the same fleet with
// honest names: as many table lines, Markdown cells, HTML rows, CSV
// records, YAML documents and kustomize files, and JSON of the same
// structure. And no raw control character reaches a terminal table or a
// Markdown page, no CSV cell other than a number starts with a formula
// prefix, every JSON and YAML output decodes, and every suggested kubectl
// command reads, as a POSIX shell splits it, as the honest one does. At
// main 36bc8ff ledger-csv wrote =HYPERLINK(...) cells, the tables wrote
// ESC, BEL and CR raw and split rows at newlines, and the kubectl
// comments held the names unquoted.
func TestHostileLabelValues(t *testing.T) {
	honest, bad, honestOf := hostileStores(t)
	base := []string{"--since", "7d", "--until", fixtureUntil, "--no-kubernetes", "--quiet"}
	type run struct {
		cmd, format string
	}
	var runs []run
	for _, f := range report.Formats {
		runs = append(runs, run{"report", f})
	}
	for _, f := range []string{"table", "wide", "json", "yaml", "csv", "kustomize"} {
		runs = append(runs, run{"recommend", f})
	}
	for _, f := range []string{"table", "wide", "json", "yaml", "kustomize"} {
		runs = append(runs, run{"plan", f})
	}
	render := func(t *testing.T, r run, dir string) []byte {
		t.Helper()
		args := append([]string{r.cmd, "--data-dir", dir, "-o", r.format}, base...)
		if r.cmd == "recommend" {
			args = append(args, "--all")
		}
		out := ""
		if r.format == "kustomize" {
			out = filepath.Join(t.TempDir(), "k")
			args = append(args, "--output-dir", out)
		}
		var stdout, stderr bytes.Buffer
		if code := execute(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args[:5], " "), code, stderr.String())
		}
		// Notes and skipped findings name clusters and workloads too.
		noControls(t, stderr.Bytes(), false)
		if out == "" {
			return stdout.Bytes()
		}
		return kustomizeFiles(t, out)
	}
	for _, r := range runs {
		t.Run(r.cmd+"/"+r.format, func(t *testing.T) {
			want, got := render(t, r, honest), render(t, r, bad)
			if bytes.Contains(want, []byte("search.*search.*")) {
				t.Fatal("the honest store holds a hostile value")
			}
			switch r.format {
			case "wide":
				// -o wide writes every record whole on a line of its own.
				noControls(t, got, false)
				sameCount(t, "lines", lineCount(want), lineCount(got))
			case "table":
				// The default table fits 120 columns: a long value is
				// wrapped in its cell (or its note), on continuation lines
				// indented under it, or cut. So it is records that count:
				// the lines that start at the first column.
				noControls(t, got, false)
				sameCount(t, "records (lines not indented)", recordCount(want), recordCount(got))
				for l := range strings.Lines(string(got)) {
					if n := utf8.RuneCountInString(strings.TrimSuffix(l, "\n")); n > termtable.Width {
						t.Errorf("a line of %d columns: %.80q", n, l)
					}
				}
			case "markdown":
				// A tab is white space in Markdown, and a cell holds it.
				noControls(t, got, true)
				sameCount(t, "lines", lineCount(want), lineCount(got))
				if w, g := markdownCells(want), markdownCells(got); !slices.Equal(w, g) {
					t.Errorf("cells per Markdown line %v, want %v", g, w)
				}
			case "html":
				for _, tag := range []string{"<tr", "<td", "<th", "<table", "<svg"} {
					sameCount(t, tag, bytes.Count(want, []byte(tag)), bytes.Count(got, []byte(tag)))
				}
				// html/template escapes every value; no template.HTML
				// carries store text (report.html.tmpl, report/html.go).
				if bytes.Contains(got, []byte("<script")) || !bytes.Contains(got, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
					t.Error("the pod named with a <script> element is not in the page as text")
				}
			case "json":
				sameCount(t, "JSON structure", 0, strings.Compare(jsonShape(t, want, honestOf), jsonShape(t, got, honestOf)))
			case "csv", "ledger-csv":
				w, g := csvRecords(t, want), csvRecords(t, got)
				sameCount(t, "CSV records", len(w), len(g))
				for i := range min(len(w), len(g)) {
					sameCount(t, fmt.Sprintf("cells of record %d", i), len(w[i]), len(g[i]))
				}
				formulas := 0
				for _, rec := range g {
					for _, c := range rec {
						if c != "" && strings.ContainsRune("=+-@\t\r\n\x00", rune(c[0])) {
							if _, err := strconv.ParseFloat(c, 64); err != nil {
								if formulas++; formulas == 1 {
									t.Errorf("cell %.60q starts a formula", c)
								}
							}
						}
					}
				}
				sameCount(t, "cells that start a formula", 0, formulas)
			case "yaml", "kustomize":
				// A comment may quote an object, whose YAML a value with line
				// breaks makes longer: the documents are what must not change.
				if w, g := yamlDocs(t, want, honestOf), yamlDocs(t, got, honestOf); !slices.Equal(w, g) {
					t.Errorf("%d YAML documents of shapes\n%v\nwant %d:\n%v", len(g), g, len(w), w)
				}
				if w, g := kubectlWords(t, want), kubectlWords(t, got, honestOf); !slices.Equal(w, g) {
					t.Errorf("kubectl commands read as\n%q\nwant\n%q", g, w)
				}
			}
		})
	}
}

func sameCount(t *testing.T, what string, want, got int) {
	t.Helper()
	if want != got {
		t.Errorf("%s: %d, want %d (the honest store's)", what, got, want)
	}
}

func lineCount(b []byte) int { return bytes.Count(b, []byte("\n")) }

// recordCount counts the lines that do not start with a space: a table's
// rows and its notes' first lines, not the continuations termtable
// indents under them.
func recordCount(b []byte) int {
	n := 0
	for l := range strings.Lines(string(b)) {
		if !strings.HasPrefix(l, " ") {
			n++
		}
	}
	return n
}

// noControls fails on a C0 control other than a line feed (and a tab,
// where tabs allowed), DEL, or a C1 control: what a terminal obeys.
func noControls(t *testing.T, b []byte, tabs bool) {
	t.Helper()
	for i, r := range string(b) {
		if (r < 0x20 && r != '\n' && !(tabs && r == '\t')) || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Errorf("raw %U at byte %d: %q", r, i, b[max(0, i-40):min(len(b), i+40)])
			return
		}
	}
}

// markdownCells is the number of cell separators (| not escaped as \|)
// on each table line.
func markdownCells(b []byte) []int {
	var n []int
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "|") {
			l = strings.ReplaceAll(l, `\\`, "")
			n = append(n, strings.Count(l, "|")-strings.Count(l, `\|`))
		}
	}
	return n
}

func csvRecords(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	return recs
}

// yamlDocs is the shape (as jsonShape) of each YAML document of b,
// sorted.
func yamlDocs(t *testing.T, b []byte, honestOf func(string) string) []string {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var shapes []string
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			sort.Strings(shapes)
			return shapes
		}
		if err != nil {
			t.Fatalf("YAML document %d: %v", len(shapes), err)
		}
		shapes = append(shapes, shapeOf(v, honestOf))
	}
}

var kubectlLine = regexp.MustCompile(`kubectl [^\n]*`)

// kubectlWords is each suggested kubectl command split into words as a
// POSIX shell splits them (shellWords), each word mapped through
// honestOf where given, so the hostile store's commands compare with the
// honest store's.
func kubectlWords(t *testing.T, b []byte, honestOf ...func(string) string) []string {
	t.Helper()
	var out []string
	for _, cmd := range kubectlLine.FindAllString(string(b), -1) {
		// A comment's escapes (\n, \x1b) are what a reader copies.
		words, err := shellWords(cmd)
		if err != nil {
			t.Errorf("%q: %v", cmd, err)
			continue
		}
		for i, w := range words {
			for _, f := range honestOf {
				w = f(unescapeComment(w))
			}
			words[i] = w
		}
		out = append(out, strings.Join(words, " ␣ "))
	}
	sort.Strings(out)
	return out
}

// unescapeComment undoes safetext.Comment's Go escapes, which a comment
// writes for the control characters of a value.
func unescapeComment(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	u, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	if err != nil {
		return s
	}
	return u
}

// shellWords splits s as a POSIX shell splits a simple command's words,
// for the quoting ShellArg writes (single quotes, backslash outside
// them), and fails on any character that would make the shell do more
// than split: an operator, an expansion, a glob, or an unclosed quote.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in:
			if c == '\'' {
				in = false
			} else {
				w.WriteByte(c)
			}
		case c == '\'':
			in, quoted = true, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case c == ' ' || c == '\t':
			if w.Len() > 0 || quoted {
				words = append(words, w.String())
			}
			w.Reset()
			quoted = false
		case strings.IndexByte("|&;<>()$`\"*?[~#", c) >= 0:
			// A kubectl comment ends in prose such as "(server-side:" or
			// "<this document>": stop there, at a word boundary only.
			if w.Len() == 0 && !quoted {
				return append(words, "…"), nil
			}
			return nil, fmt.Errorf("unquoted %q at %d", c, i)
		default:
			w.WriteByte(c)
		}
	}
	if in {
		return nil, errors.New("unclosed single quote")
	}
	if w.Len() > 0 || quoted {
		words = append(words, w.String())
	}
	return words, nil
}

// jsonShape is b's structure: objects' keys (mapped through honestOf,
// since a map may be keyed by a name), and for values only their type;
// arrays sorted, since names order them.
func jsonShape(t *testing.T, b []byte, honestOf func(string) string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return shapeOf(v, honestOf)
}

// shapeOf is a decoded JSON or YAML value's structure: keys (through
// honestOf) and value types, arrays sorted.
func shapeOf(v any, honestOf func(string) string) string {
	switch v := v.(type) {
	case map[string]any:
		var kv []string
		for k, x := range v {
			kv = append(kv, strconv.Quote(honestOf(k))+":"+shapeOf(x, honestOf))
		}
		sort.Strings(kv)
		return "{" + strings.Join(kv, ",") + "}"
	case []any:
		var xs []string
		for _, x := range v {
			xs = append(xs, shapeOf(x, honestOf))
		}
		sort.Strings(xs)
		return "[" + strings.Join(xs, ",") + "]"
	case string:
		return "s"
	case float64, int, int64, uint64:
		return "n"
	case bool:
		return "b"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// kustomizeFiles is every file kustomize output wrote under dir, each
// after a "---" line, as one YAML stream; its file names must be as many
// as the honest store's (compared through the document count).
func kustomizeFiles(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		all = append(append(all, "---\n"...), b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}
