package demo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFlagsOptions: the window ends at now (on a step) or --end; each
// malformed flag is a *FlagError naming it, before anything is simulated.
func TestFlagsOptions(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 34, 56, 0, time.UTC)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Flags{Duration: "7d", Step: time.Minute}
	with := func(f func(*Flags)) Flags { g := ok; f(&g); return g }
	for _, c := range []struct {
		name       string
		flags      Flags
		start, end time.Time
		err        string
	}{
		{name: "default", flags: ok, start: time.Date(2026, 2, 23, 12, 34, 0, 0, time.UTC), end: time.Date(2026, 3, 2, 12, 34, 0, 0, time.UTC)},
		{name: "end", flags: with(func(f *Flags) { f.End, f.Duration = "2026-01-05T14:00:00Z", "36h" }),
			start: time.Date(2026, 1, 4, 2, 0, 0, 0, time.UTC), end: time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)},
		{name: "empty data dir", flags: with(func(f *Flags) { f.DataDir = t.TempDir() }),
			start: time.Date(2026, 2, 23, 12, 34, 0, 0, time.UTC), end: time.Date(2026, 3, 2, 12, 34, 0, 0, time.UTC)},
		{name: "bad duration", flags: with(func(f *Flags) { f.Duration = "week" }), err: `--duration: "week" is not a duration`},
		{name: "step zero", flags: with(func(f *Flags) { f.Step = 0 }), err: "--step: 0s is outside (0, 1h]"},
		{name: "step over an hour", flags: with(func(f *Flags) { f.Step = 2 * time.Hour }), err: "--step: 2h0m0s is outside (0, 1h]"},
		{name: "bad end", flags: with(func(f *Flags) { f.End = "monday" }), err: `--end: "monday" is not an RFC 3339 time`},
		{name: "missing scenario", flags: with(func(f *Flags) { f.Scenario = filepath.Join(full, "nope.yaml") }), err: "nope.yaml"},
		{name: "data dir not empty", flags: with(func(f *Flags) { f.DataDir = full }), err: "--data-dir: " + full + " is not empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := c.flags.Options(now)
			if c.err != "" {
				var fe *FlagError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want a *FlagError containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !o.Start.Equal(c.start) || !o.End.Equal(c.end) || o.Scenario == nil {
				t.Errorf("window %s–%s (scenario %v), want %s–%s", o.Start, o.End, o.Scenario != nil, c.start, c.end)
			}
		})
	}
}
