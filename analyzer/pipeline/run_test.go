package pipeline

import (
	"context"
	"errors"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/source"
)

var (
	weekEnd   = time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	weekStart = weekEnd.Add(-7 * 24 * time.Hour)
)

func TestRun(t *testing.T) {
	src, _ := pipelinetest.Open(t, "testdata/fleet.yaml")
	tests := []struct {
		name         string
		schema       signals.Schema
		start, end   time.Time
		points       int
		wantDetected bool
		wantPrevGPUs int
		incomparable bool
		wantNote     string
	}{
		{name: "nil detects", schema: nil, start: weekStart, end: weekEnd, points: 7, wantDetected: true, wantPrevGPUs: 6},
		{name: "explicit schema", schema: native.Schema{}, start: weekStart, end: weekEnd, wantPrevGPUs: 6},
		{name: "no previous data", schema: native.Schema{}, start: weekStart.Add(-7 * 24 * time.Hour), end: weekStart, wantPrevGPUs: 0,
			wantNote: "no data in the previous 1w: week-over-week change is unknown"},
		// The previous window holds the fixture's first hour only.
		{name: "previous window barely covered", schema: native.Schema{}, start: weekStart.Add(-7*24*time.Hour + time.Hour), end: weekStart.Add(time.Hour),
			wantPrevGPUs: 6, incomparable: true, wantNote: "the previous 1w has data for only 1% of its time: week-over-week change is not shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stages []int
			a, err := Run(context.Background(), Options{Source: src, Schema: tt.schema, Start: tt.start, End: tt.end,
				TimelinePoints: tt.points, Progress: func(done, total int) { stages = append(stages, done*10+total) }})
			if err != nil {
				t.Fatal(err)
			}
			if a.Schema.Name() != "native" || a.Detected != tt.wantDetected {
				t.Errorf("schema %q detected %v, want native detected %v", a.Schema.Name(), a.Detected, tt.wantDetected)
			}
			if len(a.Current.GPUs) != 6 || len(a.Previous.GPUs) != tt.wantPrevGPUs {
				t.Errorf("GPUs: current %d previous %d, want 6 and %d", len(a.Current.GPUs), len(a.Previous.GPUs), tt.wantPrevGPUs)
			}
			if !a.Previous.Window.End.Equal(tt.start) || a.Previous.Window.Duration() != tt.end.Sub(tt.start) {
				t.Errorf("previous window %v, want the same length ending at %v", a.Previous.Window, tt.start)
			}
			if a.Findings == nil || len(a.Findings.Findings) == 0 {
				t.Error("no findings")
			}
			if want := []int{15, 25, 35, 45, 55}; !slices.Equal(stages, want) {
				t.Errorf("progress %v, want %v", stages, want)
			}
			if a.Comparable != (tt.wantPrevGPUs > 0 && !tt.incomparable) {
				t.Errorf("comparable = %v with %d previous GPUs", a.Comparable, tt.wantPrevGPUs)
			}
			if tt.wantNote != "" && !slices.Contains(a.Notes, tt.wantNote) {
				t.Errorf("notes %q lack %q", a.Notes, tt.wantNote)
			}
			if !slices.Contains(a.Notes, "no cluster access: teams are namespaces, workloads are inferred from pod names") {
				t.Errorf("notes %q do not say the cluster was not read", a.Notes)
			}
			if (a.Timeline != nil) != (tt.points > 0) {
				t.Errorf("timeline %v with %d points asked", a.Timeline != nil, tt.points)
			}
		})
	}
}

func TestRunTimeline(t *testing.T) {
	src, _ := pipelinetest.Open(t, "testdata/fleet.yaml")
	a, err := Run(context.Background(), Options{Source: src, Start: weekStart, End: weekEnd, TimelinePoints: 7})
	if err != nil {
		t.Fatal(err)
	}
	tl := a.Timeline
	if tl.Step != 24*time.Hour || len(tl.Ends) != 7 || !tl.Ends[6].Equal(weekEnd) {
		t.Fatalf("timeline step %s, %d points ending %v; want 24h, 7, %v", tl.Step, len(tl.Ends), tl.Ends[len(tl.Ends)-1], weekEnd)
	}
	var names []string
	for _, ns := range tl.Namespaces {
		names = append(names, ns.Namespace)
	}
	// search's only allocation has no utilization: it has no measured
	// hours, so it has no series.
	if got := strings.Join(names, ","); got != "inference,research,training,vision" {
		t.Fatalf("namespaces %s", got)
	}
	// The timeline's measured GPU-hours sum to the window's allocated
	// GPU-hours of the allocations with utilization, and used ≤ measured.
	for _, ns := range tl.Namespaces {
		var measured, used, want float64
		for i := range tl.Ends {
			measured += ns.Measured[i]
			used += ns.Used[i]
			if ns.Used[i] > ns.Measured[i]+1e-9 {
				t.Errorf("%s bucket %d: used %g > measured %g", ns.Namespace, i, ns.Used[i], ns.Measured[i])
			}
		}
		for _, x := range a.Current.Allocations {
			if x.Namespace == ns.Namespace && x.UtilizationSteps > 0 {
				want += x.AllocatedGPUHours
			}
		}
		if math.Abs(measured-want) > 1e-6*want {
			t.Errorf("%s: timeline holds %g measured GPU-hours, the window %g", ns.Namespace, measured, want)
		}
	}
}

// noRange hides the embedded source's QueryRange.
type noRange struct{ source.Source }

// TestRunWithoutRangeQueries: the analysis reads every signal with range
// queries (query.AnalyzeScoped), so a source without them is refused, by
// its name, not analysed in part.
func TestRunWithoutRangeQueries(t *testing.T) {
	src, _ := pipelinetest.Open(t, "testdata/fleet.yaml")
	_, err := Run(context.Background(), Options{Source: noRange{src}, Start: weekStart, End: weekEnd, TimelinePoints: 10})
	if want := src.Describe() + " has no range queries"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one saying %q", err, want)
	}
}

// failing answers every call with err.
type failing struct {
	source.Source
	err error
}

func (f failing) MetricNames(context.Context, time.Time, time.Time) ([]string, error) {
	return nil, f.err
}
func (f failing) Query(context.Context, string, time.Time) (model.Vector, error) { return nil, f.err }

// QueryRange fails too: a source without range queries is refused before
// it is asked anything (TestRunWithoutRangeQueries).
func (f failing) QueryRange(context.Context, string, time.Time, time.Time, time.Duration) (model.Matrix, error) {
	return nil, f.err
}

func TestRunErrors(t *testing.T) {
	src, _ := pipelinetest.Open(t, "testdata/fleet.yaml")
	boom := errors.New("connection refused")
	long := weekStart.Add(-30 * 24 * time.Hour)
	tests := []struct {
		name       string
		o          Options
		wantNoData bool
		wantErr    []string
	}{
		{name: "auto on an empty window", o: Options{Source: src, Start: long, End: long.Add(time.Hour)}, wantNoData: true,
			wantErr: []string{"no GPU series in embedded TSDB at", "native schema (gpulens_container_gpu_allocation_ratio, gpulens_gpu_info)",
				"dcgm-exporter schema (DCGM_FI_DEV_FB_USED_BYTES, DCGM_FI_DEV_FB_USED, DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO, DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL_RATIO, DCGM_FI_DEV_GPU_UTIL)"}},
		{name: "explicit schema without its series", o: Options{Source: src, Schema: dcgm.Schema{}, Start: weekStart, End: weekEnd}, wantNoData: true,
			wantErr: []string{"looked for the dcgm-exporter schema", "2026-03-09T00:00:00Z and 2026-03-16T00:00:00Z"}},
		{name: "failing source is not no data", o: Options{Source: failing{src, boom}, Start: weekStart, End: weekEnd}, wantErr: []string{"connection refused"}},
		{name: "failing source with a schema", o: Options{Source: failing{src, boom}, Schema: native.Schema{}, Start: weekStart, End: weekEnd}, wantErr: []string{"connection refused"}},
		{name: "inverted window", o: Options{Source: src, Start: weekEnd, End: weekStart}, wantErr: []string{"is not after its start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.o)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrNoData) != tt.wantNoData {
				t.Errorf("errors.Is(ErrNoData) = %v, want %v (%v)", !tt.wantNoData, tt.wantNoData, err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
