package attribution

import (
	"errors"
	"io/fs"

	"github.com/gpulens/gpulens/exporter/attribution/cgroup"
)

// pidResult is what became of one PID lookup.
type pidResult uint8

const (
	pidInPod  pidResult = iota // ref is the container
	pidNotPod                  // a host process or a container outside Kubernetes
	pidGone                    // exited since NVML listed it
	pidFailed                  // cgroup file unreadable or not understood
)

type pidEntry struct {
	ref    cgroup.Ref
	notPod bool
	pass   uint64 // last pass that looked the PID up
}

// pidCache remembers which container each GPU process runs in. A process
// cannot change pod, so the answer holds for its lifetime; entries of PIDs
// that NVML no longer lists are dropped after every pass, so a reused PID
// is read afresh and the cache is bounded by the GPU processes of one pass.
// (A PID reused between two samples by another GPU process would keep the
// old answer for its lifetime; the kernel cycles through pid_max, typically
// 4 million, before reusing a PID, which makes this practically impossible.)
type pidCache struct {
	procRoot string
	entries  map[uint32]pidEntry
	pass     uint64
	read     func(procRoot string, pid uint32) (cgroup.Ref, error)
}

func (c *pidCache) begin(procRoot string) {
	if c.entries == nil || procRoot != c.procRoot {
		c.entries = map[uint32]pidEntry{}
		c.procRoot = procRoot
	}
	if c.read == nil {
		c.read = cgroup.ReadPID
	}
	c.pass++
}

// end evicts the PIDs this pass did not look up.
func (c *pidCache) end() {
	for pid, e := range c.entries {
		if e.pass != c.pass {
			delete(c.entries, pid)
		}
	}
}

func (c *pidCache) resolve(pid uint32) (cgroup.Ref, pidResult) {
	if e, ok := c.entries[pid]; ok {
		e.pass = c.pass
		c.entries[pid] = e
		if e.notPod {
			return cgroup.Ref{}, pidNotPod
		}
		return e.ref, pidInPod
	}
	ref, err := c.read(c.procRoot, pid)
	switch {
	case err == nil:
		c.entries[pid] = pidEntry{ref: ref, pass: c.pass}
		return ref, pidInPod
	case errors.Is(err, cgroup.ErrNotKubernetes):
		c.entries[pid] = pidEntry{notPod: true, pass: c.pass}
		return cgroup.Ref{}, pidNotPod
	case errors.Is(err, fs.ErrNotExist):
		// Not cached: the next pass will not list it either.
		return cgroup.Ref{}, pidGone
	default:
		// Not cached: permission problems and races can be transient.
		return cgroup.Ref{}, pidFailed
	}
}
