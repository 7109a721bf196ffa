package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/vocab"
)

var update = flag.Bool("update", false, "rewrite testdata/reclaim-preview.golden.json")

const previewGolden = "testdata/reclaim-preview.golden.json"

// TestReclaimPreviewOfTheDemoWeek runs the default scenario's week (at a
// 5-minute step, without the previous window: the preview reads only
// this one) and holds the report's "Reclaim (dry run)" section to what
// the scenario (exporter/sim/testdata/default.yaml) and the default
// policy (24h, at most 2% average and 5% p95, 95% held) say by hand:
//   - its notebooks are Kubeflow Notebooks, a StatefulSet of one pod
//     NAME-0 each (the scenario names them alice-jupyter-0...), but for
//     peggy-jupyter, a bare pod: the idle StatefulSets on whole GPUs are
//     reclaimed and free a whole GPU's price each (grace-jupyter an
//     H200's, alice-jupyter an H100's, gpu-h100-01 GPU 3), the bare pod
//     on a whole H100 (the DRA node's GPU 2) is notify-only, never
//     reclaimed;
//   - the serving StatefulSets (chat-small-0..2 at 60-70%, ranker-l4-0..3
//     at 45-70%) and the training ones are skipped as in use;
//   - no reclaimer ran: the section says so, no zero.
//
// The whole section is also a golden (-update rewrites it).
func TestReclaimPreviewOfTheDemoWeek(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo week")
	}
	f := Flags{Duration: "7d", Step: 5 * time.Minute, End: "2026-12-06T00:00:00Z", Quiet: true}
	o, err := f.Options(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	p := r.ReclaimPreview
	if p == nil {
		t.Fatal("no reclaim preview in the demo's report")
	}
	rows := map[string]report.ReclaimWorkload{}
	for _, w := range p.Workloads {
		rows[w.Namespace+"/"+w.Kind+"/"+w.Name] = w
	}
	prices := price.DefaultPrices()
	price := func(model string) float64 {
		v, err := prices.PerHour(model)
		if err != nil {
			t.Fatal(err)
		}
		return v * vocab.HoursPerMonth
	}
	for _, c := range []struct {
		ref    string
		action string
		cost   float64
	}{
		{"research-notebooks/StatefulSet/grace-jupyter", report.ReclaimActionReclaim, price("H200-141GB")},
		{"research-notebooks/StatefulSet/alice-jupyter", report.ReclaimActionReclaim, price("H100-80GB")},
		{"research-notebooks/Pod/peggy-jupyter", report.ReclaimActionNotifyOnly, price("H100-80GB")},
	} {
		w, ok := rows[c.ref]
		if !ok || w.Action != c.action || w.GPUs != 1 || !w.CostKnown || abs(w.MonthlyCost-c.cost) > 0.01 {
			t.Errorf("%s: %+v, want %s on 1 GPU freeing $%.2f a month", c.ref, w, c.action, c.cost)
		}
	}
	for _, ref := range []string{"team-nlp/StatefulSet/chat-small", "team-recsys/StatefulSet/ranker-l4", "team-nlp/StatefulSet/llm-pretrain"} {
		if w, ok := rows[ref]; !ok || w.Action != report.ReclaimActionSkip || !strings.HasPrefix(w.Reason, "in use") {
			t.Errorf("%s: %+v, want skipped as in use", ref, w)
		}
	}
	for _, w := range p.Workloads {
		if (w.Action == report.ReclaimActionReclaim && w.Kind == "Pod") || (w.Action == report.ReclaimActionNotifyOnly && w.Kind != "Pod") {
			t.Errorf("%+v: a bare pod is notify-only, a controller's workload is reclaimed", w)
		}
	}
	if p.Reclaim.Workloads < 2 || p.Reclaimed != nil {
		t.Errorf("reclaim total %+v, reclaimed %+v: want at least grace's and alice's notebooks, and no record", p.Reclaim, p.Reclaimed)
	}

	var buf bytes.Buffer
	if err := report.Render(&buf, r, "json"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, doc["reclaim_preview"], "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	if *update {
		if err := os.WriteFile(previewGolden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(previewGolden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("reclaim_preview differs from %s (-update rewrites it):\n%s", previewGolden, got.String())
	}
	for _, format := range []string{"table", "markdown", "html", "yaml"} {
		buf.Reset()
		if err := report.Render(&buf, r, format); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"every namespace treated as opted in", "did not run"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
	}
}

func abs(v float64) float64 { return max(v, -v) }
