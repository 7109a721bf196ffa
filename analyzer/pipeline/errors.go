package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNoData is matched (errors.Is) by a NoDataError: the window holds no
// GPU series, so there is nothing to report on. The CLI maps it to its own
// exit code, as distinct from a source that cannot be reached.
var ErrNoData = errors.New("no GPU data in the window")

// NoDataError says what was looked for, so a user can tell a wrong window
// from a wrong schema from an exporter that is not scraped.
type NoDataError struct {
	Source     string
	Start, End time.Time
	// Schemas are the schemas tried and Metrics the metric names whose
	// presence would have identified each, in the same order.
	Schemas []string
	Metrics [][]string
	// Detail is the schema detection's own explanation, when it failed.
	Detail string
	// Unread, where set, is the whole message: the store holds
	// dcgm-exporter's series under names gpulens does not read
	// (source.UnreadNamesError), which is not a scrape problem.
	Unread string
}

func (e *NoDataError) Error() string {
	if e.Unread != "" {
		return e.Unread
	}
	looked := make([]string, len(e.Schemas))
	for i, s := range e.Schemas {
		looked[i] = fmt.Sprintf("%s schema (%s)", s, strings.Join(e.Metrics[i], ", "))
	}
	return fmt.Sprintf("no GPU series in %s between %s and %s: looked for the %s; is the exporter scraped, and is the window right?",
		e.Source, e.Start.UTC().Format(time.RFC3339), e.End.UTC().Format(time.RFC3339), strings.Join(looked, " and the "))
}

// Is makes errors.Is(err, ErrNoData) true.
func (e *NoDataError) Is(target error) bool { return target == ErrNoData }
