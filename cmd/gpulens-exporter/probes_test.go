package main

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gpulens/gpulens/exporter/sim/simkube"
	"github.com/gpulens/gpulens/internal/testenv"
)

// TestEveryGPUHung: with every GPU of the node hanging, /healthz fails (a
// library wedged in the process, which a restart clears) and so does
// /readyz; before, /healthz said 200.
func TestEveryGPUHung(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hung.yaml")
	var faults strings.Builder
	for i := range 8 {
		faults.WriteString("      - {gpu: " + string(rune('0'+i)) + ", kind: hang, at: 0s}\n")
	}
	os.WriteFile(path, []byte("seed: 7\nnodes:\n  - name: n1\n    system: dgxh100\n    faults:\n"+faults.String()), 0o644)
	p := startExporter(t, nil, "http", "--backend=sim", "--sim.scenario="+path, "--collect.interval=1h",
		"--collect.timeout=200ms")
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get(t, "http://"+p.addr+"/healthz")
		if code == http.StatusServiceUnavailable && strings.Contains(body, "none of the 8 GPUs answered") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz with every GPU hung: %d %q, want 503 naming the GPUs\n%s", code, body, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := get(t, "http://"+p.addr+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with every GPU hung: %d %q, want 503", code, body)
	}
}

// TestKubeletShortOutages: six 2-second kubelet outages, with collections
// and refreshes an hour apart. Each is visible within a second on /metrics
// (podresources_up 0, no container series, one more refresh failure with
// reason unreachable) and on /readyz (503), and attribution is back within
// three seconds of the kubelet. Before, old attribution was served with
// podresources_up 1 throughout.
func TestKubeletShortOutages(t *testing.T) {
	socket, node := kubeletSocket(t), defaultNode(t)
	stopKubelet, err := simkube.ServeKubelet(socket, node)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopKubelet() }()

	p := startExporter(t, nil, "http", "--backend=sim", "--sim.start=2026-01-05T14:00:00Z", "--collect.interval=1h",
		"--no-sim.kubelet", "--kubelet.pod-resources-socket="+socket, "--path.procfs=")
	waitHealthy(t, p)
	url := "http://" + p.addr
	attributed := func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 1") &&
			strings.Contains(b, `gpulens_container_gpu_allocation_ratio{container="main",gpu="0"`)
	}
	within := func(d time.Duration, what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			if ok(scrape(t, url+"/metrics")) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v\n%s", what, d, scrape(t, url+"/metrics"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	within(10*time.Second, "attribution", attributed)
	if code, body := get(t, url+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the kubelet up: %d %q", code, body)
	}
	const failures = `gpulens_exporter_podresources_refresh_failures_total{reason="unreachable"}`
	for i := range 6 {
		before := seriesValue(t, scrape(t, url+"/metrics"), failures)
		stopKubelet()
		stopped := time.Now()
		within(time.Second, "outage seen", func(b string) bool {
			return strings.Contains(b, "gpulens_exporter_podresources_up 0") && !strings.Contains(b, "gpulens_container_") &&
				seriesValue(t, b, failures) > before
		})
		if code, body := get(t, url+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "kubelet") {
			t.Errorf("outage %d: /readyz %d %q, want 503 naming the kubelet", i, code, body)
		}
		if code, _ := get(t, url+"/healthz"); code != http.StatusOK {
			t.Errorf("outage %d: /healthz %d: a kubelet outage must not restart the exporter", i, code)
		}
		time.Sleep(2*time.Second - time.Since(stopped))
		if stopKubelet, err = simkube.ServeKubelet(socket, node); err != nil {
			t.Fatal(err)
		}
		within(3*time.Second, "attribution back", attributed)
	}
	if n := strings.Count(p.stderr.String(), "pod-resources API unreachable"); n != 6 {
		t.Errorf("%d warnings for six outages; want one line per outage:\n%s", n, p.stderr)
	}
}

// seriesValue is the value of the series written exactly as series in the
// exposition body.
func seriesValue(t *testing.T, body, series string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no series %s in\n%s", series, body)
	return 0
}

// TestHealthListenerUnderWebConfig: with TLS and basic auth on the main
// listener, --web.health-address serves the probes in plain HTTP without
// credentials, and nothing else; the main listener still asks for them.
func TestHealthListenerUnderWebConfig(t *testing.T) {
	dir := t.TempDir()
	pool := writeCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web-config.yml")
	os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"+
		"basic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	health := testenv.FreeAddr(t)
	p := startExporter(t, client, "https", append(simArgs, "--web.config.file="+cfg, "--web.health-address="+health)...)

	resp, err := client.Get("https://" + p.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("main listener /healthz without credentials: %d, want 401", resp.StatusCode)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _ := get(t, "http://"+health+"/healthz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health listener /healthz: %d\n%s", code, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := get(t, "http://"+health+"/readyz"); code != http.StatusOK {
		t.Errorf("health listener /readyz: %d %q", code, body)
	}
	if code, _ := get(t, "http://"+health+"/metrics"); code != http.StatusNotFound {
		t.Errorf("health listener /metrics: %d, want 404 (only the probes are unauthenticated)", code)
	}
}
