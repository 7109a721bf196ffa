package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file that a command's CPU profile is written to,
// for measuring what a command adds to the analysis at fleet scale
// (docs/BENCHMARKS.md, scripts/bench-report.sh). Not a flag: it is for
// whoever profiles gpulens, not for its users.
const cpuProfileEnv = "GPULENS_CPUPROFILE"

// startCPUProfile starts the CPU profile that GPULENS_CPUPROFILE asks
// for; the function it returns stops it. A profile that cannot be written
// is said on stderr and the command runs without it.
func startCPUProfile(stderr io.Writer) func() {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
