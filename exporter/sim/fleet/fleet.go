// Package fleet runs a simulated fleet through the real exporter code at
// simulated times: for every node of a scenario, the sim backend (go-nvml
// mock servers read by exporter/nvml) feeds a collector.Sampler, exactly
// as in gpulens-exporter, which attributes every sample to the scenario's
// pods through the real pod-resources parsing, cgroup parsing and
// attribution code (simkube stands in for the kubelet, /proc and the API
// server). Each step's series go to a Sink.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sync/errgroup"

	"github.com/gpulens/gpulens/exporter/collector"
	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/simkube"
)

// Options configure a run.
type Options struct {
	Scenario *sim.Scenario
	// Start and End bound the simulated time; pods' offsets count from
	// Start. End is included when it falls on a step.
	Start, End time.Time
	// Step is the sampling resolution (a scrape interval); default 1m.
	Step time.Duration
	// AllocationOnly runs every exporter as without hostPID (the chart's
	// default): no host /proc, so shared GPUs get allocation series only,
	// without per-tenant utilization or memory.
	AllocationOnly bool
	// KubeStateMetrics, when set, gives each node a second Sink for the
	// series kube-state-metrics would write of its pods' containers
	// (ksm.go).
	KubeStateMetrics func(node string) Sink
	// Progress, when set, is called after each node step with the node
	// steps done and the total; it may be called from several goroutines.
	Progress func(done, total int)
}

// Sink receives one node's series, step by step. Each node has its own
// Sink and calls it from one goroutine.
type Sink interface {
	// Append is called with every series of the node at ts; labels are
	// reused by the caller between calls.
	Append(ts time.Time, name string, labels []*dto.LabelPair, value float64) error
	// EndStep is called after the node's series at ts.
	EndStep(ts time.Time) error
	// Close is called after the node's last step.
	Close() error
}

// node is one simulated node with its exporter and its own clock: nodes
// are independent simulations, so they run in parallel.
type node struct {
	name    string
	backend *sim.Backend
	sampler *collector.Sampler
	now     time.Time
}

// Run simulates the fleet from Start to End. newSink is called once per
// node, before it starts.
func Run(ctx context.Context, o Options, newSink func(node string) Sink) error {
	if o.Step <= 0 {
		o.Step = time.Minute
	}
	if !o.End.After(o.Start) {
		return fmt.Errorf("fleet: end %s is not after start %s", o.End.Format(time.RFC3339), o.Start.Format(time.RFC3339))
	}
	if o.Scenario == nil || len(o.Scenario.Nodes) == 0 {
		return errors.New("fleet: the scenario has no nodes")
	}
	// The simulated hosts' /proc trees, for per-process attribution.
	procDir, err := os.MkdirTemp("", "gpulens-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(procDir)

	nodes := make([]*node, 0, len(o.Scenario.Nodes))
	defer func() {
		for _, n := range nodes {
			n.backend.Close()
		}
	}()
	for _, sn := range o.Scenario.Nodes {
		n, err := newNode(o, sn.Name, filepath.Join(procDir, sn.Name))
		if err != nil {
			return fmt.Errorf("fleet: node %s: %w", sn.Name, err)
		}
		nodes = append(nodes, n)
	}

	total := int(o.End.Sub(o.Start)/o.Step) + 1
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, runtime.GOMAXPROCS(0)))
	for _, n := range nodes {
		sink := newSink(n.name)
		var ksm Sink
		if o.KubeStateMetrics != nil {
			ksm = o.KubeStateMetrics(n.name)
		}
		g.Go(func() error {
			for i := range total {
				if err := gctx.Err(); err != nil {
					return err
				}
				ts := o.Start.Add(time.Duration(i) * o.Step)
				if err := n.step(gctx, ts, sink); err != nil {
					return err
				}
				if ksm != nil {
					if err := n.kubeState(ts, ksm); err != nil {
						return err
					}
				}
				if o.Progress != nil {
					o.Progress(int(done.Add(1)), total*len(nodes))
				}
			}
			if ksm != nil {
				if err := ksm.Close(); err != nil {
					return err
				}
			}
			return sink.Close()
		})
	}
	return g.Wait()
}

func newNode(o Options, name, procDir string) (*node, error) {
	n := &node{name: name, now: o.Start}
	clock := func() time.Time { return n.now }
	b, err := sim.NewBackend(o.Scenario, sim.BackendOptions{Node: name, Start: o.Start, Clock: clock,
		NVML: nvml.Options{CallTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		return nil, err
	}
	kube, err := simkube.NewNode(b.Node(), procDir)
	if err != nil {
		b.Close()
		return nil, err
	}
	n.backend = b
	procRoot := kube.ProcRoot()
	if o.AllocationOnly {
		procRoot = ""
	}
	n.sampler = collector.New(collector.Options{Backend: b, Node: name, Interval: o.Step, Now: clock,
		SkipExposition: true, Attribution: &collector.Attribution{
			Allocations: kube.Allocations, Pods: kube.Pods(), Slices: kube.Slices(), ProcRoot: procRoot, SharedMode: kube.SharedMode(),
		}})
	return n, nil
}

// step samples the node at ts and hands its series to sink.
func (n *node) step(ctx context.Context, ts time.Time, sink Sink) error {
	n.now = ts
	if err := n.sampler.SampleOnce(ctx); err != nil {
		return fmt.Errorf("fleet: %s at %s: %w", n.name, ts.Format(time.RFC3339), err)
	}
	var appendErr error
	err := n.sampler.Series(func(name string, lbls []*dto.LabelPair, v float64) {
		if appendErr == nil {
			appendErr = sink.Append(ts, name, lbls, v)
		}
	})
	if err = errors.Join(err, appendErr); err != nil {
		return err
	}
	return sink.EndStep(ts)
}
