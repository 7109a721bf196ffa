package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	demoTSDBOnce sync.Once
	demoTSDBDir  string
	demoTSDBErr  string
	// demoTSDBJSON is the report the demo printed as it wrote the TSDB.
	demoTSDBJSON []byte
)

// demoTSDB simulates six hours of the default fleet once for the tests of
// this file; the end is fixed so the figures are reproducible.
func demoTSDB(t *testing.T) string {
	t.Helper()
	demoTSDBOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpulens-recommend-")
		if err != nil {
			demoTSDBErr = err.Error()
			return
		}
		demoTSDBDir = filepath.Join(dir, "tsdb")
		var stdout, stderr bytes.Buffer
		if code := execute([]string{"demo", "--duration", "6h", "--end", "2026-01-05T14:00:00Z", "--step", "2m",
			"--data-dir", demoTSDBDir, "-o", "json"}, &stdout, &stderr); code != exitOK {
			demoTSDBErr = stderr.String()
		}
		demoTSDBJSON = stdout.Bytes()
	})
	if demoTSDBErr != "" {
		t.Fatal(demoTSDBErr)
	}
	return demoTSDBDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoTSDBDir != "" {
		os.RemoveAll(filepath.Dir(demoTSDBDir))
	}
	os.Exit(code)
}

func recommendArgs(dir string, extra ...string) []string {
	return append([]string{"recommend", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--no-kubernetes"}, extra...)
}

func TestRecommendJSON(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "-o", "json", "--all"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%.300s", err, stdout.String())
	}
	if len(out) == 0 {
		t.Fatal("no findings on the demo fleet")
	}
	kinds := map[string]bool{}
	for _, f := range out {
		for _, field := range []string{"kind", "severity", "evidence", "recommendation", "monthly_savings_usd", "confidence"} {
			if _, ok := f[field]; !ok {
				t.Errorf("finding %v lacks %q", f["kind"], field)
			}
		}
		kinds[f["kind"].(string)] = true
	}
	for _, k := range []string{"idle-allocation", "unallocated-capacity"} {
		if !kinds[k] {
			t.Errorf("the demo fleet yields no %s finding; kinds: %v", k, kinds)
		}
	}
	if !strings.Contains(stderr.String(), "skipped: untainted-gpu-node") {
		t.Errorf("without cluster access the skipped findings must be said: %s", stderr.String())
	}
}

// TestRecommendYAMLPatchesParse: without cluster access workloads are
// inferred from pod names: the demo's notebooks, Kubeflow's NAME-0 pods,
// are StatefulSets scaled to 0 by a document; a bare pod's new request
// cannot be made where it runs (recsys-train-small): its manifest's patch
// is a comment; any document is an object.
func TestRecommendYAMLPatchesParse(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "-o", "yaml"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	objectDocs(t, stdout.Bytes())
	for _, want := range []string{"#   kind: Pod\n", "#     name: recsys-train-small\n",
		"kind: StatefulSet\nmetadata:\n  name: grace-jupyter\n  namespace: research-notebooks\nspec:\n  replicas: 0\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q:\n%s", want, stdout.String())
		}
	}
}

func TestRecommendBadFormat(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"recommend", "--data-dir", t.TempDir(), "-o", "xml"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr.String())
	}
}

// TestRecommendCSVNamespace: -n keeps one namespace's findings, as
// kubectl's does, and -o csv writes them one per row with the JSON form's
// column names; the demo's fleet-wide findings (unallocated capacity)
// belong to no namespace and leave.
func TestRecommendCSVNamespace(t *testing.T) {
	dir := demoTSDB(t)
	var all, one, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "-o", "json", "--all"), &all, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var every []struct {
		Namespace string `json:"namespace"`
	}
	if err := json.Unmarshal(all.Bytes(), &every); err != nil {
		t.Fatal(err)
	}
	byNS := map[string]int{}
	for _, f := range every {
		byNS[f.Namespace]++
	}
	if byNS[""] == 0 || len(byNS) < 3 {
		t.Fatalf("the demo's findings by namespace %v: want fleet-wide ones and several namespaces", byNS)
	}
	ns := ""
	for n := range byNS {
		if n != "" && (ns == "" || n < ns) {
			ns = n
		}
	}
	if code := execute(recommendArgs(dir, "-o", "csv", "--all", "-n", ns), &one, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rows, err := csv.NewReader(&one).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, one.String())
	}
	if len(rows) != 1+byNS[ns] || rows[0][3] != "namespace" {
		t.Fatalf("%d rows (header %v), want a header and %s's %d findings", len(rows), rows[0], ns, byNS[ns])
	}
	for _, r := range rows[1:] {
		if r[3] != ns {
			t.Errorf("row of namespace %q under -n %s", r[3], ns)
		}
	}
}

// TestRecommendSelector: -l selects findings by their labels as kubectl's
// selects objects: equality, inequality and a label's absence; a
// malformed selector is a usage error, before any analysis.
func TestRecommendSelector(t *testing.T) {
	dir := demoTSDB(t)
	var all, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "-o", "json", "--all"), &all, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var every []struct {
		Kind     string `json:"kind"`
		Severity string `json:"severity"`
		Node     string `json:"node"`
	}
	if err := json.Unmarshal(all.Bytes(), &every); err != nil {
		t.Fatal(err)
	}
	count := func(keep func(kind, severity, node string) bool) int {
		n := 0
		for _, f := range every {
			if keep(f.Kind, f.Severity, f.Node) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		selector string
		want     int
	}{
		{"kind=idle-allocation", count(func(k, _, _ string) bool { return k == "idle-allocation" })},
		{"kind=idle-allocation,severity!=info", count(func(k, s, _ string) bool { return k == "idle-allocation" && s != "info" })},
		{"!node", count(func(_, _, n string) bool { return n == "" })},
	} {
		if c.want == 0 {
			t.Fatalf("%s: the demo has no such finding, so the case proves nothing", c.selector)
		}
		var out bytes.Buffer
		stderr.Reset()
		if code := execute(recommendArgs(dir, "-o", "json", "--all", "-l", c.selector), &out, &stderr); code != exitOK {
			t.Fatalf("-l %s: exit %d: %s", c.selector, code, stderr.String())
		}
		var got []json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != c.want {
			t.Errorf("-l %s: %d findings (%v), want %d of %d", c.selector, len(got), err, c.want, len(every))
		}
	}
	stderr.Reset()
	if code := execute(recommendArgs(dir, "-l", "kind in (a"), &all, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-l/--selector") {
		t.Errorf("malformed selector: exit %d, %q", code, stderr.String())
	}
}

// TestRecommendFilterMatchingNothing: a filter that matches nothing says
// so, and a selector no finding could match is a usage error naming what
// there is (issue 52 item 6). At 36bc8ff each of these exited 0 with "No
// findings to act on: every workload is sized to its use".
func TestRecommendFilterMatchingNothing(t *testing.T) {
	dir := demoTSDB(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		// out is what stdout must hold, errOut what stderr must.
		out, errOut []string
	}{
		{"namespace not in the data", []string{"-n", "team-nope"}, exitOK,
			[]string{"No findings: no namespace team-nope in the data", "team-nlp"}, nil},
		{"namespace not in the data, json", []string{"-n", "team-nope", "-o", "json"}, exitOK,
			[]string{"[]"}, []string{"no namespace team-nope in the data"}},
		{"unknown selector key", []string{"-l", "tema=team-nlp"}, exitUsage,
			nil, []string{`no finding carries the label "tema"`, `did you mean "team"`, "allocation_path, cluster"}},
		{"unknown kind", []string{"-l", "kind=idle-alocation"}, exitUsage,
			nil, []string{`kind "idle-alocation" is not a finding's kind`, `did you mean "idle-allocation"`, "unallocated-capacity"}},
		{"unknown severity", []string{"-l", "severity in (warn)"}, exitUsage,
			nil, []string{`severity "warn"`, "critical, info, warning"}},
		{"team no finding has", []string{"-l", "team=team-nobody"}, exitOK,
			[]string{"No findings: no finding of the window has team=team-nobody"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := execute(recommendArgs(dir, c.args...), &stdout, &stderr)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, stderr.String())
			}
			for _, w := range c.out {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range c.errOut {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stdout.String(), "sized to its use") {
				t.Errorf("an empty filter reads as a fleet sized to its use:\n%s", stdout.String())
			}
		})
	}
}

// TestPriceKeyMatchingNoGPU: a --prices key that prices no GPU of the
// window is a warning naming the model meant (the demo's H100s report
// NVML's "NVIDIA H100 80GB HBM3"); at 36bc8ff it was ignored in silence.
func TestPriceKeyMatchingNoGPU(t *testing.T) {
	dir := demoTSDB(t)
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(prices, []byte("date: \"2026-12\"\nprices:\n  \"NVIDIA H100 80GB HBM\": 5.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := execute(recommendArgs(dir, "--prices", prices, "-o", "json"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := `did you mean "NVIDIA H100 80GB HBM3"?`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}
