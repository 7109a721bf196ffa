package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
)

// Failure is what kind of failure a session's error is: what a script
// running gpulens tells apart by its exit code (the CLI maps each to one).
type Failure int

const (
	// Failed is any other failure.
	Failed Failure = iota
	// BadInput: a flag's value or an input file is wrong.
	BadInput
	// Unreachable: the metrics source cannot be queried.
	Unreachable
	// NoData: the window holds no GPU series of the schema.
	NoData
	// BadData: the data directory is not a TSDB or is unusable, or the
	// query budget cannot hold the window.
	BadData
	// NoCluster: the answer is in the API server and no cluster could be
	// read.
	NoCluster
)

// Classify says what kind of failure err, from Open or a session's
// method, is, and the error to show for it: a bad input's names the flag
// that sets it (gpulens's flags are the Input* names). dataDir says the
// session read a data directory, whose engine's errors are the data's.
func Classify(err error, dataDir bool) (Failure, error) {
	var (
		ie *InputError
		de *DataDirError
		re *source.RemoteError
	)
	switch {
	case errors.As(err, &ie) && errors.Is(err, ErrNoSource):
		return BadInput, errors.New("no metrics source: give --prometheus-url URL or --data-dir DIR")
	case errors.As(err, &ie) && errors.Is(err, ErrTwoSources):
		return BadInput, errors.New("--prometheus-url and --data-dir are exclusive: give one")
	case errors.As(err, &ie):
		return BadInput, fmt.Errorf("--%s: %w", ie.Input, ie.Err)
	case errors.As(err, &de):
		return BadData, fmt.Errorf("--data-dir: %w", de.Err)
	case errors.Is(err, query.ErrBudget):
		return BadData, err
	case errors.Is(err, pipeline.ErrNoData), errors.Is(err, plan.ErrNoData), errors.Is(err, plan.ErrNoPool):
		return NoData, err
	case errors.Is(err, plan.ErrReplay):
		return Failed, fmt.Errorf("%w; no plan is printed", err)
	case errors.As(err, &re):
		return Unreachable, err
	case errors.Is(err, ErrNoCluster):
		return NoCluster, err
	case dataDir && strings.Contains(err.Error(), "too many samples"):
		// The engine's words do not say which knob raises the limit.
		return BadData, fmt.Errorf("%w (raise --query.max-samples, or shorten --since)", err)
	case dataDir:
		return BadData, err
	}
	return Failed, err
}
