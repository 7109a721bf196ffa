package findings

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
)

// TestTrainingOnSharedFromDCGM: with dcgm-exporter's copies every tenant
// of a time-sliced GPU reports the whole device's utilization, so a
// saturated device says nothing of which tenant saturates it: no tenant is
// accused, and the GPU gets one info finding naming both as candidates.
// Native and per-process figures are each tenant's own, scaled by its
// share: a verdict per tenant.
func TestTrainingOnSharedFromDCGM(t *testing.T) {
	tenants := func(p95 float64) []fleet.Allocation {
		a := alloc("trainer", "GPU-ts", a100, "time-slicing", "", 0.5, p95, p95, 30*GiB)
		b := alloc("service", "GPU-ts", a100, "time-slicing", "", 0.5, p95, p95, 30*GiB)
		return []fleet.Allocation{a, b}
	}
	for _, tt := range []struct {
		name        string
		schema      string
		attribution string
		p95         float64
		accused     int // warnings naming a tenant
		gpuInfo     int // info findings on the GPU, naming none
	}{
		{"dcgm saturated", dcgm.SchemaName, fleet.AttributionCopies, 1, 0, 1},
		{"dcgm light", dcgm.SchemaName, fleet.AttributionCopies, 0.3, 0, 0},
		// Each tenant used its own share fully, i.e. half the GPU each:
		// no training-like tenant.
		{"native fair", native.SchemaName, fleet.AttributionPerTenant, 1, 0, 0},
		{"dcgm per-process fair", dcgm.SchemaName, fleet.AttributionPerProcess, 1, 0, 0},
		// Native: 1.8 of its share is 90% of the GPU, for each tenant.
		{"native heavy", native.SchemaName, fleet.AttributionPerTenant, 1.8, 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := gpu("GPU-ts", a100, "time-slicing", 80*GiB)
			g.Attribution = tt.attribution
			res := result(tenants(tt.p95), []fleet.GPU{g})
			res.Schema = tt.schema
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			var accused, info int
			for _, f := range r.Findings {
				if f.Kind != vocab.KindTrainingOnShared {
					continue
				}
				if f.Workload == "" && f.Pod == "" {
					info++
					if f.Severity != Info || f.Confidence > 0.5 || !strings.Contains(f.Summary, "unknowable") ||
						!strings.Contains(f.Summary, "team-a/trainer") || !strings.Contains(f.Summary, "team-a/service") {
						t.Errorf("the GPU's finding must be info and name both tenants as candidates: %s %v %q", f.Severity, f.Confidence, f.Summary)
					}
					if f.Evidence["gpu_load"] < criteria.DefaultConfig().Training.MinLoad {
						t.Errorf("evidence load %v below the threshold it passed", f.Evidence["gpu_load"])
					}
					continue
				}
				accused++
				if f.Evidence["p95_gpu_load"] < criteria.DefaultConfig().Training.MinLoad {
					t.Errorf("evidence load %v below the threshold it passed", f.Evidence["p95_gpu_load"])
				}
			}
			if accused != tt.accused || info != tt.gpuInfo {
				t.Errorf("%d tenants accused and %d GPU findings, want %d and %d:\n%s", accused, info, tt.accused, tt.gpuInfo, summaries(r))
			}
		})
	}
}

// TestOOMRiskFromDCGMIsAGuess: dcgm-exporter gives every tenant the
// device's memory, so the finding must not name its tenant with certainty.
func TestOOMRiskFromDCGMIsAGuess(t *testing.T) {
	a := alloc("leaky", "GPU-ts", a100, "time-slicing", "", 0.5, 0.3, 0.4, 76*GiB)
	b := alloc("svc", "GPU-ts", a100, "time-slicing", "", 0.5, 0.3, 0.4, 76*GiB)
	for _, sch := range []string{native.SchemaName, dcgm.SchemaName} {
		g := gpu("GPU-ts", a100, "time-slicing", 80*GiB)
		// Natively the device is full (its tenants' 152 GiB cannot all be
		// resident); dcgm-exporter's copies are one reading of 76 GiB.
		g.MemoryUsedP99Bytes, g.MemoryUsedLastBytes, g.MemoryUsedSteps = map[string]float64{native.SchemaName: 80 * GiB, dcgm.SchemaName: 76 * GiB}[sch], 76*GiB, 10080
		g.Attribution = map[string]string{native.SchemaName: fleet.AttributionPerTenant, dcgm.SchemaName: fleet.AttributionCopies}[sch]
		res := result([]fleet.Allocation{a, b}, []fleet.GPU{g})
		res.Schema = sch
		f := find(Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindTimesliceOOMRisk)
		if f == nil {
			t.Fatalf("%s: no OOM risk", sch)
		}
		guess := strings.Contains(f.Summary, "is a guess")
		if (sch == dcgm.SchemaName) != guess || (sch == dcgm.SchemaName && f.Confidence > 0.5) {
			t.Errorf("%s: confidence %v, summary %q", sch, f.Confidence, f.Summary)
		}
		// Natively the device is at 100%: critical. From dcgm-exporter,
		// 95%: a warning.
		if want := map[string]Severity{native.SchemaName: Critical, dcgm.SchemaName: Warning}[sch]; f.Severity != want {
			t.Errorf("%s: severity %s, want %s", sch, f.Severity, want)
		}
	}
}

// TestLostWithoutXID: a GPU lost without any XID event (NVML_ERROR_GPU_IS_LOST
// or a hang) is critical, and its summary does not claim "0 XID error(s)".
func TestLostWithoutXID(t *testing.T) {
	g := gpu("GPU-lost", a100, "none", 80*GiB)
	g.DownSteps = 120
	f := find(Detect(result(nil, []fleet.GPU{g}), nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindGPUErrors)
	if f == nil || f.Severity != Critical {
		t.Fatalf("finding %+v, want a critical gpu-errors", f)
	}
	if strings.Contains(f.Summary, "XID") || !strings.Contains(f.Summary, "was lost for 2.0 h") {
		t.Errorf("summary %q", f.Summary)
	}
	g.XIDErrors, g.XIDCodes = 1, []string{"79"}
	f = find(Detect(result(nil, []fleet.GPU{g}), nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindGPUErrors)
	if !strings.Contains(f.Summary, "had 1 XID error(s) (XID 79) and was lost for 2.0 h") {
		t.Errorf("summary %q", f.Summary)
	}
}

// TestApplicationXIDIsNotAGPUFault: XID 13 alone says nothing about the
// GPU's health, so it raises no gpu-errors (whose advice is to drain the
// node), only the workload's finding.
func TestApplicationXIDIsNotAGPUFault(t *testing.T) {
	g := gpu("GPU-app", a100, "none", 80*GiB)
	g.WorkloadXIDErrors, g.WorkloadXIDCodes = 1, []string{"13"}
	r := Detect(result(nil, []fleet.GPU{g}), nil, criteria.DefaultConfig(), price.DefaultPrices())
	if f := find(r, vocab.KindGPUErrors); f != nil {
		t.Errorf("an application XID made a GPU fault: %s", f.Summary)
	}
	if f := find(r, vocab.KindWorkloadXID); f == nil || f.Severity != Info {
		t.Errorf("workload finding %+v, want an info %s", f, vocab.KindWorkloadXID)
	}
}
