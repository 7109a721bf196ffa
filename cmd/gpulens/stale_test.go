package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoReadLaterGivesTheSameAdvice is issue 52's acceptance
// criterion: "the demo read 30 minutes after its end gives the same
// actions as at its end, or says it cannot judge". On main 36bc8ff the
// demo's store read with --until 30 minutes past its end advised
// scale-down-node-pool for nodes whose GPUs were held at its last sample
// ("no GPU of gpu-h100-01 is held now"), and said nothing of the data
// stopping; and a read without --until ended at the reader's now. Each
// finding's action per subject (kind, node, GPU, workload) 30 minutes
// on is the one at the end, except where the end advised a scale-down:
// 30 minutes on that node is not known to be empty, and the finding says
// it cannot judge. A read without --until ends at the store's last
// sample, the demo's end, and its advice is the end's.
func TestDemoReadLaterGivesTheSameAdvice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tsdb")
	end := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"demo", "--duration", "3h", "--end", end.Format(time.RFC3339), "--data-dir", dir, "-o", "json", "--quiet"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("demo: exit %d\n%s", code, stderr.String())
	}
	type finding struct {
		Kind, Namespace, Workload, Node string
		GPU                             string `json:"gpu_uuid"`
		Summary                         string
		Recommendation                  *struct{ Action string }
	}
	// actions reads `gpulens recommend --all` over the store, until
	// until ("" for none): each subject's action ("none" for a finding
	// without one), and the findings by subject.
	actions := func(until string) (map[string]string, map[string]finding, string) {
		t.Helper()
		args := []string{"recommend", "--data-dir", dir, "--since", "3h", "--no-kubernetes", "-o", "json", "--all"}
		if until != "" {
			args = append(args, "--until", until)
		}
		var stdout, stderr bytes.Buffer
		if code := execute(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
		}
		var fs []finding
		if err := json.Unmarshal(stdout.Bytes(), &fs); err != nil {
			t.Fatalf("%v: %v\n%.500s", args, err, stdout.String())
		}
		out, by := map[string]string{}, map[string]finding{}
		for _, f := range fs {
			k := strings.Join([]string{f.Kind, f.Node, f.GPU, f.Namespace, f.Workload}, " ")
			out[k], by[k] = "none", f
			if f.Recommendation != nil {
				out[k] = f.Recommendation.Action
			}
		}
		return out, by, stderr.String()
	}
	atEnd, _, _ := actions(end.Format(time.RFC3339))
	later, laterFindings, warning := actions(end.Add(30 * time.Minute).Format(time.RFC3339))
	if len(atEnd) == 0 {
		t.Fatal("no findings at the demo's end")
	}
	t.Logf("at the end: %v", atEnd)
	for k, act := range atEnd {
		got, ok := later[k]
		switch {
		case act == "scale-down-node-pool":
			if ok && (got == "scale-down-node-pool" || !strings.Contains(laterFindings[k].Summary, "cannot be judged")) {
				t.Errorf("%s: %s 30 minutes after the end (%q), want a finding that says it cannot judge", k, got, laterFindings[k].Summary)
			}
		case got != act:
			t.Errorf("%s: %q 30 minutes after the end, %q at it (%s)", k, got, act, laterFindings[k].Summary)
		}
	}
	for k, act := range later {
		if _, ok := atEnd[k]; !ok {
			t.Errorf("%s: %s 30 minutes after the end only (%s)", k, act, laterFindings[k].Summary)
		}
	}
	// Last seen within the engine's lookback (5m) after the last sample:
	// the demo's store has no staleness markers.
	for _, want := range []string{"data stops", "gpu-h100-01", end.Format("2006-01-02T15:0")} {
		if !strings.Contains(warning, want) {
			t.Errorf("stderr 30 minutes after the end lacks %q:\n%s", want, warning)
		}
	}

	// Every format of the report says where the data stops: the notes,
	// and in JSON the window's data_stops too.
	for _, format := range []string{"table", "markdown", "html", "json"} {
		var stdout, stderr bytes.Buffer
		args := []string{"report", "--data-dir", dir, "--since", "3h", "--until", end.Add(30 * time.Minute).Format(time.RFC3339), "--no-kubernetes", "-o", format}
		if code := execute(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
		}
		// Words only: the table wraps its notes at 120 columns.
		words := strings.Join(strings.Fields(stdout.String()), " ")
		for _, want := range []string{"data stops", "gpu-h100-01 last seen " + end.Format("2006-01-02T15:0")} {
			if !strings.Contains(words, want) {
				t.Errorf("the %s report lacks %q", format, want)
			}
		}
		if format == "json" {
			var r struct {
				Window struct {
					DataStops []struct{ Node string } `json:"data_stops"`
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || len(r.Window.DataStops) != 6 {
				t.Errorf("the JSON report's window.data_stops %+v (%v), want the demo's 6 nodes", r.Window.DataStops, err)
			}
		}
	}

	// Without --until, the window ends at the store's last sample.
	noUntil, _, warning := actions("")
	if strings.Contains(warning, "data stops") {
		t.Errorf("without --until the data was said to stop:\n%s", warning)
	}
	for k, act := range atEnd {
		if noUntil[k] != act {
			t.Errorf("%s: %q without --until, %q at the end", k, noUntil[k], act)
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := execute([]string{"report", "--data-dir", dir, "--since", "3h", "--no-kubernetes", "-o", "json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	var r struct {
		Window struct{ Start, End time.Time }
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Window.End.Equal(end) || !r.Window.Start.Equal(end.Add(-3*time.Hour)) {
		t.Errorf("window %s to %s without --until, want the demo's last 3 hours, to %s", r.Window.Start, r.Window.End, end)
	}
}
