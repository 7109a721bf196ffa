package sim

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NodeSim simulates the GPUs of one scenario node. Its Interface is an
// nvml.Interface that the real NVML reader uses unchanged; Advance moves
// simulated time; Pods and Devices tell the simulated kubelet what runs
// where.
//
// All methods are safe for concurrent use. Device calls take a read lock
// and read state precomputed by Advance, so they are cheap and allocate
// only the slices they return.
type NodeSim struct {
	mu sync.RWMutex

	node    Node
	sys     *system
	seed    uint64
	start   time.Time
	now     time.Time
	layout  []gpuLayout
	devices []*device
	pods    []*simPod
	lib     *library

	closed    chan struct{}
	closeOnce sync.Once
	isClosed  bool
}

// simPod is a scenario pod placed on its device.
type simPod struct {
	spec        Pod
	key         uint64
	uid         string
	containerID string
	pids        []uint32
	dev         *device
	instance    int // MIG instance index, -1 otherwise
	replica     int // shared-GPU replica, -1 otherwise
	memLimit    uint64
	life        interval

	running bool
	sample  Sample
}

// NewNode builds the simulator of the node named node, at simulated time
// start (the origin of the scenario's offsets).
func NewNode(sc *Scenario, node string, start time.Time) (*NodeSim, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var n *Node
	for i := range sc.Nodes {
		if sc.Nodes[i].Name == node {
			n = &sc.Nodes[i]
		}
	}
	if n == nil {
		return nil, fmt.Errorf("sim: scenario has no node %q", node)
	}
	s := &NodeSim{
		node:   cloneNode(n),
		sys:    systems[n.System],
		seed:   sc.Seed,
		start:  start,
		now:    start,
		closed: make(chan struct{}),
	}
	n = &s.node
	count := n.GPUs
	if count == 0 {
		count = defaultGPUsPerNode
	}
	s.layout = buildLayout(n, s.sys, count, "", nil)
	s.lib = newLibrary(s, count)
	nodeKey := strHash(n.Name)
	for i := range count {
		s.devices = append(s.devices, newDevice(s, i, nodeKey))
	}
	s.placePods(nodeKey)
	s.placeFaults()
	s.refresh(0)
	return s, nil
}

func cloneNode(n *Node) Node {
	c := *n
	c.Sharing = append([]Sharing(nil), n.Sharing...)
	c.Pods = append([]Pod(nil), n.Pods...)
	c.Faults = append([]Fault(nil), n.Faults...)
	for i := range c.Pods {
		if c.Pods[i].Container == "" {
			c.Pods[i].Container = "main"
		}
		if c.Pods[i].Processes == 0 {
			c.Pods[i].Processes = 1
		}
	}
	return c
}

// pidMin and pidMax bound simulated host PIDs to Linux's default range,
// above the PIDs of system daemons.
const (
	pidMin = 10000
	pidMax = 4194304
)

func (s *NodeSim) placePods(nodeKey uint64) {
	replicas := assignReplicas(s.node.Pods, s.layout)
	used := map[uint32]bool{}
	for i := range s.node.Pods {
		spec := s.node.Pods[i]
		d := s.devices[spec.GPU]
		p := &simPod{
			spec:     spec,
			key:      podKey(&spec),
			dev:      d,
			instance: -1,
			replica:  replicas[i],
			life:     lifetime(&spec),
		}
		p.uid = uuidOf(hash3(s.seed, p.key, domainPodUID))
		p.containerID = hex64(hash3(s.seed, hash2(p.key, strHash(spec.Container)), domainContainer))
		for j := range spec.Processes {
			pid := pidMin + uint32(hash3(hash2(s.seed, domainPID), nodeKey, uint64(i*maxProcessesPerPod+j))%(pidMax-pidMin))
			for used[pid] {
				pid = pidMin + (pid-pidMin+1)%(pidMax-pidMin)
			}
			used[pid] = true
			p.pids = append(p.pids, pid)
		}
		if d.layout.mode == ModeMIG {
			p.instance = spec.Instance
			d.mig[spec.Instance].pods = append(d.mig[spec.Instance].pods, p)
		}
		d.pods = append(d.pods, p)
		s.pods = append(s.pods, p)
	}
	// A leak dies of OOM when it reaches what its GPU or instance has
	// left after the declared memory of every pod that may share it.
	for _, p := range s.pods {
		if p.spec.Load != LoadLeak {
			continue
		}
		capacity := s.sys.availableBytes()
		if p.instance >= 0 {
			capacity = p.dev.mig[p.instance].memTotal - driverOverheadBytes
		}
		var others uint64
		for _, q := range p.dev.pods {
			if q != p && q.instance == p.instance && q.life.overlaps(p.life) {
				others += uint64(q.spec.Memory)
			}
		}
		if capacity > others {
			p.memLimit = capacity - others
		}
	}
}

func (s *NodeSim) placeFaults() {
	for _, f := range s.node.Faults {
		d := s.devices[f.GPU]
		at := time.Duration(f.At)
		switch f.Kind {
		case FaultLost:
			d.lostAt = min(d.lostAt, at)
		case FaultHang:
			d.hangAt = min(d.hangAt, at)
		case FaultXID:
			d.xids = append(d.xids, xidFault{at: at, code: f.XID})
		}
	}
	for _, d := range s.devices {
		sort.SliceStable(d.xids, func(a, b int) bool { return d.xids[a].at < d.xids[b].at })
	}
}

// Interface is the simulated NVML library.
func (s *NodeSim) Interface() nvml.Interface { return s.lib }

// Now is the current simulated time.
func (s *NodeSim) Now() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.now
}

// Node is the scenario node simulated, with defaults filled in.
func (s *NodeSim) Node() Node { return cloneNode(&s.node) }

// Advance moves simulated time to t. Time only moves forward: an earlier t
// is ignored. It integrates energy and GPM counters over the step, grows
// leaks, starts and stops pods, activates faults whose time has come and
// queues their XID events on the event sets registered for the device.
func (s *NodeSim) Advance(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Before(s.now) || s.isClosed {
		return
	}
	dt := t.Sub(s.now).Seconds()
	s.now = t
	s.refresh(dt)
	off := t.Sub(s.start)
	for _, d := range s.devices {
		for d.nextXID < len(d.xids) && d.xids[d.nextXID].at <= off {
			d.fireXID(d.xids[d.nextXID].code)
			d.nextXID++
		}
	}
}

// refresh recomputes every pod's load and every device's state at s.now,
// dt seconds after the previous refresh.
func (s *NodeSim) refresh(dt float64) {
	off := s.now.Sub(s.start)
	for _, p := range s.pods {
		p.running = p.life.contains(off)
		if p.running {
			p.sample = evaluate(s.seed, p.key, &p.spec, s.now, off-p.life.start, p.memLimit)
		} else {
			p.sample = Sample{}
		}
	}
	for _, d := range s.devices {
		d.lost = d.lost || off >= d.lostAt
		d.hung = off >= d.hangAt
		d.refresh(dt)
	}
}

// Close releases the simulator: calls blocked on hung devices and event
// waits return, and every later device call fails with
// ERROR_UNINITIALIZED. It is idempotent.
func (s *NodeSim) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.isClosed = true
		s.mu.Unlock()
		close(s.closed)
	})
	return nil
}

// never is a fault time that never comes.
const never = time.Duration(math.MaxInt64)
