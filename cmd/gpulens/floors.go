package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagRange bounds one duration or count flag. A value out of range is a
// usage error naming the flag, before anything runs: `--interval 1ns`
// would otherwise run the analysis back to back, `--timeout -1s` fail
// every query and `--retries -3` never try one.
type flagRange struct {
	min, max float64 // max 0: no ceiling
	why      string
}

// flagRanges holds every duration and count flag of every command, by
// name; a flag of the same name means the same thing in each command.
// Durations are in seconds.
var flagRanges = map[string]flagRange{
	// serve
	"interval":                     {min: 1, why: "an analysis takes seconds; a shorter interval runs them back to back"},
	"alertmanager.resend-interval": {min: 0.1},
	"alertmanager.timeout":         {min: 0.1},
	"push.interval":                {min: 0.1},
	"web.shutdown-timeout":         {min: 0},
	// every command that reads metrics
	"timeout":           {min: 1, why: "one query's timeout"},
	"retries":           {min: 0, max: 20},
	"query.max-samples": {min: 0},
	"step":              {min: 1},
	// plan
	"node-gpus":    {min: 0, max: 1024},
	"max-replicas": {min: 0, max: 1024},
}

// checkFlagRanges is the root's PersistentPreRunE: it checks the flags of
// the command about to run against flagRanges.
func checkFlagRanges(c *cobra.Command, _ []string) error {
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		r, ok := flagRanges[f.Name]
		if !ok || err != nil {
			return
		}
		err = r.check(f)
	})
	return err
}

func (r flagRange) check(f *pflag.Flag) error {
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
	if r.why != "" {
		why = " (" + r.why + ")"
	}
	switch {
	case v < r.min:
		return usageError{fmt.Errorf("--%s: %s is below the least accepted, %s%s", f.Name, f.Value, show(r.min), why)}
	case r.max > 0 && v > r.max:
		return usageError{fmt.Errorf("--%s: %s is above the most accepted, %s%s", f.Name, f.Value, show(r.max), why)}
	}
	return nil
}
