package findings

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
)

// TestTrainingOnSharedFromDCGM pins a fix: with dcgm-exporter every tenant
// of a time-sliced GPU reports the whole device's utilization, so the p95
// is already the GPU's load. Scaling it by the tenant's share, as for
// native per-process figures, capped it at 1/replicas and the rule could
// never fire on dcgm-exporter data.
func TestTrainingOnSharedFromDCGM(t *testing.T) {
	tenants := func(p95 float64) []query.Allocation {
		a := alloc("trainer", "GPU-ts", a100, "time-slicing", "", 0.5, p95, p95, 30*GiB)
		b := alloc("service", "GPU-ts", a100, "time-slicing", "", 0.5, p95, p95, 30*GiB)
		return []query.Allocation{a, b}
	}
	for _, tt := range []struct {
		name        string
		schema      string
		attribution string
		p95         float64
		flagged     int
	}{
		// dcgm-exporter's copies: a saturated device flags each tenant,
		// as a guess.
		{"dcgm saturated", schema.NameDCGM, query.AttributionCopies, 1, 2},
		{"dcgm light", schema.NameDCGM, query.AttributionCopies, 0.3, 0},
		// Native, and dcgm-exporter's per-process series: each tenant used
		// its own share fully, i.e. half the GPU each: no training-like
		// tenant.
		{"native fair", schema.NameNative, query.AttributionPerTenant, 1, 0},
		{"dcgm per-process fair", schema.NameDCGM, query.AttributionPerProcess, 1, 0},
		// Native: 1.8 of its share is 90% of the GPU.
		{"native heavy", schema.NameNative, query.AttributionPerTenant, 1.8, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := gpu("GPU-ts", a100, "time-slicing", 80*GiB)
			g.Attribution = tt.attribution
			res := result(tenants(tt.p95), []query.GPU{g})
			res.Schema = tt.schema
			r := Detect(res, nil, criteria.DefaultConfig(), recommend.DefaultPrices())
			var n int
			for _, f := range r.Findings {
				if f.Kind != criteria.KindTrainingOnShared {
					continue
				}
				n++
				if tt.attribution == query.AttributionCopies && (f.Confidence > 0.5 || !strings.Contains(f.Summary, "may be a co-tenant")) {
					t.Errorf("dcgm finding claims certainty: confidence %v, %q", f.Confidence, f.Summary)
				}
				if f.Evidence["p95_gpu_load"] < criteria.DefaultConfig().Training.MinLoad {
					t.Errorf("evidence load %v below the threshold it passed", f.Evidence["p95_gpu_load"])
				}
			}
			if n != tt.flagged {
				t.Errorf("%d training-on-shared findings, want %d", n, tt.flagged)
			}
		})
	}
}

// TestOOMRiskFromDCGMIsAGuess: dcgm-exporter gives every tenant the
// device's memory, so the finding must not name its tenant with certainty.
func TestOOMRiskFromDCGMIsAGuess(t *testing.T) {
	a := alloc("leaky", "GPU-ts", a100, "time-slicing", "", 0.5, 0.3, 0.4, 76*GiB)
	b := alloc("svc", "GPU-ts", a100, "time-slicing", "", 0.5, 0.3, 0.4, 76*GiB)
	for _, sch := range []string{schema.NameNative, schema.NameDCGM} {
		g := gpu("GPU-ts", a100, "time-slicing", 80*GiB)
		// Natively the device is full (its tenants' 152 GiB cannot all be
		// resident); dcgm-exporter's copies are one reading of 76 GiB.
		g.MemoryUsedP99Bytes, g.MemoryUsedLastBytes, g.MemoryUsedSteps = map[string]float64{schema.NameNative: 80 * GiB, schema.NameDCGM: 76 * GiB}[sch], 76*GiB, 10080
		g.Attribution = map[string]string{schema.NameNative: query.AttributionPerTenant, schema.NameDCGM: query.AttributionCopies}[sch]
		res := result([]query.Allocation{a, b}, []query.GPU{g})
		res.Schema = sch
		f := find(Detect(res, nil, criteria.DefaultConfig(), recommend.DefaultPrices()), criteria.KindTimesliceOOMRisk)
		if f == nil {
			t.Fatalf("%s: no OOM risk", sch)
		}
		guess := strings.Contains(f.Summary, "is a guess")
		if (sch == schema.NameDCGM) != guess || (sch == schema.NameDCGM && f.Confidence > 0.5) {
			t.Errorf("%s: confidence %v, summary %q", sch, f.Confidence, f.Summary)
		}
		// Natively the device is at 100%: critical. From dcgm-exporter,
		// 95%: a warning.
		if want := map[string]Severity{schema.NameNative: Critical, schema.NameDCGM: Warning}[sch]; f.Severity != want {
			t.Errorf("%s: severity %s, want %s", sch, f.Severity, want)
		}
	}
}

// TestLostWithoutXID: a GPU lost without any XID event (NVML_ERROR_GPU_IS_LOST
// or a hang) is critical, and its summary does not claim "0 XID error(s)".
func TestLostWithoutXID(t *testing.T) {
	g := gpu("GPU-lost", a100, "none", 80*GiB)
	g.DownSteps = 120
	f := find(Detect(result(nil, []query.GPU{g}), nil, criteria.DefaultConfig(), recommend.DefaultPrices()), criteria.KindGPUErrors)
	if f == nil || f.Severity != Critical {
		t.Fatalf("finding %+v, want a critical gpu-errors", f)
	}
	if strings.Contains(f.Summary, "XID") || !strings.Contains(f.Summary, "was lost for 2.0 h") {
		t.Errorf("summary %q", f.Summary)
	}
	g.XIDErrors, g.XIDCodes = 1, []string{"79"}
	f = find(Detect(result(nil, []query.GPU{g}), nil, criteria.DefaultConfig(), recommend.DefaultPrices()), criteria.KindGPUErrors)
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
	r := Detect(result(nil, []query.GPU{g}), nil, criteria.DefaultConfig(), recommend.DefaultPrices())
	if f := find(r, criteria.KindGPUErrors); f != nil {
		t.Errorf("an application XID made a GPU fault: %s", f.Summary)
	}
	if f := find(r, criteria.KindWorkloadXID); f == nil || f.Severity != Info {
		t.Errorf("workload finding %+v, want an info %s", f, criteria.KindWorkloadXID)
	}
}
