package sim

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// eventSet is an NVML event set. Events raised by Advance are queued on
// every set the device is registered with for their type; Wait pops them
// one at a time, in order, each exactly once.
type eventSet struct {
	nvml.EventSet // bare go-nvml mock answering NOT_SUPPORTED
	lib           *library

	mu      sync.Mutex
	masks   map[*device]uint64
	queue   []nvml.EventData
	freed   bool
	arrived chan struct{} // signalled (capacity 1) when the queue grows
	// pending counts the events delivered and not yet handled: queued, or
	// handed out by a Wait (handedOut) that its caller has not followed
	// with another Wait. A listener calls Wait again once it has counted
	// the event, so pending 0 means every event has been counted.
	pending   int
	handedOut bool
}

func newEventSet(l *library) *eventSet {
	bare := &mock.EventSet{}
	fillUnsupported(bare)
	return &eventSet{
		EventSet: bare,
		lib:      l,
		masks:    map[*device]uint64{},
		arrived:  make(chan struct{}, 1),
	}
}

func (e *eventSet) register(d *device, mask uint64) nvml.Return {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	e.masks[d] |= mask
	return nvml.SUCCESS
}

func (e *eventSet) deliver(d *device, ev nvml.EventData) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed || e.masks[d]&ev.EventType == 0 {
		return
	}
	e.queue = append(e.queue, ev)
	e.pending++
	select {
	case e.arrived <- struct{}{}:
	default:
	}
}

// Wait returns the oldest queued event, waiting up to timeoutMs of real
// time for one; ERROR_TIMEOUT when none came, ERROR_UNINITIALIZED once the
// simulator is closed.
func (e *eventSet) Wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	e.mu.Lock()
	if e.handedOut {
		e.handedOut = false
		e.pending--
	}
	e.mu.Unlock()
	var timer *time.Timer
	for {
		e.mu.Lock()
		switch {
		case e.freed:
			e.mu.Unlock()
			return nvml.EventData{}, nvml.ERROR_INVALID_ARGUMENT
		case len(e.queue) > 0:
			ev := e.queue[0]
			e.queue[0] = nvml.EventData{}
			e.queue = e.queue[1:]
			e.handedOut = true
			e.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return ev, nvml.SUCCESS
		}
		e.mu.Unlock()
		if timer == nil {
			if timeoutMs == 0 {
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
			timer = time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		}
		select {
		case <-e.arrived:
		case <-timer.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		case <-e.lib.sim.closed:
			timer.Stop()
			return nvml.EventData{}, nvml.ERROR_UNINITIALIZED
		}
	}
}

func (e *eventSet) Free() nvml.Return {
	s := e.lib.sim
	s.mu.Lock()
	defer s.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	e.freed = true
	e.queue, e.pending = nil, 0
	sets := e.lib.sets
	for i, x := range sets {
		if x == e {
			e.lib.sets = append(sets[:i:i], sets[i+1:]...)
			break
		}
	}
	return nvml.SUCCESS
}

// handled says whether every event delivered to the set has been counted
// by its listener (pending).
func (e *eventSet) handled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.freed || e.pending == 0
}

// AwaitEvents waits, up to timeout of real time, until the listeners of
// the node's event sets have handled every event Advance queued: the
// exporter's XID listener runs in its own goroutine, and a simulation
// that steps faster than real time would otherwise read an XID at a
// later step than the one that raised it (as late as the scheduler makes
// it, which is not reproducible). A set nobody waits on holds its events
// until the timeout.
func (s *NodeSim) AwaitEvents(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		sets := append([]*eventSet(nil), s.lib.sets...)
		s.mu.Unlock()
		done := true
		for _, e := range sets {
			done = done && e.handled()
		}
		if done || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}
