package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/common/version"
)

// TestFill: a binary built without -ldflags says its module version (go
// install ...@v0.9.0) or "devel" (a checkout), its revision and time; what
// -ldflags set is kept. At 36bc8ff `gpulens version` printed an empty
// version.
func TestFill(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "36bc8ff0"}, {Key: "vcs.time", Value: "2026-12-07T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name                  string
		ldVersion, ldRevision string
		main                  string
		settings              []debug.BuildSetting
		version, revision     string
		date                  string
	}{
		{"go install @version", "", "", "v0.9.0", nil, "0.9.0", "", ""},
		{"a checkout", "", "", "(devel)", vcs, "devel", "36bc8ff0-modified", "2026-12-07T10:00:00Z"},
		{"release ldflags win", "1.0.0", "abc", "(devel)", vcs, "1.0.0", "abc", "2026-12-07T10:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			version.Version, version.Revision, version.BuildDate = c.ldVersion, c.ldRevision, ""
			fill(&debug.BuildInfo{Main: debug.Module{Version: c.main}, Settings: c.settings}, true)
			if version.Version != c.version || version.Revision != c.revision || version.BuildDate != c.date {
				t.Errorf("version %q revision %q date %q, want %q %q %q", version.Version, version.Revision, version.BuildDate, c.version, c.revision, c.date)
			}
		})
	}
}
