// Package flagrange bounds duration and count flags. A value out of range
// is an error naming the flag, before anything runs: `--interval 1ns`
// would otherwise run an analysis back to back, `--timeout -1s` fail every
// query and `--retries -3` never try one.
package flagrange

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Range bounds one duration or count flag; durations are in seconds.
type Range struct {
	Min, Max float64 // Max 0: no ceiling
	Why      string
}

// Error is a flag out of its range; its message names the flag.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Check checks the flags of fs that ranges names, by flag name, and
// returns the first out of range as *Error.
func Check(fs *pflag.FlagSet, ranges map[string]Range) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		r, ok := ranges[f.Name]
		if !ok || err != nil {
			return
		}
		err = r.check(f)
	})
	return err
}

func (r Range) check(f *pflag.Flag) error {
	var v float64
	show := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch f.Value.Type() {
	case "duration":
		d, err := time.ParseDuration(f.Value.String())
		if err != nil {
			return nil // pflag refused it already
		}
		v = d.Seconds()
		show = func(x float64) string { return time.Duration(x * float64(time.Second)).String() }
	case "int", "int64", "uint", "float64":
		x, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return nil
		}
		v = x
	default:
		return nil
	}
	why := ""
	if r.Why != "" {
		why = " (" + r.Why + ")"
	}
	switch {
	case v < r.Min:
		return &Error{fmt.Errorf("--%s: %s is below the least accepted, %s%s", f.Name, f.Value, show(r.Min), why)}
	case r.Max > 0 && v > r.Max:
		return &Error{fmt.Errorf("--%s: %s is above the most accepted, %s%s", f.Name, f.Value, show(r.Max), why)}
	}
	return nil
}
