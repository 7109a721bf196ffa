package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gpulens/gpulens/internal/testenv"
)

// The serve tests analyse the demo TSDB the recommend tests share
// (recommend_test.go): six hours, so that an analysis takes a second or
// two on a busy machine.
const (
	serveDemoEnd   = "2026-01-05T14:00:00Z"
	serveDemoSince = "6h"
	// serveDemoStep is the demo's --step: the TSDB's scrape interval.
	serveDemoStep = "2m"
)

func serveDemo(t *testing.T) string { return demoTSDB(t) }

// startServe runs 'gpulens serve' in process with args until the test
// ends (or stop is called), and waits until it is ready.
func startServe(t *testing.T, args ...string) (base string, stop func() error) {
	t.Helper()
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	root := newRootCmd(io.Discard, &stderr)
	root.SetArgs(append([]string{"serve", "--data-dir", serveDemo(t), "--since", serveDemoSince, "--until", serveDemoEnd,
		"--step", serveDemoStep, "--no-kubernetes", "--web.listen-address", addr}, args...))
	errc := make(chan error, 1)
	go func() { errc <- root.ExecuteContext(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-errc:
			case <-time.After(30 * time.Second):
				runErr = fmt.Errorf("serve did not stop within 30s of its context ending:\n%s", stderr.String())
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	base = "http://" + addr
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-errc:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready after 90s:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameReport parses a JSON report for comparison, less the note saying
// why the cluster was not read: the demo has no cluster and says so, where
// report and serve say --no-kubernetes was given.
func sameReport(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v\n%.300s", err, b)
	}
	if c, ok := r["coverage"].(map[string]any); ok {
		notes, _ := c["notes"].([]any)
		c["notes"] = slices.DeleteFunc(slices.Clone(notes), func(n any) bool {
			s, _ := n.(string)
			return strings.HasPrefix(s, "not read from the cluster: ")
		})
	}
	return r
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, b)
	}
	return string(b)
}

// TestServeEndToEnd runs serve over the demo's TSDB with a real
// Alertmanager: the analysis, its series, the API and the alerts.
func TestServeEndToEnd(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	am := testenv.StartAlertmanager(t)
	base, stop := startServe(t, "--interval", "20s", "--alertmanager.url", am.URL, "--alertmanager.resend-interval", "1s",
		"--web.external-url", "http://gpulens.example:9846")

	// The report is the one 'gpulens report --format json' prints, and the
	// one the demo printed as it wrote the TSDB: one session, one report.
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"report", "--data-dir", serveDemo(t), "--since", serveDemoSince, "--until", serveDemoEnd,
		"--step", serveDemoStep, "--no-kubernetes", "-o", "json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	report, served, demo := sameReport(t, stdout.Bytes()), sameReport(t, []byte(httpGet(t, base+"/api/v1/report"))), sameReport(t, demoTSDBJSON)
	if !reflect.DeepEqual(served, report) {
		t.Errorf("/api/v1/report differs from 'gpulens report --format json'")
	}
	// The demo's reclaim preview is its own: it takes the simulator for
	// the API server, which a report of the store alone has not.
	if demo["reclaim_preview"] == nil {
		t.Errorf("the demo's report has no reclaim_preview")
	}
	delete(demo, "reclaim_preview")
	if !reflect.DeepEqual(demo, report) {
		t.Errorf("'gpulens demo --format json' differs from 'gpulens report --format json' over its TSDB")
	}
	if c, _ := report["consolidation"].(map[string]any); c == nil || c["gpus_today"] != float64(4*8+4+2) {
		t.Errorf("the report's consolidation %v, want a plan of the demo's 38 GPUs (4 nodes of 8, a DRA node of 4, a HAMi node of 2)", report["consolidation"])
	}

	var fr struct {
		Stale    bool `json:"stale"`
		Findings []struct {
			Kind      string `json:"kind"`
			Severity  string `json:"severity"`
			Namespace string `json:"namespace"`
			Workload  string `json:"workload"`
			Node      string `json:"node"`
			GPUUUID   string `json:"gpu_uuid"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(httpGet(t, base+"/api/v1/findings")), &fr); err != nil {
		t.Fatal(err)
	}
	identities := map[string]bool{}
	for _, f := range fr.Findings {
		identities[strings.Join([]string{f.Kind, f.Severity, f.Namespace, f.Workload, f.Node, f.GPUUUID}, "|")] = true
	}
	if fr.Stale || len(identities) < 5 {
		t.Fatalf("findings: stale %v, %d distinct; the demo week has more", fr.Stale, len(identities))
	}

	metricsText := httpGet(t, base+"/metrics")
	if n := strings.Count(metricsText, "\ngpulens_finding{"); n != len(identities) {
		t.Errorf("%d gpulens_finding series, want one per distinct finding (%d)", n, len(identities))
	}
	for _, s := range []string{`gpulens_team_gpu_seconds{team="team-nlp",state="allocated"}`, `gpulens_serve_analyses_total{result="success"} 1`,
		"gpulens_serve_stale 0", `gpulens_serve_notifications_sent_total{alertmanager="` + am.URL + `"}`} {
		if !strings.Contains(metricsText, s) {
			t.Errorf("/metrics lacks %s", s)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(metricsText)
	out, _ := cmd.CombinedOutput()
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			t.Errorf("promtool check metrics: %s", l)
		}
	}

	// Every distinct finding is an alert, linked to the report.
	deadline := time.Now().Add(30 * time.Second)
	for {
		alerts, err := am.Alerts()
		if err == nil && len(alerts) == len(identities) {
			for _, a := range alerts {
				if !strings.HasPrefix(a.Labels["alertname"], "GPULens") || a.Labels["severity"] == "" ||
					a.Annotations["report"] != "http://gpulens.example:9846/api/v1/report" {
					t.Errorf("alert %v %v", a.Labels, a.Annotations)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Alertmanager holds %d alerts (err %v), want %d", len(alerts), err, len(identities))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// SIGTERM's path: the context ends and serve returns cleanly.
	if err := stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}

// TestServePushesToVictoriaMetrics checks --push.url against a real
// VictoriaMetrics: the findings series arrive with the extra label.
func TestServePushesToVictoriaMetrics(t *testing.T) {
	vm := testenv.Env(t, "GPULENS_TEST_VICTORIAMETRICS_URL")
	run := fmt.Sprintf("t%d", time.Now().UnixNano())
	base, _ := startServe(t, "--interval", "1m", "--push.url", vm+"/api/v1/import/prometheus", "--push.interval", "500ms",
		"--push.extra-label", "gpulens_test_run="+run)
	want := strings.Count(httpGet(t, base+"/metrics"), "\ngpulens_finding{")

	q := url.Values{"match[]": {`gpulens_finding{gpulens_test_run="` + run + `"}`}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		body := httpGet(t, vm+"/api/v1/export?"+q.Encode())
		got := strings.Count(body, `"__name__":"gpulens_finding"`)
		if got == want && want > 0 {
			if !strings.Contains(body, `"kind":"`) || !strings.Contains(body, `"severity":"`) {
				t.Errorf("pushed series lack their labels:\n%.500s", body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VictoriaMetrics has %d gpulens_finding series of this run, want %d", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--no-kubernetes"}, exitUsage, "no metrics source"},
		{[]string{"serve", "--data-dir", t.TempDir()}, exitData, "is empty"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--interval", "0s"}, exitUsage, "--interval"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--alertmanager.url", "am:9093"}, exitUsage, "--alertmanager.url"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--push.url", "vm:8428"}, exitUsage, "--push.url"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--push.url", "http://vm", "--push.extra-label", "1x=y"}, exitUsage, "--push.extra-label"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--since", "a week"}, exitUsage, "--since"},
		{[]string{"serve", "--prometheus-url", "http://p:9090", "--log.level", "loud"}, exitUsage, "--log.level"},
	} {
		var stdout, stderr bytes.Buffer
		if code := execute(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, stderr.String(), c.want)
		}
	}
}

func TestServeKeepsSecretsOutOfErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	execute([]string{"serve", "--prometheus-url", "http://p:9090", "--alertmanager.url", "http://u:hunter2@[::1"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "hunter2") {
		t.Errorf("the password is in the error: %s", stderr.String())
	}
}

// TestServeWebConfigBasicAuth checks that --web.config.file reaches
// exporter-toolkit: without the password nothing is served.
func TestServeWebConfigBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(cfg, []byte("basic_auth_users:\n  gpulens: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	root := newRootCmd(io.Discard, &stderr)
	root.SetArgs([]string{"serve", "--data-dir", serveDemo(t), "--since", serveDemoSince, "--until", serveDemoEnd,
		"--no-kubernetes", "--web.listen-address", addr, "--web.config.file", cfg})
	errc := make(chan error, 1)
	go func() { errc <- root.ExecuteContext(ctx) }()
	defer func() { cancel(); <-errc }()

	get := func(user, pass string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(60 * time.Second)
	for get("gpulens", "s3cret") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered with the right password:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("without a password: %d, want 401", code)
	}
	if code := get("gpulens", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("with a wrong password: %d, want 401", code)
	}
	if strings.Contains(stderr.String(), "s3cret") {
		t.Error("the password is in the log")
	}
}
