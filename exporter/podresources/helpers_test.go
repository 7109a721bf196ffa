package podresources

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// socketPath returns a socket path short enough for the 108-byte unix
// socket limit, which t.TempDir() paths can exceed.
func socketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "kubelet.sock")
}

// loadFixture reads the kubelet answers of testdata/<scenario>, written in
// protojson as `kubectl get --raw`-style dumps would be.
func loadFixture(t testing.TB, scenario string) (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) {
	t.Helper()
	list := &v1.ListPodResourcesResponse{}
	alloc := &v1.AllocatableResourcesResponse{}
	readProto(t, filepath.Join("testdata", scenario, "list.json"), list)
	readProto(t, filepath.Join("testdata", scenario, "allocatable.json"), alloc)
	return list, alloc
}

func readProto(t testing.TB, path string, msg proto.Message) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := protojson.Unmarshal(b, msg); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline instead of sleeping for a guessed time.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logRecorder is a slog.Handler that keeps every record for assertions.
type logRecorder struct {
	mu      sync.Mutex
	records []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, fmt.Sprintf("%s %s", rec.Level, rec.Message))
	return nil
}

// count returns how many records have the level and contain substr.
func (r *logRecorder) count(level slog.Level, substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.records {
		if strings.HasPrefix(s, level.String()+" ") && strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

// counterValue gathers c and returns the value of the series name with
// the given reason label ("" for a series without labels).
func counterValue(t testing.TB, c prometheus.Collector, name, reason string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got = l.GetValue()
				}
			}
			if got == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{reason=%q}", name, reason)
	return 0
}
