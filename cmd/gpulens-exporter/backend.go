package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
)

// openBackend starts the --backend the user asked for.
func openBackend(_ context.Context, cfg *config, logger *slog.Logger) (gpu.Backend, error) {
	opts := nvml.Options{CallTimeout: cfg.collectTimeout, Logger: logger}
	switch cfg.backend {
	case "nvml":
		return nvml.Open(opts)
	case "sim":
		sc := sim.Default()
		if cfg.simScenario != "" {
			var err error
			if sc, err = sim.Load(cfg.simScenario); err != nil {
				return nil, err
			}
		}
		bo := sim.BackendOptions{Node: cfg.simNode, Start: time.Now(), NVML: opts}
		if cfg.simStart != "" {
			// Validated in parseFlags.
			start, _ := time.Parse(time.RFC3339, cfg.simStart)
			bo.Start, bo.Clock = start, steppedClock(start, cfg.collectInterval)
		}
		return sim.NewBackend(sc, bo)
	}
	return nil, fmt.Errorf("unknown backend %q", cfg.backend)
}

// steppedClock returns start, start+step, start+2·step, ... on successive
// calls. The sampler calls it once per collection, from one goroutine.
func steppedClock(start time.Time, step time.Duration) func() time.Time {
	next := start
	return func() time.Time {
		t := next
		next = next.Add(step)
		return t
	}
}
