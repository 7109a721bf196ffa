package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/sim/simkube"
)

// TestKubeletAbsentThenBack: the exporter starts before the kubelet's
// socket exists. Device series flow and podresources_up is 0; once a
// kubelet serves the socket, attribution resumes without a restart; when it
// goes away again, container series go with it.
func TestKubeletAbsentThenBack(t *testing.T) {
	socket := kubeletSocket(t)
	p := startExporter(t, nil, "http", "--backend=sim", "--sim.start=2026-01-05T14:00:00Z", "--collect.interval=300ms",
		"--no-sim.kubelet", "--kubelet.pod-resources-socket="+socket, "--path.procfs=")
	waitHealthy(t, p)
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, body := get(t, "http://"+p.addr+"/metrics"); ok(body) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		_, body := get(t, "http://"+p.addr+"/metrics")
		t.Fatalf("timed out waiting for %s\n%s", what, body)
	}
	waitFor("podresources_up 0 with device series", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 0") && strings.Contains(b, "gpulens_gpu_up{") &&
			!strings.Contains(b, "gpulens_container_gpu_allocation_ratio{")
	})

	// The same scenario and seed give the same GPU UUIDs as the exporter's.
	stop, err := simkube.ServeKubelet(socket, defaultNode(t))
	if err != nil {
		t.Fatal(err)
	}
	waitFor("attribution after the kubelet appeared", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 1") &&
			strings.Contains(b, `gpulens_container_gpu_allocation_ratio{container="main",gpu="0"`)
	})
	stop()
	waitFor("container series gone with the kubelet", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 0") && !strings.Contains(b, "gpulens_container_gpu_allocation_ratio{")
	})
	if n := strings.Count(p.stderr.String(), "level=WARN"); n > 3 {
		t.Errorf("%d warnings for two outages; want one line per outage:\n%s", n, p.stderr)
	}
}
