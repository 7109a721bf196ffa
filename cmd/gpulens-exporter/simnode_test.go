package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/sim"
)

// kubeletSocket is a path for a simulated kubelet's socket, in a short
// temporary directory (unix socket paths are short) removed after t.
func kubeletSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "kubelet.sock")
}

// defaultNode is the default scenario's first node one second into the
// simulated start the exporter is given (--sim.start=2026-01-05T14:00:00Z):
// the same scenario and seed give the exporter's GPU UUIDs, so a kubelet
// serving it attributes the exporter's GPUs.
func defaultNode(t *testing.T) *sim.NodeSim {
	t.Helper()
	sc := sim.Default()
	node, err := sim.NewNode(sc, sc.Nodes[0].Name, time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	node.Advance(time.Date(2026, 1, 5, 14, 0, 1, 0, time.UTC))
	return node
}
