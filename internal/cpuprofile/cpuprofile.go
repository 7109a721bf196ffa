// Package cpuprofile writes a command's CPU profile where an environment
// variable asks for one: for whoever measures what a command adds at fleet
// scale (docs/BENCHMARKS.md, scripts/bench-report.sh), not for its users,
// so it is no flag.
package cpuprofile

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// Env names the file that the profile is written to.
const Env = "GPULENS_CPUPROFILE"

// Start starts the CPU profile that $GPULENS_CPUPROFILE asks for; the
// function it returns stops it. A profile that cannot be written is said
// on stderr and the command runs without it.
func Start(getenv func(string) string, stderr io.Writer) func() {
	path := getenv(Env)
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
		fmt.Fprintf(stderr, "%s: %v\n", Env, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
