package collector

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/simkube"
)

// TestGoldenMockServers runs the real NVML reader over each go-nvml mock
// server (driven by the simulator) and pins the exposition of the second
// sample, the first one with GPM ratios.
func TestGoldenMockServers(t *testing.T) {
	sc, err := sim.Load("testdata/mockservers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	for _, node := range sc.Nodes {
		t.Run(node.Name, func(t *testing.T) {
			now := start
			b, err := sim.NewBackend(sc, sim.BackendOptions{Node: node.Name, Start: start,
				Clock: func() time.Time { return now }, NVML: nvml.Options{CallTimeout: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			kube, err := simkube.NewNode(b.Node(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s := New(Options{Backend: b, Node: node.Name, Attribution: &Attribution{
				Allocations: kube.Allocations, Pods: kube.Pods(), ProcRoot: kube.ProcRoot(), SharedMode: kube.SharedMode(),
			}})
			for range 2 {
				now = now.Add(time.Minute)
				if err := s.SampleOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			golden(t, "mockserver-"+node.Name+".golden.prom", exposition(t, s))
		})
	}
}
