package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/sim/simkube"
)

// loadDuration is how long the load tests scrape: short by default so that
// CI stays fast, longer under GPULENS_LOAD_DURATION for the figures in
// docs/BENCHMARKS.md.
func loadDuration(t *testing.T, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv("GPULENS_LOAD_DURATION")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("GPULENS_LOAD_DURATION: %v", err)
	}
	return d
}

// loadResult is what a load run saw. failures holds the first few failures
// in full, so that a failed test says what went wrong.
type loadResult struct {
	scrapes   int
	errors    int
	failures  []string
	latencies []time.Duration
}

func (r *loadResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// scrapeLoad runs n scrapers back to back against url until stop closes.
// A scrape fails on a transport error, a status other than 200 or a body
// without gpulens_gpu_up: an exporter that answers 200 with nothing would
// otherwise pass.
func scrapeLoad(url string, n int, stop <-chan struct{}) *loadResult {
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				failure := scrapeOnce(client, url)
				took := time.Since(start)
				mu.Lock()
				res.scrapes++
				res.latencies = append(res.latencies, took)
				if failure != "" {
					res.errors++
					if len(res.failures) < 5 {
						res.failures = append(res.failures, failure)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return &res
}

func scrapeOnce(client *http.Client, url string) string {
	resp, err := client.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "reading the body: " + err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d: %.200s", resp.StatusCode, body)
	}
	if !strings.Contains(string(body), "gpulens_gpu_up{") {
		return fmt.Sprintf("no gpulens_gpu_up in %d bytes", len(body))
	}
	return ""
}

// rssKiB is the process's resident set (VmRSS) in KiB.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	kib, err := readRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

// readRSS is rssKiB for goroutines other than the test's, which must not
// call t.Fatal.
func readRSS(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// gpuUp is the gpulens_gpu_up value of each GPU in an exposition.
func gpuUp(body string) map[string]string {
	up := map[string]string{}
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "gpulens_gpu_up{") {
			gpu := line[strings.Index(line, `gpu="`)+5:]
			gpu = gpu[:strings.IndexByte(gpu, '"')]
			up[gpu] = strings.TrimSpace(line[strings.LastIndexByte(line, ' '):])
		}
	}
	return up
}

// TestScrapeLoad: concurrent scrapers against the 56-MIG H200 node while the
// background collection runs every 250ms and a GPU is lost a quarter in. No
// scrape may fail, and memory must stay bounded. The latency and RSS figures
// are logged for docs/BENCHMARKS.md; they are not asserted, the machine
// being shared.
func TestScrapeLoad(t *testing.T) {
	const scrapers = 8
	d := loadDuration(t, 10*time.Second)
	sc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", "h200-mig56.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The simulated clock is pinned, one interval per collection, so the
	// fault's offset in collections is its offset in wall time.
	const interval = 250 * time.Millisecond
	lostAt := max(time.Second, d/4)
	path := filepath.Join(t.TempDir(), "h200-mig56-lost.yaml")
	faults := fmt.Sprintf("    faults:\n      - {gpu: 3, kind: lost, at: %ds}\n", int(lostAt/time.Second))
	if err := os.WriteFile(path, append(sc, faults...), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startExporter(t, nil, "http", "--backend=sim", "--sim.scenario="+path, "--sim.start=2026-01-05T14:00:00Z",
		"--collect.interval="+interval.String(), "--log.level=warn")
	waitHealthy(t, p)
	url := "http://" + p.addr + "/metrics"
	if up := gpuUp(scrape(t, url)); len(up) != 8 || up["3"] != "1" {
		t.Fatalf("before the load: gpulens_gpu_up = %v, want 8 GPUs up", up)
	}
	before := rssKiB(t, p.cmd.Process.Pid)

	stop := make(chan struct{})
	var peak atomic.Int64
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if kib, err := readRSS(p.cmd.Process.Pid); err == nil && int64(kib) > peak.Load() {
					peak.Store(int64(kib))
				}
			}
		}
	}()
	time.AfterFunc(d, func() { close(stop) })
	res := scrapeLoad(url, scrapers, stop)
	after := rssKiB(t, p.cmd.Process.Pid)

	t.Logf("%d scrapers for %v: %d scrapes (%.0f/s), %d errors, p50 %v, p99 %v, max %v; RSS %.1f MiB before, %.1f MiB peak, %.1f MiB after",
		scrapers, d, res.scrapes, float64(res.scrapes)/d.Seconds(), res.errors,
		res.quantile(0.5).Round(10*time.Microsecond), res.quantile(0.99).Round(10*time.Microsecond), res.quantile(1).Round(10*time.Microsecond),
		float64(before)/1024, float64(peak.Load())/1024, float64(after)/1024)
	if res.errors > 0 {
		t.Errorf("%d of %d scrapes failed, want none; first: %q", res.errors, res.scrapes, res.failures)
	}
	if res.scrapes < scrapers {
		t.Errorf("only %d scrapes in %v", res.scrapes, d)
	}
	// Generous: the exporter holds about 100 MiB (docs/BENCHMARKS.md); a
	// leak per scrape would pass this bound within seconds at this rate.
	if after > 400*1024 {
		t.Errorf("RSS after the load %d MiB, want under 400", after/1024)
	}
	// Collections fall behind the wall clock on a loaded machine, and the
	// simulated clock with them: the loss may land a little later.
	var up map[string]string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if up = gpuUp(scrape(t, url)); up["3"] == "0" {
			break
		}
	}
	if up["3"] != "0" || up["0"] != "1" || len(up) != 8 {
		t.Errorf("after the load: gpulens_gpu_up = %v, want gpu 3 lost (0) and the 7 others up", up)
	}
	if code, body := get(t, "http://"+p.addr+"/healthz"); code != 200 {
		t.Errorf("a lost GPU made the exporter unhealthy: %d %s", code, body)
	}
}

// TestKubeletRestartUnderLoad: while scrapers run, the kubelet's socket is
// deleted and the kubelet restarted on a new one (as a kubelet restart
// does), then stopped and started again. No scrape fails, and attribution
// resumes each time without restarting the exporter.
func TestKubeletRestartUnderLoad(t *testing.T) {
	socket, node := kubeletSocket(t), defaultNode(t)
	stopKubelet, err := simkube.ServeKubelet(socket, node)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopKubelet() }()

	p := startExporter(t, nil, "http", "--backend=sim", "--sim.start=2026-01-05T14:00:00Z", "--collect.interval=200ms",
		"--no-sim.kubelet", "--kubelet.pod-resources-socket="+socket, "--path.procfs=")
	waitHealthy(t, p)
	url := "http://" + p.addr + "/metrics"
	attributed := func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 1") &&
			strings.Contains(b, `gpulens_container_gpu_allocation_ratio{container="main",gpu="0"`)
	}
	detached := func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 0") && !strings.Contains(b, "gpulens_container_gpu_allocation_ratio{")
	}
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if ok(scrape(t, url)) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s\n%s", what, scrape(t, url))
	}
	waitFor("attribution", attributed)

	stop := make(chan struct{})
	done := make(chan *loadResult)
	go func() { done <- scrapeLoad(url, 4, stop) }()
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			<-done
		}
	}()

	// A kubelet restart: the socket file is deleted while the old process
	// still serves its open connections, then a new process listens on a
	// new socket at the same path.
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	stopKubelet()
	waitFor("podresources_up 0 without the socket", detached)
	if stopKubelet, err = simkube.ServeKubelet(socket, node); err != nil {
		t.Fatal(err)
	}
	waitFor("attribution after the socket was recreated", attributed)

	// The kubelet stopped and restarted on the same socket path.
	stopKubelet()
	waitFor("podresources_up 0 with the kubelet down", detached)
	if stopKubelet, err = simkube.ServeKubelet(socket, node); err != nil {
		t.Fatal(err)
	}
	waitFor("attribution after the kubelet restarted", attributed)

	close(stop)
	res := <-done
	stopped = true
	t.Logf("%d scrapes during two kubelet outages, %d errors, p50 %v, p99 %v",
		res.scrapes, res.errors, res.quantile(0.5).Round(10*time.Microsecond), res.quantile(0.99).Round(10*time.Microsecond))
	if res.errors > 0 {
		t.Errorf("%d of %d scrapes failed during the kubelet restarts, want none; first: %q", res.errors, res.scrapes, res.failures)
	}
	if res.scrapes == 0 {
		t.Error("no scrape ran during the restarts")
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%.500s", url, code, body)
	}
	return body
}
