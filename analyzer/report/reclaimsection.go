package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// reclaimSection is "Reclaim (dry run)" for the table, Markdown and HTML
// writers alike: the preview's verdicts, its totals, and what the
// reclaimer did in the window.
func (r *Report) reclaimSection() section {
	p := r.ReclaimPreview
	var intro []string
	if p.Note != "" {
		intro = append(intro, p.Note)
	}
	if p.Reclaim != nil {
		intro = append(intro, fmt.Sprintf("Would reclaim %s, %s a month.", r.reclaimCount(*p.Reclaim, "workload"), r.reclaimMoney(p.Reclaim.MonthlyCost, p.Reclaim.CostKnown)))
	}
	if p.NotifyOnly != nil && p.NotifyOnly.Workloads > 0 {
		intro = append(intro, fmt.Sprintf("Notify only (never reclaimed, their owners told): %s, %s a month.", r.reclaimCount(*p.NotifyOnly, "bare pod"), r.reclaimMoney(p.NotifyOnly.MonthlyCost, p.NotifyOnly.CostKnown)))
	}
	intro = append(intro, r.reclaimedLine())
	s := section{ID: "reclaim", Title: "Reclaim (dry run)", Intro: strings.Join(intro, " "),
		Header: r.withCluster("Cluster", []string{"Namespace", "Workload", "Action", "GPUs", "Frees a month", "Reason"}),
		Empty:  "No preview: the reclaimer's decisions are previewed by gpulens demo; gpulens reclaim logs its own."}
	for _, w := range p.Workloads {
		s.Rows = append(s.Rows, r.withCluster(clusterCell(w.Cluster), []string{w.Namespace, w.Kind + "/" + w.Name, w.Action,
			strconv.Itoa(w.GPUs), r.reclaimMoney(w.MonthlyCost, w.CostKnown), w.Reason}))
	}
	return s
}

// reclaimedLine says what the reclaimer did in the window, or that it did
// not run: absent series are never a zero.
func (r *Report) reclaimedLine() string {
	p := r.ReclaimPreview
	when := "in this window"
	if math.Abs(r.Window.Hours-7*24) < 1 {
		when = "this week"
	}
	rec := p.Reclaimed
	if rec == nil {
		return cmp.Or(p.ReclaimedNote, ReclaimDidNotRun)
	}
	s := fmt.Sprintf("Reclaimed %s: %d workloads, %s GPU-hours, $%s.", when, rec.Workloads, thousands(rec.GPUHours, 1), thousands(rec.USD, 0))
	if rec.DryRunWorkloads > 0 {
		s += fmt.Sprintf(" Run dry, it would have reclaimed %d more.", rec.DryRunWorkloads)
	}
	return s
}

func (r *Report) reclaimCount(t ReclaimTotal, what string) string {
	return fmt.Sprintf("%d %s on %d %s", t.Workloads, plural(t.Workloads, what, what+"s"), t.GPUs, plural(t.GPUs, "GPU or MIG slice", "GPUs or MIG slices"))
}

// reclaimMoney is a figure whose price may be missing: "unknown", never
// $0.
func (r *Report) reclaimMoney(v float64, known bool) string {
	if !known || !r.CostKnown {
		return "unknown"
	}
	return r.money(v)
}
