package e2e

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

var (
	gpulensOnce sync.Once
	gpulensBin  string
	gpulensErr  error
)

// gpulens builds the analyzer's binary once: the fault tests need the real
// process, its exit code and the files it leaves behind.
func gpulens(t *testing.T) string {
	t.Helper()
	gpulensOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpulens-bin-")
		if err != nil {
			gpulensErr = err
			return
		}
		gpulensBin = filepath.Join(dir, "gpulens")
		out, err := exec.Command("go", "build", "-o", gpulensBin, "../cmd/gpulens").CombinedOutput()
		if err != nil {
			gpulensErr = errors.New("building cmd/gpulens: " + err.Error() + "\n" + string(out))
		}
	})
	if gpulensErr != nil {
		t.Fatal(gpulensErr)
	}
	return gpulensBin
}

// killProxy forwards TCP to a server and, when the client sends its n-th
// PromQL query, kills the server and closes every connection and its own
// listener. To the client, the server at this address died while
// answering: the query in flight gets no answer, later ones are refused.
// Counting requests in the byte stream picks a moment in the middle of the
// analysis that a timer could not hit reliably.
type killProxy struct {
	ln      net.Listener
	target  string
	n       int
	kill    func()
	mu      sync.Mutex
	queries int
	tripped bool
	conns   []net.Conn
}

var queryMarker = []byte("/api/v1/query")

func startKillProxy(t *testing.T, target string, n int, kill func()) *killProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &killProxy{ln: ln, target: target, n: n, kill: kill}
	t.Cleanup(p.trip)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	return p
}

func (p *killProxy) handle(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.tripped {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(c, up); c.Close() }()
	buf := make([]byte, 32<<10)
	var tail []byte // a marker split across two reads is still counted once
	for {
		n, err := c.Read(buf)
		if n > 0 {
			chunk := append(tail, buf[:n]...)
			if p.count(bytes.Count(chunk, queryMarker)) {
				p.trip()
				return
			}
			tail = append([]byte(nil), chunk[max(0, len(chunk)-len(queryMarker)+1):]...)
			if _, err := up.Write(buf[:n]); err != nil {
				c.Close()
				return
			}
		}
		if err != nil {
			up.Close()
			return
		}
	}
}

// count adds queries seen and says whether the n-th has arrived.
func (p *killProxy) count(k int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries += k
	return !p.tripped && p.queries >= p.n
}

func (p *killProxy) trip() {
	p.mu.Lock()
	if p.tripped {
		p.mu.Unlock()
		return
	}
	p.tripped = true
	conns := p.conns
	p.mu.Unlock()
	if p.kill != nil {
		p.kill()
	}
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
}

func (p *killProxy) wasTripped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tripped
}

// TestReportWhenPrometheusDies: a real Prometheus serving the simulated
// window is killed (SIGKILL) while `gpulens report --output FILE` runs its
// queries. The report exits 3 with an error naming the server, leaves a
// FILE that existed untouched, creates none otherwise, and leaves no
// temporary file behind.
func TestReportWhenPrometheusDies(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	bin := gpulens(t)
	blocks := backfilled(t, promtool)

	for _, existed := range []bool{false, true} {
		name := "no previous file"
		if existed {
			name = "previous file kept"
		}
		t.Run(name, func(t *testing.T) {
			srv, addr := serveBlocks(t, prometheus, blocks)
			// The fifth of about fifty queries: well into the analysis.
			proxy := startKillProxy(t, addr, 5, func() {
				_ = srv.cmd.Process.Kill()
				<-srv.done
			})

			outDir := t.TempDir()
			out := filepath.Join(outDir, "week.html")
			const previous = "last week's report\n"
			if existed {
				if err := os.WriteFile(out, []byte(previous), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stderr bytes.Buffer
			// --no-remote-read: the proxy counts connections, and remote
			// read's few streamed requests over kept-alive ones would end
			// the analysis before the fifth; the engine's path opens one
			// a query or so.
			cmd := exec.Command(bin, "report", "--prometheus-url", "http://"+proxy.ln.Addr().String(), "--no-remote-read",
				"--until", simEnd.Format(time.RFC3339), "--since", "6h", "--no-kubernetes",
				"--retries", "2", "--timeout", "30s", "-o", "html", "--output-file", out)
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 {
				t.Fatalf("report = %v, want exit code 3\nstderr:\n%s", err, stderr.String())
			}
			if !proxy.wasTripped() {
				t.Fatalf("the report failed before Prometheus was killed:\n%s", stderr.String())
			}
			msg := stderr.String()
			for _, want := range []string{"prometheus at http://" + proxy.ln.Addr().String(), "query failed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "panic") || strings.Count(strings.TrimSpace(msg), "\n") > 20 {
				t.Errorf("stderr is not one clear error:\n%s", msg)
			}
			t.Logf("exit 3 after %v: %s", time.Since(start).Round(time.Millisecond), lastLine(msg))

			got, err := os.ReadFile(out)
			switch {
			case existed && (err != nil || string(got) != previous):
				t.Errorf("the previous %s was not kept: %q, %v", out, got, err)
			case !existed && !errors.Is(err, os.ErrNotExist):
				t.Errorf("%s exists after a failed report (%d bytes, %v)", out, len(got), err)
			}
			entries, err := os.ReadDir(outDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "week.html" {
					t.Errorf("left behind in the output directory: %s", e.Name())
				}
			}
		})
	}
}

var (
	blocksOnce sync.Once
	blocksDir  string
	blocksErr  error
)

// backfilled is the simulated window as Prometheus blocks, written once
// for the package with promtool; each server gets its own copy.
func backfilled(t *testing.T, promtool string) string {
	t.Helper()
	f := simulated(t)
	blocksOnce.Do(func() {
		dir := filepath.Join(fixtureDir, "blocks")
		out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", f.openMetrics, dir).CombinedOutput()
		if err != nil {
			blocksErr = errors.New("promtool backfill: " + err.Error() + "\n" + string(out))
		}
		blocksDir = dir
	})
	if blocksErr != nil {
		t.Fatal(blocksErr)
	}
	return blocksDir
}

// serveBlocks starts a Prometheus with no scrape jobs on a copy of blocks.
func serveBlocks(t *testing.T, prometheus, blocks string) (*server, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	run(t, time.Minute, "cp", "-a", blocks, data)
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte("global: {evaluation_interval: 1m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	srv := startServer(t, "prometheus", prometheus, httpURL(addr, "/-/ready"),
		"--config.file="+config, "--storage.tsdb.path="+data, "--web.listen-address="+addr,
		"--storage.tsdb.retention.time=100y")
	return srv, addr
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
