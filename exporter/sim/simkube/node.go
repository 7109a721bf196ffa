package simkube

import (
	"sync/atomic"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// Node is the node-side Kubernetes of one simulated node, for callers that
// drive time themselves (the demo, tests): each Allocations call brings the
// /proc tree and the pod index up to the simulator's current pods and
// returns the kubelet's answer, parsed by the real pod-resources code.
type Node struct {
	sim    *sim.NodeSim
	proc   *ProcTree
	pods   liveIndex
	slices sliceindex.Index
}

// NewNode keeps a /proc tree for n in procDir.
func NewNode(n *sim.NodeSim, procDir string) (*Node, error) {
	tree, err := NewProcTree(procDir)
	if err != nil {
		return nil, err
	}
	k := &Node{sim: n, proc: tree, slices: sliceindex.Static()}
	if s := ResourceSlice(n); s != nil {
		k.slices = sliceindex.Static(s)
	}
	k.pods.p.Store(&staticIndex{podindex.Static()})
	return k, nil
}

// ProcRoot is the /proc stand-in to attribute processes with.
func (k *Node) ProcRoot() string { return k.proc.Dir }

// Pods is the node's pod index, kept current by Allocations.
func (k *Node) Pods() podindex.Index { return &k.pods }

// Slices resolves the devices of the node's claims: its ResourceSlice.
func (k *Node) Slices() sliceindex.Index { return k.slices }

// SharedMode is the node's GPU Feature Discovery sharing strategy.
func (k *Node) SharedMode() vocab.Sharing { return SharingStrategy(k.sim.Devices()) }

// Allocations syncs /proc and the pod index with the simulator and returns
// the kubelet's pod-resources answer; nil if /proc could not be written.
func (k *Node) Allocations() *podresources.Allocations {
	pods := k.sim.Pods()
	if err := k.proc.Sync(pods); err != nil {
		return nil
	}
	idx := make([]podindex.Pod, 0, len(pods))
	for _, p := range pods {
		idx = append(idx, podindex.Pod{UID: p.UID, Namespace: p.Namespace, Name: p.Name, Phase: "Running",
			Containers: map[string]string{p.ContainerID: p.Container}})
	}
	k.pods.p.Store(&staticIndex{podindex.Static(idx...)})
	list, alloc := listResponse(k.sim.Node().Name, pods), allocatableResponse(k.sim.Devices())
	a, _ := podresources.FromResponses(k.sim.Now(), list, alloc, Selection)
	return a
}

// liveIndex is a podindex.Index whose contents are swapped atomically.
type liveIndex struct{ p atomic.Pointer[staticIndex] }

type staticIndex struct{ podindex.Index }

func (l *liveIndex) ByUID(uid string) (podindex.Pod, bool) { return l.p.Load().ByUID(uid) }
func (l *liveIndex) ByName(ns, name string) (podindex.Pod, bool) {
	return l.p.Load().ByName(ns, name)
}
func (l *liveIndex) Synced() bool { return true }
