// Package buildinfo fills prometheus/common/version, which gpulens's
// commands and the exporter's build_info series print, from what the Go
// toolchain stamps into every binary, so that a build without the
// release's -ldflags still says what it is.
//
// The Makefile sets version.Version, Revision, Branch and BuildDate with
// -ldflags from git (GOFLAGS=-buildvcs=false, which some CI machines set,
// keeps the toolchain from stamping the revision); `go install
// github.com/gpulens/gpulens/cmd/gpulens@v1.2.3` stamps the module
// version, and a plain `go build` in a checkout the vcs revision and time.
package buildinfo

import (
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

func init() { fill(debug.ReadBuildInfo()) }

// fill sets what -ldflags left empty from info.
func fill(info *debug.BuildInfo, ok bool) {
	if !ok || info == nil {
		return
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if version.Version == "" {
		// "(devel)" is what the toolchain says of a module built
		// from its own checkout; it is not a version.
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version.Version = strings.TrimPrefix(v, "v")
		} else {
			version.Version = "devel"
		}
	}
	if version.Revision == "" {
		if rev := settings["vcs.revision"]; rev != "" {
			if settings["vcs.modified"] == "true" {
				rev += "-modified"
			}
			version.Revision = rev
		}
	}
	if version.BuildDate == "" {
		version.BuildDate = settings["vcs.time"]
	}
}
