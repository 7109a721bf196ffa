package findings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
)

// TestSharedWithoutProcessData runs the time-sliced scenarios through
// gpulens-exporter without hostPID (the chart's default), which serves
// allocation series only on shared GPUs: no tenant has utilization or
// memory of its own. The verdicts that need them fall back to the device's
// figures at half confidence and say why, rather than vanish or read the
// missing figures as zero.
func TestSharedWithoutProcessData(t *testing.T) {
	blind := mode{schema: native.Schema{}, allocationOnly: true}
	load := func(name string) *sim.Scenario {
		s, err := sim.Load(filepath.Join("testdata", "scenarios", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("training", func(t *testing.T) {
		t.Parallel()
		s := load(string(vocab.KindTrainingOnShared))
		res := analyzeScenario(t, s, blind, scenarioStart, scenarioEnd, scenarioStep)
		for _, a := range res.Allocations {
			if a.UtilizationSteps > 0 || a.MemorySteps > 0 {
				t.Fatalf("%s has per-tenant figures without hostPID: %d utilization, %d memory steps", a.Pod, a.UtilizationSteps, a.MemorySteps)
			}
		}
		r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
		// The trainer's 95% plateau alone puts the device above
		// training.min_load; which tenant runs it is unknowable, so none
		// is accused: the GPU's load is said of the GPU, at info, with
		// both tenants as candidates. With hostPID only the trainer is
		// flagged (TestScenarios).
		for _, pod := range []string{"recsys-train-small", "ab-test-svc"} {
			if f := match(r, want{vocab.KindTrainingOnShared, pod, 0, ""}, uuidsOf(s)); f != nil {
				t.Errorf("%s accused without its own figures: %s", pod, f.Summary)
			}
			if f := match(r, want{vocab.KindInsufficientData, pod, 0, Info}, uuidsOf(s)); f == nil || f.Evidence["tenant_utilization_unknown"] != 1 {
				t.Errorf("%s: want its use said unknown:\n%s", pod, summaries(r))
			}
		}
		f := match(r, want{vocab.KindTrainingOnShared, "", 0, Info}, uuidsOf(s))
		if f == nil {
			t.Fatalf("no info on the GPU's training-like load:\n%s", summaries(r))
		}
		if f.Pod != "" || f.Workload != "" || f.Recommendation != nil || f.Confidence > 0.5 || f.Evidence["tenant_utilization_unknown"] != 1 {
			t.Errorf("the GPU's finding accuses a tenant: pod %q workload %q recommendation %+v confidence %v", f.Pod, f.Workload, f.Recommendation, f.Confidence)
		}
		for _, s := range []string{"without hostPID", "unknowable", "team-recsys/recsys-train-small", "team-recsys/ab-test-svc"} {
			if !strings.Contains(f.Summary, s) {
				t.Errorf("summary %q does not say %q", f.Summary, s)
			}
		}
		if l := f.Evidence["gpu_load"]; l < criteria.DefaultConfig().Training.MinLoad || l > 1 {
			t.Errorf("device load %v", l)
		}
	})

	t.Run("light tenants", func(t *testing.T) {
		t.Parallel()
		// The OOM scenario's tenants load the GPU lightly: no verdict on
		// their use, and the reason in the summary.
		s := load(string(vocab.KindTimesliceOOMRisk))
		r := Detect(analyzeScenario(t, s, blind, scenarioStart, scenarioEnd, scenarioStep), nil, criteria.DefaultConfig(), price.DefaultPrices())
		for _, pod := range []string{"summarizer", "leaky-worker"} {
			f := match(r, want{vocab.KindInsufficientData, pod, 0, Info}, uuidsOf(s))
			if f == nil || f.Evidence["tenant_utilization_unknown"] != 1 || !strings.Contains(f.Summary, "without hostPID") {
				t.Errorf("%s: %+v, want insufficient data saying why:\n%s", pod, f, summaries(r))
			}
		}
		if f := find(r, vocab.KindTrainingOnShared); f != nil {
			t.Errorf("light tenants read as training: %s", f.Summary)
		}
		// OOM risk rests on the device's memory, and still flags the GPU.
		f := find(r, vocab.KindTimesliceOOMRisk)
		if f == nil || f.Confidence > 0.5 || f.Evidence["tenant_memory_unknown"] != 1 {
			t.Errorf("OOM risk %+v, want the device's memory judged at half confidence:\n%s", f, summaries(r))
		}
	})
}
