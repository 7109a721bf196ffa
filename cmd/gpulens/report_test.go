package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/report"
)

const fixtureUntil = "2026-03-16T00:00:00Z"

// fixtureDir writes the pipeline's fixture fleet into a TSDB directory.
func fixtureDir(t *testing.T) string {
	return pipelinetest.Dir(t, "../../analyzer/pipeline/testdata/fleet.yaml")
}

func TestReportCommand(t *testing.T) {
	dir := fixtureDir(t)
	var posts atomic.Int32
	var posted string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		var p map[string]string
		_ = json.NewDecoder(r.Body).Decode(&p)
		posted = p["text"]
	}))
	defer hook.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid_token", http.StatusBadRequest)
	}))
	defer refuse.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	// okHook records the paths posted to: each case that should post has
	// one of its own.
	var okPaths sync.Map
	okHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]string
		if json.NewDecoder(r.Body).Decode(&p) == nil && strings.HasPrefix(p["text"], "# GPU utilization report") {
			okPaths.Store(r.URL.Path, true)
		}
	}))
	defer okHook.Close()
	postedTo := func(path string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, ok := okPaths.Load(path); !ok {
				t.Errorf("no report posted to %s", path)
			}
		}
	}
	// The developer's own $GPULENS_WEBHOOK_URL must not receive test reports.
	t.Setenv(report.WebhookEnv, "")
	secrets := t.TempDir()
	hookFile := filepath.Join(secrets, "hook-url")
	emptyFile := filepath.Join(secrets, "empty")
	schemelessFile := filepath.Join(secrets, "schemeless")
	for p, v := range map[string]string{hookFile: okHook.URL + "/from-file\n", emptyFile: " \n",
		schemelessFile: "hooks.slack.com/services/T0/B0/sch3mel3ss-s3cret\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prom500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer prom500.Close()

	notTSDB := t.TempDir()
	_ = os.WriteFile(filepath.Join(notTSDB, "notes.txt"), []byte("hello"), 0o644)
	out := filepath.Join(t.TempDir(), "week.html")

	base := []string{"report", "--data-dir", dir, "--until", fixtureUntil, "--no-kubernetes"}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
		env        string // $GPULENS_WEBHOOK_URL
		check      func(t *testing.T)
	}{
		{name: "table", args: base, wantStdout: []string{"GPU UTILIZATION REPORT", "alice-jupyter", "TOP RECOMMENDATIONS"},
			wantStderr: []string{"Using the native schema (detected)."}},
		{name: "json", args: append(base, "-o", "json"), wantStdout: []string{`"teams": [`, `"team": "training"`, `"ledger": {`, `"cost_basis": "allocation"`}},
		{name: "usage basis", args: append(base, "--cost-basis", "usage", "-o", "markdown"),
			wantStdout: []string{"| Cost (usage basis) |", "## Reconciliation", "The teams' cost column is on the usage basis"}},
		{name: "unknown cost basis", args: append(base, "--cost-basis", "held"), wantCode: exitUsage, wantStderr: []string{`--cost-basis: "held" is not allocation or usage`}},
		{name: "html to a file", args: append(base, "-o", "html", "--output-file", out), check: func(t *testing.T) {
			b, err := os.ReadFile(out)
			if err != nil || !strings.Contains(string(b), `id="chart-waste"`) {
				t.Errorf("output file: %v, %d bytes", err, len(b))
			}
		}},
		{name: "webhook retried after a 500", args: append(base, "--send-webhook", hook.URL), wantStderr: []string{"Sent the report to the webhook."}, check: func(t *testing.T) {
			if posts.Load() != 2 || !strings.HasPrefix(posted, "# GPU utilization report") {
				t.Errorf("%d posts, text %.40q", posts.Load(), posted)
			}
		}},
		{name: "webhook refusing", args: append(base, "--send-webhook", refuse.URL), wantCode: 1,
			wantStderr: []string{"the report was not sent: the webhook answered 400 Bad Request after 1 attempt(s): invalid_token"}},
		{name: "webhook unreachable", args: append(base, "--send-webhook", gone.URL), wantCode: 1, wantStderr: []string{"the report was not sent", "connect"}},
		{name: "webhook URL from a file", args: append(base, "--send-webhook-file", hookFile), wantStderr: []string{"Sent the report"}, check: postedTo("/from-file")},
		{name: "webhook URL from the environment", args: base, env: okHook.URL + "/from-env", wantStderr: []string{"Sent the report"}, check: postedTo("/from-env")},
		{name: "--send-webhook over the environment", args: append(base, "--send-webhook", okHook.URL+"/from-flag"), env: gone.URL + "/never",
			wantStderr: []string{"Sent the report"}, check: postedTo("/from-flag")},
		{name: "both webhook flags", args: append(base, "--send-webhook", okHook.URL, "--send-webhook-file", hookFile), wantCode: exitUsage,
			wantStderr: []string{"--send-webhook and --send-webhook-file are exclusive"}},
		{name: "missing webhook file", args: append(base, "--send-webhook-file", filepath.Join(secrets, "nope")), wantCode: exitUsage,
			wantStderr: []string{"--send-webhook-file: open " + filepath.Join(secrets, "nope")}},
		{name: "empty webhook file", args: append(base, "--send-webhook-file", emptyFile), wantCode: exitUsage,
			wantStderr: []string{"--send-webhook-file: " + emptyFile + " is empty"}},
		{name: "webhook file without a URL", args: append(base, "--send-webhook-file", schemelessFile), wantCode: exitUsage,
			wantStderr: []string{"--send-webhook-file: " + schemelessFile + ": not an http(s) URL with a host"}},
		{name: "environment without a URL", args: base, env: "hooks.slack.com/services/T0/B0/sch3mel3ss-s3cret", wantCode: exitUsage,
			wantStderr: []string{"$GPULENS_WEBHOOK_URL: not an http(s) URL with a host"}},
		{name: "unknown format", args: append(base, "-o", "pdf"), wantCode: exitUsage, wantStderr: []string{`unknown output format "pdf" (want table, wide, markdown, html, json, yaml, csv, ledger-csv; to write to a file, --output-file FILE)`}},
		{name: "malformed since", args: append(base, "--since", "a week"), wantCode: exitUsage, wantStderr: []string{`--since: "a week" is not a duration`}},
		{name: "malformed until", args: []string{"report", "--data-dir", dir, "--until", "monday"}, wantCode: exitUsage, wantStderr: []string{"--until"}},
		{name: "unwritable output", args: append(base, "--output-file", filepath.Join(dir, "no", "such", "dir", "r.txt")), wantCode: 1,
			wantStderr: []string{"writing " + filepath.Join(dir, "no", "such", "dir", "r.txt")}},
		{name: "empty window", args: []string{"report", "--data-dir", dir, "--until", "2025-01-01T00:00:00Z", "--no-kubernetes"}, wantCode: exitNoData,
			wantStderr: []string{"no GPU series in embedded TSDB", "gpulens_gpu_info", "DCGM_FI_DEV_FB_USED"}},
		{name: "not a TSDB", args: []string{"report", "--data-dir", notTSDB, "--no-kubernetes"}, wantCode: exitData, wantStderr: []string{"not a Prometheus TSDB"}},
		{name: "missing data dir", args: []string{"report", "--data-dir", filepath.Join(notTSDB, "nope"), "--no-kubernetes"}, wantCode: exitData, wantStderr: []string{"no such file or directory"}},
		{name: "unreachable prometheus", args: []string{"report", "--prometheus-url", gone.URL, "--retries", "0", "--no-kubernetes"}, wantCode: exitUnreachable,
			wantStderr: []string{"prometheus at " + gone.URL, "connection refused"}},
		{name: "failing prometheus", args: []string{"report", "--prometheus-url", prom500.URL, "--retries", "0", "--no-kubernetes"}, wantCode: exitUnreachable,
			wantStderr: []string{prom500.URL, "503 Service Unavailable", "overloaded"}},
		{name: "no source", args: []string{"report"}, wantCode: exitUsage, wantStderr: []string{"give --prometheus-url URL or --data-dir DIR"}},
		{name: "bad header", args: []string{"report", "--prometheus-url", gone.URL, "--header", "X-Scope-OrgID"}, wantCode: exitUsage, wantStderr: []string{"is not K=V"}},
		{name: "no kubeconfig: runs from labels", args: []string{"report", "--data-dir", dir, "--until", fixtureUntil, "--kubeconfig", filepath.Join(notTSDB, "missing-kubeconfig")},
			wantStdout: []string{"Note", "not read from the cluster: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(report.WebhookEnv, tt.env)
			var stdout, stderr bytes.Buffer
			code := execute(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.wantCode, stderr.String())
			}
			if strings.Contains(stderr.String(), "s3cret") {
				t.Errorf("stderr shows the webhook URL's secret:\n%s", stderr.String())
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}

func TestReportHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"report", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Examples:", "gpulens report --prometheus-url", "--send-webhook", "--send-webhook-file", "$GPULENS_WEBHOOK_URL", "--team-label", "Exit codes:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestReportSampleLimitNamesTheFlag(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	code := execute([]string{"report", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z",
		"--no-kubernetes", "--query.max-samples", "1000"}, &stdout, &stderr)
	if code != exitData || !strings.Contains(stderr.String(), "--query.max-samples") {
		t.Errorf("exit %d, stderr %q: want exit %d naming --query.max-samples", code, stderr.String(), exitData)
	}
}
