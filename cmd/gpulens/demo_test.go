package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoRunsThePipeline(t *testing.T) {
	dir := t.TempDir()
	om := filepath.Join(dir, "week.om")
	var stdout, stderr bytes.Buffer
	code := execute([]string{"demo", "--duration", "3h", "--end", "2026-01-05T14:00:00Z", "-o", "json",
		"--data-dir", filepath.Join(dir, "tsdb"), "--export-openmetrics", om}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var r struct {
		Teams []struct {
			Team string `json:"team"`
		} `json:"teams"`
		Findings      json.RawMessage `json:"findings"`
		Consolidation *struct {
			GPUsToday   int    `json:"gpus_today"`
			Unavailable string `json:"unavailable"`
		} `json:"consolidation"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("the JSON report does not parse: %v\n%.500s", err, stdout.String())
	}
	if len(r.Teams) != 5 {
		t.Errorf("%d teams in the demo week, want the default scenario's 5", len(r.Teams))
	}
	// The demo's report is the report's: its consolidation section too,
	// planned over the default scenario's 4 nodes of 8 GPUs, its DRA
	// node of 4 and its HAMi node of 2.
	if c := r.Consolidation; c == nil || c.Unavailable != "" || c.GPUsToday != 4*8+4+2 {
		t.Errorf("consolidation %+v, want a plan of the 38 GPUs", c)
	}
	for _, want := range []string{"Simulated 6 nodes", "PromQL queries", "gpulens report --data-dir"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	b, err := os.ReadFile(om)
	if err != nil || !bytes.HasSuffix(b, []byte("# EOF\n")) || !bytes.Contains(b, []byte("gpulens_container_gpu_allocation_ratio{")) {
		t.Errorf("OpenMetrics export incomplete: %v (%d bytes)", err, len(b))
	}
	// The kept TSDB answers a later report.
	stdout.Reset()
	stderr.Reset()
	code = execute([]string{"report", "--data-dir", filepath.Join(dir, "tsdb"), "--since", "3h", "--until", "2026-01-05T14:00:00Z",
		"--no-kubernetes", "-o", "csv"}, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "team-nlp") {
		t.Errorf("report over the demo's TSDB: exit %d\n%s\n%.300s", code, stderr.String(), stdout.String())
	}
}

func TestDemoBadInput(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	os.WriteFile(broken, []byte("seed: 1\nnodes:\n  - name: n\n    system: dgx-z9000\n"), 0o644)
	// An earlier week's directory: refused, and left as it was.
	used := t.TempDir()
	kept := filepath.Join(used, "wal")
	os.WriteFile(kept, []byte("earlier week"), 0o644)
	defer func() {
		if b, err := os.ReadFile(kept); err != nil || string(b) != "earlier week" {
			t.Errorf("the earlier run's file was changed: %q, %v", b, err)
		}
	}()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo", "--duration", "7 days"}, exitUsage, "--duration"},
		{[]string{"demo", "--end", "yesterday"}, exitUsage, "RFC 3339"},
		{[]string{"demo", "-o", "pdf"}, exitUsage, "pdf"},
		{[]string{"demo", "--scenario", broken}, exitUsage, "broken.yaml:4"},
		{[]string{"demo", "--step", "0s"}, exitUsage, "--step"},
		{[]string{"demo", "--data-dir", used}, exitUsage, "not empty"},
	} {
		var stdout, stderr bytes.Buffer
		if code := execute(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, stderr.String(), c.want)
		}
	}
}

// TestDemoHelpCountsTheScenario: the help's size of the default scenario
// is counted from it: six nodes and 38 GPUs (exporter/sim/testdata's
// default.yaml; make demo prints "Simulated 6 nodes"). At 36bc8ff the
// help said "5 nodes and 36 GPUs".
func TestDemoHelpCountsTheScenario(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"demo", "--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "6 nodes and 38 GPUs") || strings.Contains(stdout.String(), "{") {
		t.Errorf("demo --help does not count the default scenario:\n%s", stdout.String())
	}
}

// TestDemoHasAPreviousWindow: the demo also simulates the window before
// its own (at --previous-step), so its report shows each team's change
// against it, the column a team lead reads first; --previous-step 0 leaves
// it out. At 36bc8ff the demo had no previous window and every change was
// empty.
func TestDemoHasAPreviousWindow(t *testing.T) {
	for _, c := range []struct {
		previous   string
		wantChange bool
	}{{"10m", true}, {"0", false}} {
		var stdout, stderr bytes.Buffer
		args := []string{"demo", "--duration", "3h", "--end", "2026-01-05T14:00:00Z", "--step", "2m", "--previous-step", c.previous, "-o", "json", "--quiet"}
		if code := execute(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("--previous-step %s: exit %d: %s", c.previous, code, stderr.String())
		}
		var r struct {
			Cluster struct {
				Change *struct {
					AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
				} `json:"change"`
			} `json:"cluster"`
			Teams []struct {
				Change *json.RawMessage `json:"change"`
			} `json:"teams"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.Cluster.Change != nil; got != c.wantChange {
			t.Errorf("--previous-step %s: the fleet's change is there: %v, want %v", c.previous, got, c.wantChange)
		}
		for i, tm := range r.Teams {
			if got := tm.Change != nil && string(*tm.Change) != "null"; got != c.wantChange {
				t.Errorf("--previous-step %s: team %d's change is there: %v, want %v", c.previous, i, got, c.wantChange)
			}
		}
	}
}
