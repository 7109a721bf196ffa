package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
)

// Detect picks the schema of the data in [start, end] for --schema auto:
// native when gpulens's series exist (preferred, as it attributes shared
// GPUs precisely), otherwise dcgm-exporter. Schema.Name says which was
// picked so the CLI can tell the user.
func Detect(ctx context.Context, src source.Source, start, end time.Time) (Schema, error) {
	names, err := src.MetricNames(ctx, start, end)
	if err != nil {
		return nil, fmt.Errorf("detecting the metric schema: %w", err)
	}
	candidates := []Schema{Native{}, DCGM{}}
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
