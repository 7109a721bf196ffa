package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/vocab"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func finding(kind vocab.Kind, workload string) findings.Finding {
	return findings.Finding{Kind: kind, Severity: findings.Warning, Namespace: "team-a", Workload: workload, Node: "n1",
		GPUUUID: "GPU-1", Summary: workload + " wastes", MonthlySavingsUSD: 100, CostKnown: true}
}

func result(fs ...findings.Finding) *Result {
	r := &report.Report{Window: report.Window{Start: t0.Add(-24 * time.Hour), End: t0, Hours: 24}, Schema: "native",
		Teams: []rollup.Team{{Team: "ml", Hours: rollup.Hours{AllocatedGPUHours: 24, UsedGPUHours: 6, IdleGPUHours: 18}}}}
	return &Result{Findings: fs, Report: r, Queries: 48}
}

// script answers each Analyze call with the next step.
type script struct {
	steps []func() (*Result, error)
	n     int
}

func (s *script) analyze(context.Context) (*Result, error) {
	f := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	return f()
}

func ok(r *Result) func() (*Result, error) { return func() (*Result, error) { return r, nil } }
func fail(msg string) func() (*Result, error) {
	return func() (*Result, error) { return nil, errors.New(msg) }
}

func get(t *testing.T, h http.Handler, path string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Header(), rec.Body.String()
}

func TestResolvedFindingSeriesGoNextCycle(t *testing.T) {
	sc := &script{steps: []func() (*Result, error){
		ok(result(finding(vocab.KindIdleAllocation, "nb"), finding(vocab.KindUnderusedGPU, "infer"))),
		ok(result(finding(vocab.KindIdleAllocation, "nb"))),
	}}
	s := New(Options{Analyze: sc.analyze, Interval: time.Minute})
	h := s.Handler()
	s.Cycle(context.Background())
	_, _, m1 := get(t, h, "/metrics")
	s.Cycle(context.Background())
	_, _, m2 := get(t, h, "/metrics")
	for _, tt := range []struct {
		series string
		in1    bool
		in2    bool
	}{
		{`gpulens_finding{kind="idle-allocation",severity="warning",namespace="team-a",workload="nb",node="n1",gpu_uuid="GPU-1"} 1`, true, true},
		{`gpulens_finding{kind="underused-gpu",severity="warning",namespace="team-a",workload="infer",node="n1",gpu_uuid="GPU-1"} 1`, true, false},
		{`gpulens_finding_monthly_savings_usd{kind="underused-gpu",`, true, false},
		{`gpulens_team_gpu_seconds{team="ml",state="idle"} 64800`, true, true},
		{`gpulens_serve_analyses_total{result="success"} 2`, false, true},
		{`gpulens_serve_queries_total 96`, false, true},
	} {
		if strings.Contains(m1, tt.series) != tt.in1 || strings.Contains(m2, tt.series) != tt.in2 {
			t.Errorf("%s: in cycle 1 %v (want %v), cycle 2 %v (want %v)", tt.series,
				strings.Contains(m1, tt.series), tt.in1, strings.Contains(m2, tt.series), tt.in2)
		}
	}
}

func TestFailedAnalysisServesLastGoodMarkedStale(t *testing.T) {
	good := result(finding(vocab.KindIdleAllocation, "nb"))
	sc := &script{steps: []func() (*Result, error){ok(good), fail("prometheus: connection refused"), ok(good)}}
	s := New(Options{Analyze: sc.analyze, Interval: time.Minute})
	h := s.Handler()

	if code, _, _ := get(t, h, "/api/v1/report"); code != http.StatusServiceUnavailable {
		t.Errorf("report before any analysis: %d, want 503", code)
	}
	s.Cycle(context.Background())
	_, _, report1 := get(t, h, "/api/v1/report")
	var want bytes.Buffer
	if err := report.Render(&want, good.Report, "json"); err != nil {
		t.Fatal(err)
	}
	if report1 != want.String() {
		t.Errorf("/api/v1/report is not the report's JSON rendering:\n%s", report1)
	}

	s.Cycle(context.Background()) // fails
	code, hdr, report2 := get(t, h, "/api/v1/report")
	if code != http.StatusOK || report2 != report1 || hdr.Get("X-Gpulens-Stale") != "true" {
		t.Errorf("after a failure: %d, stale header %q, same report %v", code, hdr.Get("X-Gpulens-Stale"), report2 == report1)
	}
	var fr struct {
		Stale    bool              `json:"stale"`
		Findings []json.RawMessage `json:"findings"`
	}
	_, _, body := get(t, h, "/api/v1/findings")
	if err := json.Unmarshal([]byte(body), &fr); err != nil || !fr.Stale || len(fr.Findings) != 1 {
		t.Errorf("findings after a failure: stale %v, %d findings, %v", fr.Stale, len(fr.Findings), err)
	}
	_, _, m := get(t, h, "/metrics")
	for _, want := range []string{"gpulens_serve_stale 1", `gpulens_serve_analyses_total{result="failure"} 1`, `gpulens_finding{kind="idle-allocation"`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics after a failure lacks %s", want)
		}
	}

	s.Cycle(context.Background())
	if _, hdr, _ := get(t, h, "/api/v1/report"); hdr.Get("X-Gpulens-Stale") != "false" {
		t.Error("a successful analysis does not clear the stale mark")
	}
}

func TestProbes(t *testing.T) {
	tests := []struct {
		name      string
		succeeded bool
		age       time.Duration
		ready     int
	}{
		{name: "nothing analysed yet", ready: http.StatusServiceUnavailable},
		{name: "fresh", succeeded: true, age: time.Minute, ready: http.StatusOK},
		{name: "three intervals old", succeeded: true, age: 3 * time.Minute, ready: http.StatusOK},
		{name: "older than three intervals", succeeded: true, age: 3*time.Minute + time.Second, ready: http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			s := New(Options{Analyze: (&script{steps: []func() (*Result, error){ok(result())}}).analyze,
				Interval: time.Minute, Now: func() time.Time { return now }})
			if tt.succeeded {
				s.Cycle(context.Background())
			}
			now = now.Add(tt.age)
			// The main handler and the one --web.health-address serves
			// without auth answer alike.
			for name, h := range map[string]http.Handler{"Handler": s.Handler(), "Probes": s.Probes()} {
				if code, _, _ := get(t, h, "/readyz"); code != tt.ready {
					t.Errorf("%s /readyz = %d, want %d", name, code, tt.ready)
				}
				if code, _, _ := get(t, h, "/healthz"); code != http.StatusOK {
					t.Errorf("%s /healthz = %d: the process is up", name, code)
				}
			}
			for _, path := range []string{"/metrics", "/api/v1/report", "/api/v1/findings", "/"} {
				if code, _, _ := get(t, s.Probes(), path); code != http.StatusNotFound {
					t.Errorf("Probes %s = %d, want 404: only the probes go without auth", path, code)
				}
			}
		})
	}
}

func TestShutdownIsNotAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := New(Options{Interval: time.Minute, Analyze: func(ctx context.Context) (*Result, error) {
		cancel()
		<-ctx.Done()
		return nil, errors.New("query was canceled")
	}})
	s.Cycle(ctx)
	var b strings.Builder
	_ = s.WriteMetrics(&b)
	if !strings.Contains(b.String(), `gpulens_serve_analyses_total{result="failure"} 0`) {
		t.Errorf("an analysis cut short by shutdown counted as failed:\n%s", b.String())
	}
}
