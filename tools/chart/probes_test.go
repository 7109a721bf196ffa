package chart

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probePassword's bcrypt hash is in the web configs below; no probe sends it.
const (
	probePassword = "probe-test-password"
	probeHash     = "$2a$04$1JK7z.ZrJMcbsynxIVtfGOvDXJe16hzvVB.ZkTqrcFcUJIkAdvCIG"
)

// TestProbesUnderWebConfig renders the chart with each web config it
// offers (TLS with basic auth, basic auth alone), runs both binaries with
// the rendered container's arguments and environment (only what needs a
// node is swapped: the sim backend for NVML, a temporary socket, loopback
// ports, the mounted Secret's directory, the test Prometheus), and sends
// each rendered httpGet probe as the kubelet does: its scheme, port, path
// and headers, no credentials, no certificate check. Every liveness probe
// must pass, and every readiness probe reach its check; the same request
// on the main port is refused (401), which is what the chart's probes got
// before they moved to the health port.
func TestProbesUnderWebConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs both binaries")
	}
	bins := buildBinaries(t)
	promURL := os.Getenv("GPULENS_TEST_PROMETHEUS_URL")
	for _, wc := range []struct {
		name string
		tls  bool
	}{{"tls-and-basic-auth", true}, {"basic-auth", false}} {
		t.Run(wc.name, func(t *testing.T) {
			_, objs := render(t, entry{name: "probes-" + wc.name, values: `
exporter: {webConfig: {secretName: gpulens-web-config}}
analyzer: {webConfig: {secretName: gpulens-analyzer-web-config}}
`})
			secretDir := t.TempDir() // the Secret's files, as mounted
			config := "basic_auth_users:\n  prometheus: " + probeHash + "\n"
			if wc.tls {
				writeProbeCert(t, secretDir)
				config = "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n" + config
			}
			if err := os.WriteFile(filepath.Join(secretDir, "web-config.yml"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Run("exporter", func(t *testing.T) {
				c := exporterPod(t, objs).Containers[0]
				sockDir, err := os.MkdirTemp("", "pr") // unix socket paths are short
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(sockDir) })
				p := startContainer(t, filepath.Join(bins, "gpulens-exporter"), c, secretDir, func(arg string) string {
					switch {
					case arg == "--backend=nvml":
						return "--backend=sim" // no GPU here; the probes are the same
					case strings.HasPrefix(arg, "--kubelet.pod-resources-socket="):
						return "--kubelet.pod-resources-socket=" + filepath.Join(sockDir, "kubelet.sock")
					}
					return arg
				})
				p.probe(t, "metrics", wc.tls, func(code int, body string) bool { return code == http.StatusOK })
			})
			t.Run("analyzer", func(t *testing.T) {
				if promURL == "" {
					if os.Getenv("CI") == "true" {
						t.Fatal("GPULENS_TEST_PROMETHEUS_URL is not set (scripts/test-servers.sh start)")
					}
					t.Skip("GPULENS_TEST_PROMETHEUS_URL is not set (scripts/test-servers.sh start)")
				}
				c := deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec.Containers[0]
				p := startContainer(t, filepath.Join(bins, "gpulens"), c, secretDir, func(arg string) string {
					if strings.HasPrefix(arg, "--prometheus-url=") {
						return "--prometheus-url=" + promURL
					}
					return arg
				})
				// The test Prometheus holds no GPU series, so the analysis
				// fails: ready is a 503 from the check itself, not a 401.
				p.probe(t, "http", wc.tls, func(code int, body string) bool {
					return code == http.StatusOK || code == http.StatusServiceUnavailable && strings.Contains(body, "no successful analysis")
				})
			})
		})
	}
}

// container is a binary started from a rendered container.
type container struct {
	spec   corev1.Container
	addrs  map[int32]string // containerPort → loopback address
	stderr *lockedBuffer
}

// startContainer runs bin with c's arguments and literal environment.
// Listen addresses ":PORT" become free loopback addresses, recorded by
// container port; paths under the web config's mount point are read from
// secretDir; swap changes what needs a node.
func startContainer(t *testing.T, bin string, c corev1.Container, secretDir string, swap func(string) string) *container {
	t.Helper()
	p := &container{spec: c, addrs: map[int32]string{}, stderr: &lockedBuffer{}}
	var mount string
	for _, m := range c.VolumeMounts {
		if m.Name == "web-config" {
			mount = m.MountPath
		}
	}
	if mount == "" {
		t.Fatalf("%s: no web-config volume mount", c.Name)
	}
	var args []string
	for _, a := range c.Args {
		if flag, port, ok := strings.Cut(a, "=:"); ok && (flag == "--web.listen-address" || flag == "--web.health-address") {
			var n int32
			fmt.Sscan(port, &n)
			p.addrs[n] = freeLoopback(t)
			a = flag + "=" + p.addrs[n]
		}
		if flag, path, ok := strings.Cut(a, "="); ok && strings.HasPrefix(path, mount+"/") {
			a = flag + "=" + filepath.Join(secretDir, strings.TrimPrefix(path, mount+"/"))
		}
		args = append(args, swap(a))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NODE_NAME=gpu-node-1")
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not stop on SIGINT", c.Name)
		}
	})
	return p
}

// probe sends the container's liveness and readiness probes as the kubelet
// sends them until liveness answers 200 and ready accepts the readiness
// answer, then the same requests on the main port (mainPort, a port name),
// which must be refused without credentials.
func (p *container) probe(t *testing.T, mainPort string, mainTLS bool, ready func(code int, body string) bool) {
	t.Helper()
	for _, pr := range []struct {
		kind  string
		probe *corev1.Probe
		ok    func(int, string) bool
	}{
		{"liveness", p.spec.LivenessProbe, func(code int, _ string) bool { return code == http.StatusOK }},
		{"readiness", p.spec.ReadinessProbe, ready},
	} {
		if pr.probe == nil || pr.probe.HTTPGet == nil {
			t.Fatalf("%s: no httpGet %s probe", p.spec.Name, pr.kind)
		}
		g := pr.probe.HTTPGet
		url := p.url(t, g.Scheme, g.Port.String(), g.Path)
		var code int
		var body string
		deadline := time.Now().Add(60 * time.Second)
		for {
			code, body = kubeletGet(url, g.HTTPHeaders)
			if pr.ok(code, body) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s probe %s %s: %d %q\n%s", pr.kind, g.Scheme, url, code, body, p.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%s probe GET %s: %d %s", pr.kind, url, code, strings.TrimSpace(body))

		scheme := corev1.URISchemeHTTP
		if mainTLS {
			scheme = corev1.URISchemeHTTPS
		}
		mainURL := p.url(t, scheme, mainPort, g.Path)
		if code, body := kubeletGet(mainURL, g.HTTPHeaders); code != http.StatusUnauthorized {
			t.Errorf("%s probe on the main port %s: %d %q, want 401 (the web config applies there)", pr.kind, mainURL, code, body)
		}
	}
}

// url resolves a probe's port (a name or a number) against the container's
// ports and their loopback addresses.
func (p *container) url(t *testing.T, scheme corev1.URIScheme, port, path string) string {
	t.Helper()
	var n int32
	for _, cp := range p.spec.Ports {
		if cp.Name == port || fmt.Sprint(cp.ContainerPort) == port {
			n = cp.ContainerPort
		}
	}
	addr, ok := p.addrs[n]
	if !ok {
		t.Fatalf("%s: probe port %q is no port the container listens on (%v)", p.spec.Name, port, p.addrs)
	}
	if scheme == "" {
		scheme = corev1.URISchemeHTTP
	}
	return strings.ToLower(string(scheme)) + "://" + addr + path
}

// kubeletGet is the kubelet's httpGet probe: its User-Agent and Accept,
// the probe's headers, no credentials, and no certificate verification.
// A connection failure is code 0.
func kubeletGet(url string, headers []corev1.HTTPHeader) (int, string) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet's prober
	}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	for _, h := range headers {
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
	return resp.StatusCode, string(b)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// buildBinaries builds gpulens and gpulens-exporter from the repository
// once per test binary.
func buildBinaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "gpulens-chart-bin")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "-C", "../..", "build", "-o", binDir+"/", "./cmd/gpulens", "./cmd/gpulens-exporter").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the binaries: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// writeProbeCert writes a self-signed tls.crt and tls.key into dir.
func writeProbeCert(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpulens-probe-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: kb}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
