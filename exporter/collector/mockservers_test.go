package collector

import (
	"context"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
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
				Clock: func() time.Time { return now }, NVML: nvml.Options{CallTimeout: 10 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			s := New(Options{Backend: b, Node: node.Name})
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
