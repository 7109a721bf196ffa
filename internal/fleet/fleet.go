// Package fleet runs a simulated fleet through the real exporter code at
// simulated times: for every node of a scenario, the sim backend (go-nvml
// mock servers read by exporter/nvml) feeds a collector.Sampler, exactly
// as in gpulens-exporter, which attributes every sample to the scenario's
// pods through the real pod-resources parsing, cgroup parsing and
// attribution code (simkube stands in for the kubelet, /proc and the API
// server). Each step's series go to a Sink. It is how
// `gpulens demo` fills a TSDB with a fast-forwarded week, and how tests
// get realistic data with known causes.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	dto "github.com/prometheus/client_model/go"

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
	// Progress, when set, is called after each step with the steps done
	// and the total.
	Progress func(done, total int)
}

// Sink receives one node's series at one step.
type Sink interface {
	// Append is called with every series of the node at ts; labels are
	// reused by the caller between calls.
	Append(ts time.Time, name string, labels []*dto.LabelPair, value float64) error
	// EndStep is called once after every node has been appended at ts.
	EndStep(ts time.Time) error
}

// node is one simulated node with its exporter.
type node struct {
	backend *sim.Backend
	sampler *collector.Sampler
}

// Run simulates the fleet from Start to End and hands every step to sink.
func Run(ctx context.Context, o Options, sink Sink) error {
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
	now := o.Start
	clock := func() time.Time { return now }
	nodes := make([]node, 0, len(o.Scenario.Nodes))
	defer func() {
		for _, n := range nodes {
			n.backend.Close()
		}
	}()
	for _, sn := range o.Scenario.Nodes {
		b, err := sim.NewBackend(o.Scenario, sim.BackendOptions{Node: sn.Name, Start: o.Start, Clock: clock,
			NVML: nvml.Options{CallTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}})
		if err != nil {
			return fmt.Errorf("fleet: node %s: %w", sn.Name, err)
		}
		kube, err := simkube.NewNode(b.Node(), filepath.Join(procDir, sn.Name))
		if err != nil {
			b.Close()
			return fmt.Errorf("fleet: node %s: %w", sn.Name, err)
		}
		s := collector.New(collector.Options{Backend: b, Node: sn.Name, Interval: o.Step, Now: clock,
			SkipExposition: true, Attribution: &collector.Attribution{
				Allocations: kube.Allocations, Pods: kube.Pods(), ProcRoot: kube.ProcRoot(), SharedMode: kube.SharedMode(),
			}})
		nodes = append(nodes, node{backend: b, sampler: s})
	}

	total := int(o.End.Sub(o.Start)/o.Step) + 1
	for i := 0; i < total; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		now = o.Start.Add(time.Duration(i) * o.Step)
		for _, n := range nodes {
			if err := n.sampler.SampleOnce(ctx); err != nil {
				return fmt.Errorf("fleet: %s at %s: %w", n.backend.Node().Node().Name, now.Format(time.RFC3339), err)
			}
			ts := now
			var appendErr error
			err := n.sampler.Series(func(name string, lbls []*dto.LabelPair, v float64) {
				if appendErr == nil {
					appendErr = sink.Append(ts, name, lbls, v)
				}
			})
			if err = errors.Join(err, appendErr); err != nil {
				return err
			}
		}
		if err := sink.EndStep(now); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress(i+1, total)
		}
	}
	return nil
}
