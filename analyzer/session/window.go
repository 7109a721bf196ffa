package session

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
)

// MaxSteps is the most steps a window may hold. The PromQL engine's
// subqueries hold every step of the window in memory whether a sample is
// there or not (some 9 KB a step for the demo's 36 GPUs), so a window of a
// million one-second steps takes gigabytes before reading anything. 50,000
// is 34 days at one minute.
const MaxSteps = 50_000

// Inputs for the window's guards, by gpulens's flag names.
const (
	InputStep      = "step"
	InputMaxWindow = "max-window"
)

// fitWindow ends the window at the store's last sample where no end was
// asked (Config.EndAtLastSample) and the source can tell it without
// reading samples (a store on disk), keeping its length; starts it at the
// store's first sample, when the source can tell that, so that memory
// follows the data and not the window asked for; then checks the window
// against Config.MaxWindow and MaxSteps. An end that was asked stays
// where it was: data that stopped coming before it shows as uncovered
// time at the end, and its nodes are judged at their last sample
// (fleet.Result.Stale), not read as empty. The start moves by whole
// steps, so the grid of steps stays where it was.
func (s *Session) fitWindow(ctx context.Context, src source.Source) error {
	w := s.window
	if ls, ok := src.(source.LastSampler); ok && s.cfg.EndAtLastSample {
		last, ok, err := ls.LastSample(ctx, w.End)
		switch {
		case err != nil:
			s.cfg.Logger.Warn("could not find the store's last sample; the window ends as asked", "source", src.Describe(), "err", err)
		case ok:
			// A whole second, so that the window's end reads as one.
			end := last.Truncate(time.Second)
			if end.Before(last) {
				end = end.Add(time.Second)
			}
			if end.Before(w.End) {
				s.cfg.Logger.Info("no --until: the window ends at the store's last sample",
					"asked", w.End.Format(time.RFC3339), "end", end.Format(time.RFC3339))
				w.Start, w.End = end.Add(-w.End.Sub(w.Start)), end
			}
		}
	}
	if fs, ok := src.(source.FirstSampler); ok {
		first, ok, err := fs.FirstSample(ctx, w.Start, w.End, max(w.Step, time.Hour))
		switch {
		case err != nil:
			// The analysis's own queries will say what is wrong with
			// the source, as an error: a warning of the same failure
			// before it would only repeat it. The window stays as asked.
			s.cfg.Logger.Info("could not find the store's first sample; reading the whole window", "source", src.Describe(), "err", err)
		case ok && first.After(w.Start):
			steps := int64(w.End.Sub(first)/w.Step) + 1
			if start := w.End.Add(-time.Duration(steps) * w.Step); start.After(w.Start) {
				s.cfg.Logger.Warn("the store's first sample is after the window's start: the window starts there",
					"asked", w.Start.Format(time.RFC3339), "start", start.Format(time.RFC3339), "first_sample", first.Format(time.RFC3339))
				w.Start = start
			}
		}
	}
	length := w.End.Sub(w.Start)
	if s.cfg.MaxWindow > 0 && length > s.cfg.MaxWindow {
		return &InputError{Input: InputMaxWindow, Err: fmt.Errorf("the window holds %s of data (%s to %s), over the --max-window of %s: give a shorter --since, or a longer --max-window",
			length, w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339), s.cfg.MaxWindow)}
	}
	if steps := length / w.Step; steps > MaxSteps {
		least := (length/MaxSteps + time.Second - 1).Truncate(time.Second)
		return &InputError{Input: InputStep, Err: fmt.Errorf("%s over a window of %s (%s to %s) is %d steps, over the %d a window may hold: give a --step of at least %s, or a shorter --since",
			w.Step, length, w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339), steps, MaxSteps, least)}
	}
	s.window = w
	return nil
}
