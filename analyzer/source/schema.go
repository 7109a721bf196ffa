package source

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// SchemaNames lists the schemas SchemaByName knows, in --schema's words.
func SchemaNames() []string { return []string{native.SchemaName, dcgm.SchemaName} }

// SchemaByName returns the schema called name.
func SchemaByName(name string) (signals.Schema, error) {
	switch name {
	case native.SchemaName:
		return native.Schema{}, nil
	case dcgm.SchemaName:
		return dcgm.Schema{}, nil
	default:
		return nil, fmt.Errorf("unknown schema %q, want one of %s", name, strings.Join(SchemaNames(), ", "))
	}
}

// Detect picks the schema of the data in [start, end] for --schema auto:
// native when gpulens's series exist (preferred, as it attributes shared
// GPUs precisely), otherwise dcgm-exporter. Schema.Name says which was
// picked so the CLI can tell the user. It lives beside the stores because
// it is a question put to one: which exporter's series does it hold.
func Detect(ctx context.Context, src Source, start, end time.Time) (signals.Schema, error) {
	names, err := src.MetricNames(ctx, start, end)
	if err != nil {
		return nil, fmt.Errorf("detecting the metric schema: %w", err)
	}
	candidates := []signals.Schema{native.Schema{}, dcgm.Schema{}}
	for _, s := range candidates {
		for _, n := range s.Identifying() {
			if slices.Contains(names, n) {
				return s, nil
			}
		}
	}
	var looked []string
	for _, s := range candidates {
		looked = append(looked, fmt.Sprintf("%s (%s)", s.Name(), strings.Join(s.Identifying(), ", ")))
	}
	return nil, fmt.Errorf("no GPU metrics in %s between %s and %s: looked for the schemas %s; is the exporter scraped, and is the window right?",
		src.Describe(), start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), strings.Join(looked, " and "))
}
