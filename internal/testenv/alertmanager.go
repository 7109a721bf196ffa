package testenv

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Alertmanager is a real prometheus-alertmanager process on a loopback
// port of its own, which a test can kill and start again on the same
// address (what an Alertmanager restart looks like to a client).
type Alertmanager struct {
	URL  string
	t    testing.TB
	bin  string
	dir  string
	addr string
	cmd  *exec.Cmd
	done chan struct{}
	n    int
}

// StartAlertmanager starts one, stopped when the test ends.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := LookPath(t, "prometheus-alertmanager")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte("route: {receiver: \"null\"}\nreceivers: [{name: \"null\"}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	am := &Alertmanager{URL: "http://" + addr, t: t, bin: bin, dir: dir, addr: addr}
	am.Start()
	t.Cleanup(am.Kill)
	return am
}

// Start starts the process (again) and waits until it is ready.
func (a *Alertmanager) Start() {
	a.t.Helper()
	a.n++
	logPath := filepath.Join(a.dir, fmt.Sprintf("alertmanager-%d.log", a.n))
	logFile, err := os.Create(logPath)
	if err != nil {
		a.t.Fatal(err)
	}
	a.cmd = exec.Command(a.bin, "--config.file="+filepath.Join(a.dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(a.dir, "data"), "--web.listen-address="+a.addr, "--cluster.listen-address=")
	a.cmd.Stdout, a.cmd.Stderr = logFile, logFile
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	done := make(chan struct{})
	a.done = done
	cmd := a.cmd
	go func() { _ = cmd.Wait(); logFile.Close(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			a.t.Fatalf("alertmanager exited before it was ready:\n%s", b)
		default:
		}
		if resp, err := http.Get(a.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			a.t.Fatalf("alertmanager not ready at %s after 30s:\n%s", a.URL, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill ends the process at once (SIGKILL): what it held in memory, the
// alerts among it, is gone.
func (a *Alertmanager) Kill() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Kill()
	<-a.done
	a.cmd = nil
}

// AMAlert is an alert as Alertmanager's GET /api/v2/alerts lists it.
type AMAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// Alerts lists the alerts Alertmanager holds that have not resolved.
func (a *Alertmanager) Alerts() ([]AMAlert, error) {
	return ListAlerts(a.URL)
}

// ListAlerts lists the unresolved alerts of the Alertmanager at url.
func ListAlerts(url string) ([]AMAlert, error) {
	resp, err := http.Get(url + "/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/api/v2/alerts: %s", url, resp.Status)
	}
	var out []AMAlert
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
