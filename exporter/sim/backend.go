package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/nvml"
)

// BackendOptions configure the sim backend.
type BackendOptions struct {
	// Node is the scenario node to simulate; the first one when empty.
	Node string
	// Start is the scenario's time zero: pod start/end and fault offsets
	// count from it.
	Start time.Time
	// Clock gives the simulated time of each sample; time.Now by default.
	// The demo fast-forwards it, tests pin it.
	Clock func() time.Time
	NVML  nvml.Options
}

// Backend is --backend=sim: the real NVML reader (exporter/nvml) over a
// NodeSim's mock library, so the simulated fleet exercises exactly the code
// that reads real GPUs.
type Backend struct {
	node   *NodeSim
	reader *nvml.Backend
	clock  func() time.Time
}

var _ gpu.Backend = (*Backend)(nil)

// NewBackend simulates one node of sc.
func NewBackend(sc *Scenario, o BackendOptions) (*Backend, error) {
	if len(sc.Nodes) == 0 {
		return nil, fmt.Errorf("scenario has no nodes")
	}
	if o.Node == "" {
		o.Node = sc.Nodes[0].Name
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Clock()
	}
	node, err := NewNode(sc, o.Node, o.Start)
	if err != nil {
		return nil, err
	}
	reader, err := nvml.New(node.Interface(), o.NVML)
	if err != nil {
		node.Close()
		return nil, err
	}
	return &Backend{node: node, reader: reader, clock: o.Clock}, nil
}

// Name implements gpu.Backend.
func (b *Backend) Name() string { return "sim" }

// Node is the simulator, for the simulated kubelet and the demo.
func (b *Backend) Node() *NodeSim { return b.node }

// xidAwait bounds how long Sample waits for the exporter's XID listener
// to count the events of its step (NodeSim.AwaitEvents); it only waits
// at a step that raised one.
const xidAwait = 2 * time.Second

// Sample moves the simulation to the clock's time and reads it through NVML.
func (b *Backend) Sample(ctx context.Context) (*gpu.Snapshot, error) {
	now := b.clock()
	b.node.Advance(now)
	// An XID raised by this step is counted at this step.
	b.node.AwaitEvents(xidAwait)
	snap, err := b.reader.Sample(ctx)
	if snap != nil {
		snap.Time = now
	}
	return snap, err
}

// Close releases hung calls first, so the reader's goroutines can finish.
func (b *Backend) Close() error {
	b.node.Close()
	return b.reader.Close()
}
