package demo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/exporter/sim"
)

// Flags are `gpulens demo`'s flags as given; Options checks them.
type Flags struct {
	Scenario string // --scenario; "" is sim.Default
	End      string // --end, RFC 3339; "" is now
	Duration string // --duration
	Step     time.Duration
	// PreviousStep is --previous-step: the scrape interval of the window
	// before the one simulated (0: none).
	PreviousStep time.Duration
	DataDir      string // --data-dir
	OpenMetrics  string // --export-openmetrics
	Quiet        bool
}

// FlagError is a malformed flag or scenario; its message names the flag
// or the scenario's file: the CLI's usage error.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

func flagErr(format string, args ...any) error { return &FlagError{fmt.Errorf(format, args...)} }

// Options checks the flags and makes the demo's Options over the window
// ending at now (or End), before anything is simulated.
func (f Flags) Options(now time.Time) (Options, error) {
	dur, err := session.ParseWindow(f.Duration)
	if err != nil {
		return Options{}, flagErr("--duration: %w", err)
	}
	if f.Step <= 0 || f.Step > time.Hour {
		return Options{}, flagErr("--step: %s is outside (0, 1h]", f.Step)
	}
	if f.PreviousStep < 0 || f.PreviousStep > time.Hour {
		return Options{}, flagErr("--previous-step: %s is outside [0, 1h] (0: no previous window)", f.PreviousStep)
	}
	end := now.UTC().Truncate(f.Step)
	if f.End != "" {
		if end, err = time.Parse(time.RFC3339, f.End); err != nil {
			return Options{}, flagErr("--end: %q is not an RFC 3339 time such as 2026-01-05T14:00:00Z", f.End)
		}
	}
	sc := sim.Default()
	if f.Scenario != "" {
		if sc, err = sim.Load(f.Scenario); err != nil {
			return Options{}, &FlagError{err}
		}
	}
	if f.DataDir != "" {
		// A second week written over the first would interleave two
		// simulations in one store; refuse rather than mix or delete.
		if ents, err := os.ReadDir(f.DataDir); err == nil && len(ents) > 0 {
			return Options{}, flagErr("--data-dir: %s is not empty (a TSDB from an earlier run?); remove it or name a new directory", f.DataDir)
		}
	}
	return Options{Scenario: sc, Start: end.Add(-dur), End: end, Step: f.Step, PreviousStep: f.PreviousStep, Length: f.Duration,
		DataDir: f.DataDir, OpenMetrics: f.OpenMetrics, Quiet: f.Quiet}, nil
}

// Help is the demo's help text with {nodes} and {gpus} replaced by the
// default scenario's size, counted from the scenario so that the text
// cannot drift from it.
func Help(text string) string {
	sc := sim.Default()
	gpus := 0
	for _, n := range sc.Nodes {
		gpus += n.GPUs
	}
	return strings.NewReplacer("{nodes}", strconv.Itoa(len(sc.Nodes)), "{gpus}", strconv.Itoa(gpus)).Replace(text)
}
