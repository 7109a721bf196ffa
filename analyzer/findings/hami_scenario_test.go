package findings

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/hami"
	"github.com/gpulens/gpulens/signals/native"
)

// TestHAMiScenario: testdata/hami/planted.yaml's truths, found with no
// false alarm on the healthy pair, in both HAMi metric eras, with
// gpulens-exporter or dcgm-exporter beside HAMi. Expected figures by hand
// from the scenario: an A100 80GB of 81920 MiB at A100-80GB's $3.43/h.
//   - embed-api: held max(0.30, 40/80) = 0.5; new gpumem ceil(6 GiB ×
//     1.25) = 8 GiB, share max(0.30, 8/80) = 0.3; saving 0.2 × 3.43 ×
//     730 = $500.78.
//   - ocr-svc: held max(0.20, 16/80) = 0.2; new ceil(15 × 1.25) = 19 GiB,
//     share 19/80 = 0.2375; saving −0.0375 × 3.43 × 730 = −$93.90.
//   - GPU 2: gpumem 90 of 80 GiB, gpucores 120 of 100; train-x (held
//     max(0.6, 50/80) = 0.625) scaled to floor(50 × 8/9) = 44 GiB and
//     60/1.2 = 50 cores, share max(0.5, 44/80) = 0.55; saving 0.075 ×
//     3.43 × 730 = $187.79.
func TestHAMiScenario(t *testing.T) {
	type want struct {
		kind      vocab.Kind
		pod       string
		sev       Severity
		saving    float64
		gpumemMiB int64
	}
	wants := []want{
		{KindHAMiGPUMemOversized, "embed-api", Warning, 500.78, 8192},
		{KindHAMiGPUMemOOMRisk, "ocr-svc", Critical, -93.90, 19456},
		{KindHAMiOvercommit, "train-x", Warning, 187.79, 45056},
	}
	for _, era := range []hami.Era{hami.EraCurrent, hami.EraLegacy} {
		for _, schema := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
			t.Run(era.String()+"/"+schema.Name(), func(t *testing.T) {
				sc, err := sim.Load("testdata/hami/planted.yaml")
				if err != nil {
					t.Fatal(err)
				}
				sc.HAMi.Metrics = era.String()
				ctx := context.Background()
				db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var n atomic.Int64
				newSink := func(node string) fleet.Sink {
					var sink fleet.Sink = fleet.NewTSDBSink(ctx, db, &n)
					hamiOut := sink
					if schema.Name() == dcgm.SchemaName {
						sink = fleet.NewDCGMSink(sink)
					}
					return fleet.NewHAMiSink(sink, hamiOut, sc, node)
				}
				if err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: scenarioStart, End: scenarioEnd, Step: scenarioStep}, newSink); err != nil {
					t.Fatal(err)
				}
				tenants, err := query.ReadHAMi(ctx, db, query.Scope{}, schema, scenarioStart, scenarioEnd, scenarioStep)
				if err != nil {
					t.Fatal(err)
				}
				if len(tenants) != 6 {
					t.Fatalf("%d tenants, want 6: %+v", len(tenants), tenants)
				}
				for _, tn := range tenants {
					if tn.DeviceBytes != 80<<30 || tn.Model == "" || tn.Coverage < 0.99 {
						t.Errorf("%s: device %v, model %q, coverage %v", tn.Pod, tn.DeviceBytes, tn.Model, tn.Coverage)
					}
				}
				got := DetectHAMi(tenants, price.DefaultPrices())
				for _, f := range got {
					t.Logf("%s %s %s %v: %s", f.Kind, f.Pod, f.Severity, f.MonthlySavingsUSD, f.Summary)
					if f.Namespace == "chat" {
						t.Errorf("false alarm on the healthy pair: %s", f.Summary)
					}
				}
				if len(got) != len(wants) {
					t.Errorf("%d findings, want %d", len(got), len(wants))
				}
				for _, w := range wants {
					found := false
					for _, f := range got {
						if f.Kind != w.kind || f.Pod != w.pod {
							continue
						}
						found = true
						if f.Severity != w.sev || f.MonthlySavingsUSD != w.saving || !f.CostKnown {
							t.Errorf("%s %s: severity %s saving %v, want %s %v", w.kind, w.pod, f.Severity, f.MonthlySavingsUSD, w.sev, w.saving)
						}
						if f.Recommendation == nil || f.Recommendation.Patch == nil || !containsAll(f.Recommendation.Patch.YAML, string(vocab.ResourceHAMiMemory), itoa(w.gpumemMiB)) {
							t.Errorf("%s %s: patch %+v, want gpumem %d", w.kind, w.pod, f.Recommendation, w.gpumemMiB)
						}
					}
					if !found {
						t.Errorf("missing %s on %s", w.kind, w.pod)
					}
				}
			})
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
