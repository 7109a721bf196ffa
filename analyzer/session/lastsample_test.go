package session

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/recommend"
)

// TestDataDirWithoutUntilEndsAtTheLastSample guards issue 52: a store on
// disk read without --until (`make demo`, then `gpulens report
// --data-dir ./demo-data` 26 minutes later) ended the window at the
// reader's now, so its last 26 minutes had no data and every node read as
// empty; on main 36bc8ff the window ended at now. It ends at the store's
// last sample, keeping --since's length; an --until that was given stays
// as given. The fixture (testdata/fleet.yaml) is scraped every minute in
// (start, end], and each series ends with a staleness marker one scrape
// later, as Prometheus's scrape loop writes one for a target gone
// (pipelinetest.Fixture.series): its last sample is that marker's, a
// minute after weekEnd.
func TestDataDirWithoutUntilEndsAtTheLastSample(t *testing.T) {
	dir := fixtureDir(t)
	last := weekEnd.Add(time.Minute)
	later := weekEnd.Add(26 * time.Minute)
	for _, tc := range []struct {
		name       string
		now        time.Time
		until      string
		start, end time.Time
	}{
		{"no --until, read 26 minutes after the last sample", later, "", last.Add(-36 * time.Hour), last},
		{"--until 26 minutes after the last sample", later, later.Format(time.RFC3339), later.Add(-36 * time.Hour), later},
		{"no --until, read before the last sample", weekEnd.Add(-time.Hour), "", weekEnd.Add(-37 * time.Hour), weekEnd.Add(-time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Flags{DataDir: dir, Since: "36h", Until: tc.until, Step: time.Minute, NoKubernetes: true, MaxWindow: "0"}
			cfg, err := f.Config(tc.now, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.window.Start.Equal(tc.start) || !s.window.End.Equal(tc.end) {
				t.Errorf("window %s to %s, want %s to %s", s.window.Start, s.window.End, tc.start, tc.end)
			}
		})
	}
}

// TestReadAfterTheDataSaysWhereItStops guards issue 52: an explicit
// --until 26 minutes past the store's last sample used to give no
// warning and advise scaling down nodes whose GPUs were held at their
// last sample (on main 36bc8ff: no note, no log line, and every node's
// free GPU advised scale-down-node-pool). The log and the report's notes
// name where the data stops, and the advice per GPU is that of the window
// ending at the data's end, less any scale-down.
func TestReadAfterTheDataSaysWhereItStops(t *testing.T) {
	dir := fixtureDir(t)
	ctx := context.Background()
	advice := func(until time.Time, logs *bytes.Buffer) (map[string]recommend.Action, []string) {
		t.Helper()
		f := Flags{DataDir: dir, Since: "36h", Until: until.Format(time.RFC3339), Step: time.Minute, NoKubernetes: true, MaxWindow: "0"}
		cfg, err := f.Config(until, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a, err := s.Analyze(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]recommend.Action{}
		for _, f := range a.Findings.Findings {
			if f.Recommendation != nil {
				out[string(f.Kind)+" "+f.Namespace+"/"+f.Workload+" "+f.Node+" "+f.GPUUUID] = f.Recommendation.Action
			}
		}
		return out, a.Current.Notes
	}
	var atEndLogs, laterLogs bytes.Buffer
	atEnd, atEndNotes := advice(weekEnd, &atEndLogs)
	later, notes := advice(weekEnd.Add(26*time.Minute), &laterLogs)

	// gpu-l4-01's GPU-l4-b is never allocated beside GPU-l4-a, held to
	// the end: its advice is to consolidate.
	if k := "unallocated-capacity / gpu-l4-01 GPU-l4-b"; atEnd[k] != recommend.ActionConsolidate {
		t.Fatalf("at the data's end %s is advised %q, want %q: %v", k, atEnd[k], recommend.ActionConsolidate, atEnd)
	}
	if strings.Contains(atEndLogs.String(), "data stops") || strings.Contains(strings.Join(atEndNotes, "\n"), "data stops") {
		t.Errorf("at the data's end, stale data was reported:\n%s\n%s", atEndLogs.String(), atEndNotes)
	}
	// The fixture's nodes, every one stopped at weekEnd.
	for _, want := range []string{"data stops", "gpu-h100-01", "gpu-a100-01", "gpu-l4-01", weekEnd.Format(time.RFC3339)} {
		if !strings.Contains(laterLogs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, laterLogs.String())
		}
		if !strings.Contains(strings.Join(notes, "\n"), want) {
			t.Errorf("the notes lack %q:\n%s", want, strings.Join(notes, "\n"))
		}
	}
	for k, act := range later {
		if act == recommend.ActionScaleDown {
			t.Errorf("%s: scale-down advised from data that stopped", k)
		}
	}
	for k, act := range atEnd {
		if act == recommend.ActionScaleDown {
			// Not known to be empty 26 minutes on: said, not advised.
			if _, ok := later[k]; ok {
				t.Errorf("%s: %s 26 minutes after the data's end, want no advice", k, later[k])
			}
			continue
		}
		if later[k] != act {
			t.Errorf("%s: %q 26 minutes after the data's end, %q at it", k, later[k], act)
		}
	}
	for k, act := range later {
		if _, ok := atEnd[k]; !ok {
			t.Errorf("%s: %s 26 minutes after the data's end only", k, act)
		}
	}
}
