package reclaim

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// Family is one of the reclaimer's families, with its HELP and TYPE.
type Family struct{ Name, Type, Help string }

// Families lists every family the reclaimer exposes; a test keeps
// docs/METRICS.md in step.
var Families = []Family{
	{vocab.SeriesReclaimActions, "counter", "Actions taken on workloads, by action (announce, cancel, reclaim, mark-resumed) and result (success, failure, dry-run)."},
	{vocab.SeriesReclaimPending, "gauge", "Reclaims announced and not yet done nor cancelled."},
	{vocab.SeriesReclaimReclaimed, "gauge", "Workloads reclaimed by gpulens and not running again."},
	{vocab.SeriesReclaimGPUHours, "counter", "GPU-hours released by reclaimed workloads while they stayed reclaimed."},
	{vocab.SeriesReclaimUSD, "counter", "What the GPU-hours released would have cost, in USD, at the prices of the analysis that reclaimed them."},
	{vocab.SeriesReclaimCycles, "counter", "Reclaim cycles, by result: success, partial (an opted-in namespace could not be read; its workloads were left alone) or failure (the opted-in namespaces could not be listed)."},
	{vocab.SeriesReclaimDecisions, "gauge", "Workloads of the last cycle by decision: announce, pending, reclaim, cancel, skip, mark-resumed, notify-only."},
}

// Metrics are the reclaimer's series.
type Metrics struct {
	Set                                *metrics.Set
	gpuHours, usd                      *metrics.FloatCounter
	pending, reclaimed                 *metrics.Gauge
	decisions                          map[Action]*metrics.Gauge
	okCycles, badCycles, partialCycles *metrics.Counter
}

// NewMetrics registers them in a new set.
func NewMetrics() *Metrics {
	s := metrics.NewSet()
	m := &Metrics{Set: s, gpuHours: s.NewFloatCounter(vocab.SeriesReclaimGPUHours), usd: s.NewFloatCounter(vocab.SeriesReclaimUSD),
		pending: s.NewGauge(vocab.SeriesReclaimPending, nil), reclaimed: s.NewGauge(vocab.SeriesReclaimReclaimed, nil), decisions: map[Action]*metrics.Gauge{},
		okCycles: s.NewCounter(metricname.Of(vocab.SeriesReclaimCycles, "result", "success")), badCycles: s.NewCounter(metricname.Of(vocab.SeriesReclaimCycles, "result", "failure")),
		partialCycles: s.NewCounter(metricname.Of(vocab.SeriesReclaimCycles, "result", "partial"))}
	// The reclaims' counters exist from the start, at 0: a counter first
	// exposed at 1 reads, to increase(), as no reclaim at all
	// (https://prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics).
	for _, result := range []string{signals.ReclaimResultSuccess, "failure", signals.ReclaimResultDryRun} {
		s.GetOrCreateCounter(metricname.Of(vocab.SeriesReclaimActions, "action", string(Reclaim), "result", result))
	}
	for _, a := range []Action{Announce, Wait, Reclaim, Cancel, Skip, MarkResumed, NotifyOnly} {
		m.decisions[a] = s.NewGauge(metricname.Of(vocab.SeriesReclaimDecisions, "decision", string(a)), nil)
	}
	return m
}

func (m *Metrics) action(a Action, result string) {
	m.Set.GetOrCreateCounter(metricname.Of(vocab.SeriesReclaimActions, "action", string(a), "result", result)).Inc()
}

// Write writes the series with HELP and TYPE before each family.
func (m *Metrics) Write(w io.Writer) error {
	var buf bytes.Buffer
	m.Set.WritePrometheus(&buf)
	help := map[string]Family{}
	for _, f := range Families {
		help[f.Name] = f
	}
	bw := bufio.NewWriter(w)
	prev := ""
	for line := range strings.Lines(buf.String()) {
		fam := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			fam = line[:i]
		}
		if f, ok := help[fam]; ok && fam != prev {
			bw.WriteString("# HELP " + f.Name + " " + f.Help + "\n# TYPE " + f.Name + " " + f.Type + "\n")
		}
		prev = fam
		bw.WriteString(line)
	}
	return bw.Flush()
}
