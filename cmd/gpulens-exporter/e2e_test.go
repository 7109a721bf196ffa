package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// exporterBin is the binary under test, built once: the end-to-end tests
// exercise the real process, flags, signals and listeners.
var exporterBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "gpulens-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exporterBin = filepath.Join(dir, "gpulens-exporter")
	build := exec.Command("go", "build", "-o", exporterBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the exporter:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a child's stderr while the test reads it.
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

type exporterProc struct {
	addr   string
	stderr *syncBuffer
	cmd    *exec.Cmd
}

// startExporter runs the binary on a free loopback port and waits until it
// answers. The process is stopped with SIGTERM at the end of the test.
func startExporter(t *testing.T, client *http.Client, scheme string, args ...string) *exporterProc {
	t.Helper()
	p := &exporterProc{addr: testenv.FreeAddr(t), stderr: &syncBuffer{}}
	p.cmd = exec.Command(exporterBin, append([]string{"--web.listen-address=" + p.addr}, args...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			t.Errorf("exporter did not stop on SIGINT\n%s", p.stderr)
		}
	})
	if client == nil {
		client = http.DefaultClient
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get(scheme + "://" + p.addr + "/")
		if err == nil {
			resp.Body.Close()
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("exporter did not answer on %s\n%s", p.addr, p.stderr)
	return nil
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitHealthy polls /healthz until the first collection completed.
func waitHealthy(t *testing.T, p *exporterProc) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if code, _ := get(t, "http://"+p.addr+"/healthz"); code == 200 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("never healthy\n%s", p.stderr)
}

// volatile series change between runs (durations, runtime, build) and are
// left out of the golden file.
func stable(exposition string) string {
	var out strings.Builder
	sc := bufio.NewScanner(strings.NewReader(exposition))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name := line
		if strings.HasPrefix(line, "# ") {
			if f := strings.Fields(line); len(f) > 2 {
				name = f[2]
			}
		}
		switch {
		// The kubelet client's series are stable (the simulated kubelet
		// answers every refresh), and belong in the file that promtool
		// checks.
		case strings.HasPrefix(name, "gpulens_exporter_podresources_"):
		case strings.HasPrefix(name, "go_"), strings.HasPrefix(name, "process_"),
			strings.HasPrefix(name, "gpulens_exporter_"), strings.HasPrefix(name, "promhttp_"):
			continue
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; rerun with -update if intended. Diff with: go test ./cmd/gpulens-exporter -run %s -update && git diff", path, t.Name())
	}
}

// simArgs pin the simulated clock so the exposition is reproducible: it
// starts at a fixed instant and moves one interval per collection, and the
// long interval means only the first collection runs during the test.
var simArgs = []string{"--backend=sim", "--sim.start=2026-01-05T14:00:00Z", "--collect.interval=1h"}

func TestEndToEndGoldenMetrics(t *testing.T) {
	p := startExporter(t, nil, "http", simArgs...)
	waitHealthy(t, p)
	code, body := get(t, "http://"+p.addr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{"gpulens_exporter_build_info", "go_goroutines", "gpulens_exporter_collections_total{result=\"success\"} 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	golden(t, "metrics.golden.prom", stable(body))
}

func TestLandingPageAndHealth(t *testing.T) {
	p := startExporter(t, nil, "http", simArgs...)
	waitHealthy(t, p)
	code, body := get(t, "http://"+p.addr+"/")
	if code != 200 || !strings.Contains(body, "/metrics") || !strings.Contains(body, "gpulens-exporter") {
		t.Errorf("landing page: %d\n%s", code, body)
	}
	if code, body := get(t, "http://"+p.addr+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
}

func TestNVMLBackendWithoutDriver(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("an NVIDIA driver is present")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exporterBin, "--backend=nvml", "--web.listen-address="+testenv.FreeAddr(t))
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitConfig {
		t.Fatalf("exit %v, want %d\n%s", err, exitConfig, out)
	}
	for _, want := range []string{"NVML", "driver", "--backend=sim"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
}

// TestDumpSnapshot: --debug.dump-snapshot prints what the backend read, as
// JSON, with unsupported values as null, and exits 0.
func TestDumpSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exporterBin, "--backend=sim", "--sim.node=gpu-h100-01",
		"--collect.interval=100ms", "--debug.dump-snapshot", "--log.level=warn").Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var snap struct {
		DriverVersion string
		Devices       []struct {
			UUID      string
			MIGMode   bool
			SMActive  *float64
			Instances []struct{ Profile string }
		}
	}
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, out)
	}
	if snap.DriverVersion == "" || len(snap.Devices) != 8 {
		t.Fatalf("driver %q, %d devices", snap.DriverVersion, len(snap.Devices))
	}
	for _, d := range snap.Devices {
		if !d.MIGMode && d.SMActive == nil {
			t.Errorf("%s: no GPM SM activity on the second sample of an H100", d.UUID)
		}
		if d.MIGMode && len(d.Instances) == 0 {
			t.Errorf("%s: MIG mode without instances", d.UUID)
		}
	}
}
