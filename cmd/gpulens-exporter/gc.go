package main

import (
	"os"
	"runtime/debug"
)

// defaultGOGC is the garbage collector's target when GOGC is not set: the
// heap may grow 50% over what the last collection found live, not Go's
// default 100%. The exporter's live heap is a few MB and steady (the series
// cache, the last exposition, the pod index); what it allocates per
// collection is garbage by the next one. At 100% that garbage doubled the
// heap in use and was most of the exporter's anonymous memory; at 50% the
// heap in use is about a quarter smaller, for a few tenths of a percent of
// a core at --collect.interval=1s (docs/BENCHMARKS.md, "Memory and CPU of
// the running exporter"). GOGC (and GOMEMLIMIT) in the environment still
// take precedence, as for any Go program.
const defaultGOGC = 50

// tuneGC applies defaultGOGC unless the environment sets GOGC, and returns
// the target in effect.
func tuneGC() int {
	if os.Getenv("GOGC") != "" {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(defaultGOGC)
	return defaultGOGC
}
