package pipeline

import (
	"context"
	"reflect"
	"testing"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/signals/native"
)

// TestCurrentOnly: a run of the current window only (a plan after the
// advice needs its findings, not the change) reads no previous window
// (the fixture's previous week has its 6 GPUs, TestRun) and finds what a
// full run finds.
func TestCurrentOnly(t *testing.T) {
	src, _ := pipelinetest.Open(t, "testdata/fleet.yaml")
	o := Options{Source: src, Schema: native.Schema{}, Start: weekStart, End: weekEnd}
	full, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.CurrentOnly = true
	cur, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Previous.GPUs) != 6 || len(cur.Previous.GPUs) != 0 || cur.Comparable {
		t.Errorf("previous window: %d GPUs in a full run (want 6), %d with CurrentOnly (want 0), comparable %v", len(full.Previous.GPUs), len(cur.Previous.GPUs), cur.Comparable)
	}
	if !cur.Previous.Window.End.Equal(weekStart) {
		t.Errorf("the empty previous analysis is of %v, want the window before %v", cur.Previous.Window, weekStart)
	}
	if !reflect.DeepEqual(cur.Findings, full.Findings) || len(cur.Findings.Findings) == 0 {
		t.Errorf("CurrentOnly found %d findings, a full run %d: want the same", len(cur.Findings.Findings), len(full.Findings.Findings))
	}
}
