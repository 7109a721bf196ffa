package session

import "errors"

// The source errors, wrapped in an InputError for InputSource.
var (
	ErrNoSource   = errors.New("no metrics source: give a Prometheus URL or a data directory")
	ErrTwoSources = errors.New("a Prometheus URL and a data directory are exclusive: give one")
)

// Inputs that an InputError may name: the Config fields a user sets, by
// the names of gpulens's flags for them.
const (
	InputSource  = "source"
	InputDataDir = "data-dir"
	InputURL     = "prometheus-url"
	InputSchema  = "schema"
	// InputDCGMFields is the dcgm-exporter field map's file.
	InputDCGMFields = "dcgm-fields"
	InputConfig     = "config"
	InputPrices     = "prices"
	InputWindow     = "since"
	InputModel      = "model"
	InputReplica    = "max-replicas"
	InputNodeGPUs   = "node-gpus"
	InputContext    = "context"
	InputAllCtx     = "all-contexts"
	// InputMaxReply is the limit on a reply's size.
	InputMaxReply = "query.max-reply-size"
)

// InputError is a mistake in what the user gave: a flag's value or a file.
// Input names it; the error's text names the file and the field.
type InputError struct {
	Input string
	Err   error
}

func (e *InputError) Error() string { return e.Input + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// DataDirError says Config.DataDir is not a usable Prometheus TSDB; Err
// names the directory.
type DataDirError struct{ Err error }

func (e *DataDirError) Error() string { return e.Err.Error() }
func (e *DataDirError) Unwrap() error { return e.Err }
