// Command vulngate reads govulncheck's JSON stream on stdin and fails when
// the code reaches a vulnerability that the exceptions file does not excuse.
// govulncheck itself has no notion of an accepted risk, and its exit code
// counts findings in imported-but-unreached code too.
//
// Exceptions file: one per line, "ID EXPIRY REASON...", EXPIRY as
// YYYY-MM-DD; '#' starts a comment. An exception is refused for a
// vulnerability that has a fixed version (upgrade instead) and ignored
// once expired, so an accepted risk is looked at again.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

type message struct {
	OSV     *osvEntry `json:"osv"`
	Finding *finding  `json:"finding"`
}

type osvEntry struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

type finding struct {
	OSV          string  `json:"osv"`
	FixedVersion string  `json:"fixed_version"`
	Trace        []frame `json:"trace"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
	} `json:"position"`
}

type exception struct {
	ID     string
	Expiry time.Time
	Reason string
	Line   int
}

// vuln is one reached vulnerability with every call path that reaches it.
type vuln struct {
	ID, Summary, Module, Version, Fixed string
	Paths                               []string
}

func main() {
	excFile := flag.String("exceptions", "", "accepted-risk file (ID EXPIRY REASON per line)")
	flag.Parse()
	var exc []exception
	if *excFile != "" {
		f, err := os.Open(*excFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fatal(err)
		}
		if err == nil {
			exc, err = parseExceptions(f)
			f.Close()
			if err != nil {
				fatal(fmt.Errorf("%s: %w", *excFile, err))
			}
		}
	}
	reached, unreached, err := read(os.Stdin)
	if err != nil {
		fatal(err)
	}
	failed, report := judge(reached, exc, time.Now().UTC())
	fmt.Print(report)
	fmt.Printf("vuln: %d vulnerabilities reached, %d more in imported modules or packages but not called\n", len(reached), unreached)
	if failed {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "vulngate:", err)
	os.Exit(2)
}

func parseExceptions(r io.Reader) ([]exception, error) {
	var out []exception
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: want ID EXPIRY REASON", n)
		}
		exp, err := time.Parse(time.DateOnly, f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: expiry: %w", n, err)
		}
		out = append(out, exception{ID: f[0], Expiry: exp, Reason: strings.Join(f[2:], " "), Line: n})
	}
	return out, sc.Err()
}

// read collects the vulnerabilities with a symbol-level finding: a trace
// whose innermost frame names a function is a call path from this code.
func read(r io.Reader) (map[string]*vuln, int, error) {
	summaries := map[string]string{}
	reached := map[string]*vuln{}
	seen := map[string]bool{}
	dec := json.NewDecoder(r)
	for {
		var m message
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return nil, 0, fmt.Errorf("reading govulncheck output: %w", err)
		}
		if m.OSV != nil {
			summaries[m.OSV.ID] = m.OSV.Summary
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 {
			continue
		}
		seen[f.OSV] = true
		if f.Trace[0].Function == "" {
			continue
		}
		v := reached[f.OSV]
		if v == nil {
			v = &vuln{ID: f.OSV, Module: f.Trace[0].Module, Version: f.Trace[0].Version, Fixed: f.FixedVersion}
			reached[f.OSV] = v
		}
		v.Paths = append(v.Paths, path(f.Trace))
	}
	for id, v := range reached {
		v.Summary = summaries[id]
	}
	return reached, len(seen) - len(reached), nil
}

// path prints a trace from this code's call site to the vulnerable symbol.
func path(tr []frame) string {
	var parts []string
	for i := len(tr) - 1; i >= 0; i-- {
		fr := tr[i]
		name := fr.Package + "." + fr.Function
		if fr.Receiver != "" {
			name = fr.Package + "." + strings.TrimPrefix(fr.Receiver, "*") + "." + fr.Function
		}
		if fr.Position != nil && i == len(tr)-1 {
			name += fmt.Sprintf(" (%s:%d)", fr.Position.Filename, fr.Position.Line)
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, " -> ")
}

func judge(reached map[string]*vuln, exc []exception, now time.Time) (bool, string) {
	byID := map[string]exception{}
	for _, e := range exc {
		byID[e.ID] = e
	}
	ids := make([]string, 0, len(reached))
	for id := range reached {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	failed := false
	for _, id := range ids {
		v := reached[id]
		verdict := "FAIL"
		e, excused := byID[id]
		switch {
		case !excused:
		case v.Fixed != "":
			verdict = fmt.Sprintf("FAIL (exception on line %d refused: fixed in %s, upgrade instead)", e.Line, v.Fixed)
		case !now.Before(e.Expiry.AddDate(0, 0, 1)):
			verdict = fmt.Sprintf("FAIL (exception on line %d expired %s)", e.Line, e.Expiry.Format(time.DateOnly))
		default:
			verdict = fmt.Sprintf("accepted until %s: %s", e.Expiry.Format(time.DateOnly), e.Reason)
		}
		if strings.HasPrefix(verdict, "FAIL") {
			failed = true
		}
		fixed := v.Fixed
		if fixed == "" {
			fixed = "no fix"
		}
		fmt.Fprintf(&b, "%s %s: %s@%s, fixed in %s: %s\n", verdict, id, v.Module, v.Version, fixed, v.Summary)
		sort.Strings(v.Paths)
		for i, p := range v.Paths {
			if i == 3 {
				fmt.Fprintf(&b, "    ... and %d more call paths\n", len(v.Paths)-3)
				break
			}
			fmt.Fprintf(&b, "    %s\n", p)
		}
	}
	for _, e := range exc {
		if _, ok := reached[e.ID]; !ok {
			fmt.Fprintf(&b, "note: exception %s (line %d) matches nothing reached; remove it\n", e.ID, e.Line)
		}
	}
	return failed, b.String()
}
