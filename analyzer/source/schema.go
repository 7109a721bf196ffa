package source

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/schemas"
)

// SchemaNames lists the schemas SchemaByName knows, in --schema's words
// (signals/schemas).
func SchemaNames() []string { return schemas.Names() }

// SchemaByName returns the schema called name; fields, where not nil,
// maps dcgm-exporter's fields onto the store's own names (--dcgm-fields).
func SchemaByName(name string, fields *dcgm.FieldMap) (signals.Schema, error) {
	return schemas.ByName(name, fields)
}

// Detect picks the schema of the data in [start, end] for --schema auto:
// native when gpulens's series exist (preferred, as it attributes shared
// GPUs precisely), otherwise dcgm-exporter, in any naming era (and under
// the names fields maps, where not nil). Schema.Name says which was
// picked so the CLI can tell the user. It lives beside the stores because
// it is a question put to one: which exporter's series does it hold.
//
// Where neither is found but the store holds series that look like
// dcgm-exporter's under other names, the error names them and the
// --dcgm-fields lines that would read them: the data is there, and
// "is the exporter scraped?" would send the user the wrong way.
func Detect(ctx context.Context, src Source, start, end time.Time, fields *dcgm.FieldMap) (signals.Schema, error) {
	names, err := src.MetricNames(ctx, start, end)
	if err != nil {
		return nil, fmt.Errorf("detecting the metric schema: %w", err)
	}
	candidates := schemas.All(fields)
	for _, s := range candidates {
		for _, n := range s.Identifying() {
			if slices.Contains(names, n) {
				if d, ok := s.(dcgm.Schema); ok {
					return FitDCGM(ctx, src, d, names, start, end)
				}
				return s, nil
			}
		}
	}
	var looked []string
	for _, s := range candidates {
		looked = append(looked, fmt.Sprintf("%s (%s)", s.Name(), strings.Join(s.Identifying(), ", ")))
	}
	window := fmt.Sprintf("%s between %s and %s", src.Describe(), start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))
	if hint := lookalikes(names, fields); hint != "" {
		return nil, &UnreadNamesError{msg: fmt.Sprintf("no GPU metrics gpulens can read in %s: %s", window, hint)}
	}
	return nil, fmt.Errorf("no GPU metrics in %s: looked for the schemas %s; is the exporter scraped, and is the window right?",
		window, strings.Join(looked, " and "))
}

// UnreadNamesError is Detect's answer for a store that holds
// dcgm-exporter's series under names gpulens does not read: it names
// them, and the field map that would read them.
type UnreadNamesError struct{ msg string }

func (e *UnreadNamesError) Error() string { return e.msg }

// maxLookalikes bounds the names an error lists.
const maxLookalikes = 8

// lookalikes explains the store's dcgm-looking families, or is "".
func lookalikes(names []string, fields *dcgm.FieldMap) string {
	var seen, lines []string
	for _, n := range names {
		looks, line := dcgm.Lookalike(n)
		if !looks {
			continue
		}
		seen = append(seen, n)
		if line != "" {
			lines = append(lines, "  "+line)
		}
	}
	if len(seen) == 0 {
		return ""
	}
	n := len(seen)
	if n > maxLookalikes {
		seen = append(seen[:maxLookalikes], fmt.Sprintf("and %d more", n-maxLookalikes))
	}
	msg := fmt.Sprintf("it holds %d metric families that look like dcgm-exporter's under names gpulens does not read (%s)", n, strings.Join(seen, ", "))
	if fields != nil {
		msg += fmt.Sprintf(", and none of the names %s maps", fields.File())
	}
	msg += ". If a pipeline renamed them, or dcgm-exporter runs with --use-old-namespace, map them to dcgm-exporter's fields with --dcgm-fields FILE (docs/ARCHITECTURE.md, \"dcgm-exporter's eras\")"
	if len(lines) > 0 {
		if len(lines) > maxLookalikes {
			lines = lines[:maxLookalikes]
		}
		msg += "; a FILE for these:\n" + strings.Join(lines, "\n")
	}
	return msg
}
