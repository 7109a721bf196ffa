// Package promdur writes and reads durations as PromQL does. Writing is
// the one piece of PromQL syntax the fleet model needs (fleet.Window's
// subquery range), reading what signals/ needs of a step; both are kept
// to the standard library so that neither links
// github.com/prometheus/common, whose model package alone brings in
// protobuf.
package promdur

import (
	"strconv"
	"time"
)

// Format writes d as PromQL reads it: the largest units that are exact
// ("1w", "90s"), or milliseconds where d is not whole seconds (a range one
// millisecond short of a step, that Prometheus 2 and 3 read alike). Whole
// seconds are written as github.com/prometheus/common/model.Duration
// writes them (TestFormatIsModelDuration holds the two equal).
func Format(d time.Duration) string {
	if d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	ms := d.Milliseconds()
	if ms == 0 {
		return "0s"
	}
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	out := ""
	unit := func(name string, mult int64, exact bool) {
		if exact && ms%mult != 0 {
			return
		}
		if v := ms / mult; v > 0 {
			out += strconv.FormatInt(v, 10) + name
			ms -= v * mult
		}
	}
	// Years and weeks only where exact, as model.Duration does: 90d reads
	// better than 12w6d.
	unit("y", 1000*60*60*24*365, true)
	unit("w", 1000*60*60*24*7, true)
	unit("d", 1000*60*60*24, false)
	unit("h", 1000*60*60, false)
	unit("m", 1000*60, false)
	unit("s", 1000, false)
	unit("ms", 1, false)
	return sign + out
}
