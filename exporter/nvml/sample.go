package nvml

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// Sample reads every GPU in parallel and returns within CallTimeout (or
// ctx's deadline, if sooner) whatever the GPUs do. It returns an error only
// after Close.
func (b *Backend) Sample(ctx context.Context) (*gpu.Snapshot, error) {
	b.sampleMu.Lock()
	defer b.sampleMu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}

	now := time.Now()
	for _, d := range b.devs {
		d.launch(opRead, nil, now)
	}

	reason := b.wait(ctx)
	return b.assemble(reason), nil
}

// wait collects the reads launched by Sample until all have finished or
// time is up, and returns why time was up ("" if it was not).
func (b *Backend) wait(ctx context.Context) string {
	b.timer.Reset(b.timeout)
	defer b.timer.Stop()
	reason := ""
	for _, d := range b.devs {
		if d.state != readLaunched {
			continue
		}
		if reason == "" {
			select {
			case <-d.done:
				d.inflight, d.state = false, readFinished
				continue
			case <-b.timer.C:
				reason = fmt.Sprintf("timeout after %s", b.timeout)
			case <-ctx.Done():
				reason = fmt.Sprintf("timeout: %v", context.Cause(ctx))
			}
		}
		// Time is up: take what has finished, mark the rest.
		if !d.collect() {
			d.state = readTimedOut
		}
	}
	return reason
}

// assemble builds the snapshot from the devices' reads. Processes and
// instances are copied into one backing array each, owned by the snapshot,
// so the per-device buffers can be reused by the next read.
func (b *Backend) assemble(reason string) *gpu.Snapshot {
	nprocs, ninsts := 0, 0
	for _, d := range b.devs {
		if d.state == readFinished {
			nprocs += len(d.procs)
			ninsts += len(d.insts)
		}
	}
	var procs []gpu.Process
	var insts []gpu.Instance
	if nprocs > 0 {
		procs = make([]gpu.Process, 0, nprocs)
	}
	if ninsts > 0 {
		insts = make([]gpu.Instance, 0, ninsts)
	}

	snap := &gpu.Snapshot{
		DriverVersion: b.driverVersion,
		CUDAVersion:   b.cudaVersion,
		NVMLVersion:   b.nvmlVersion,
		Devices:       make([]gpu.Device, len(b.devs)),
	}
	var errs map[string]int
	for i, d := range b.devs {
		var dev gpu.Device
		switch d.state {
		case readFinished:
			dev = d.out
			dev.Processes, procs = carve(procs, d.procs)
			dev.Instances, insts = carve(insts, d.insts)
			errs = d.c.errs.addTo(errs)
		case readTimedOut:
			dev = blankDevice(d.identity())
			dev.Err = reason
			b.log.Debug("GPU read timed out", "gpu", d.pos, "reason", reason)
		case readBlocked:
			dev = blankDevice(d.identity())
			dev.Err = fmt.Sprintf("timeout after %s: an earlier read has been blocked for %s",
				b.timeout, time.Since(d.started).Round(time.Second))
		}
		dev.XIDErrors = d.xidCounts()
		snap.Devices[i] = dev
	}
	snap.Errors = b.takeBackgroundErrors(errs)
	snap.Time = time.Now()
	return snap
}

// carve appends src to arena and returns the appended part, capped so that
// appending to it cannot overwrite the next device's part, and the arena.
// It returns nil for an empty src.
func carve[T any](arena, src []T) ([]T, []T) {
	if len(src) == 0 {
		return nil, arena
	}
	start := len(arena)
	arena = append(arena, src...)
	return arena[start:len(arena):len(arena)], arena
}
