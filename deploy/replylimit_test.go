package deploy

import (
	"strings"
	"testing"

	"github.com/alecthomas/units"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestAnalyzerReplyLimitFitsItsMemory guards issue 52 in the chart: serve
// and the weekly report run under a 512Mi memory limit, and gpulens's own
// --query.max-reply-size default (512MiB) would let one reply fill it, so
// an oversized reply would OOM-kill the pod (serve: a restart loop) instead
// of failing the analysis. Each analyzer container passes a reply limit
// under a third of its memory limit: reading a reply (segments, then their
// joined copy) and decoding it take up to about three times its size, an
// estimate, not measured here. On main at 36bc8ff no container passed one.
func TestAnalyzerReplyLimitFitsItsMemory(t *testing.T) {
	docs := loadDocs(t, "manifests/gpulens.yaml")
	for _, c := range []struct {
		kind, name string
		container  []any
	}{
		{"Deployment", "gpulens-analyzer", []any{"spec", "template", "spec", "containers", 0}},
		{"CronJob", "gpulens-analyzer-weekly-report", []any{"spec", "jobTemplate", "spec", "template", "spec", "containers", 0}},
	} {
		d := byKindName(docs, c.kind, c.name)
		if d == nil {
			t.Fatalf("no %s %s", c.kind, c.name)
		}
		var size string
		for _, a := range strs(d.get(append(c.container, "args")...)) {
			if v, ok := strings.CutPrefix(a, "--query.max-reply-size="); ok {
				size = v
			}
		}
		limit, err := units.ParseBase2Bytes(size)
		if err != nil || limit <= 0 {
			t.Errorf("%s %s: --query.max-reply-size %q: want a size (%v)", c.kind, c.name, size, err)
			continue
		}
		mem, err := resource.ParseQuantity(d.str(append(c.container, "resources", "limits", "memory")...))
		if err != nil {
			t.Errorf("%s %s: memory limit: %v", c.kind, c.name, err)
			continue
		}
		if 3*int64(limit) > mem.Value() {
			t.Errorf("%s %s: --query.max-reply-size=%s is over a third of its %s memory limit", c.kind, c.name, size, mem.String())
		}
	}
}
