package demo

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/reclaim"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/promdur"
)

// reclaimPreview is the report's "Reclaim (dry run)" section for the
// simulated week: what gpulens reclaim would do under its default policy
// had every namespace opted in, which the demo's, unlabelled, have not.
// week is what the session read of the reclaimer's own series (nil: none,
// as in a simulated store), kept beside the preview.
func reclaimPreview(a *pipeline.Analysis, memory map[string]float64, week *report.ReclaimPreview) *report.ReclaimPreview {
	p := reclaim.DefaultPolicy()
	ra, objs, gpus := reclaim.Simulated(a, "")
	ra.MemoryActivity = memory
	out := reclaim.Preview(p, ra, objs, gpus)
	out.Note = fmt.Sprintf("What gpulens reclaim would do at the end of this window under its default policy (idle for %s at most %.0f%% average and %.0f%% p95 GPU utilisation and %.0f%% average memory activity, held %.0f%% of it; announced %s before it acts), "+
		"judged on this window's analysis (gpulens reclaim itself reads the last %s), every namespace treated as opted in: the demo's namespaces carry no %s=%s label, and its simulator stands in for the API server. Nothing was changed.",
		promdur.Format(p.Idle.For), 100*p.Idle.MaxAvgUtilization, 100*p.Idle.MaxP95Utilization, 100*p.Idle.MaxAvgMemoryActivity, 100*p.Idle.MinCoverage, promdur.Format(p.GracePeriod), promdur.Format(p.Idle.For), reclaim.NamespaceLabel, reclaim.NamespaceEnabled)
	out.ReclaimedNote = report.ReclaimDidNotRun
	if week != nil {
		out.Reclaimed, out.ReclaimedNote = week.Reclaimed, week.ReclaimedNote
	}
	return out
}
