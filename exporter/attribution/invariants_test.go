package attribution

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/vocab"
)

// node is a generated input and what the generator knows about it.
type node struct {
	snap  *gpu.Snapshot
	adv   []advertise
	holds []hold
	pods  []podindex.Pod
	// dead are pods that must have no series: finished, or absent from the
	// index.
	dead map[string]bool
}

// genNode builds a random node: whole, time-sliced (advertised or not,
// oversubscribed or not), MPS-like and MIG GPUs (some instances shared),
// down GPUs, containers holding several replicas, duplicate exclusive
// holds, finished and deleted pods, and processes whose memory may exceed
// what the device reports.
func genNode(r *rand.Rand, procs procTree) node {
	n := node{snap: &gpu.Snapshot{}, dead: map[string]bool{}}
	podN := 0
	newPod := func() (string, int) {
		podN++
		name := fmt.Sprintf("p%03d", podN)
		switch r.IntN(10) {
		case 0:
			n.pods = append(n.pods, podindex.Pod{UID: podUID(podN), Namespace: "ns", Name: name, Phase: podindex.PodSucceeded})
			n.dead[name] = true
		case 1:
			n.dead[name] = true // deleted: not in the index
		default:
			p := indexed("ns", name, podN, "c")
			n.pods = append(n.pods, p)
		}
		return name, podN
	}
	// addProc gives a random share of the device to a process of pod k, or
	// of nobody (k = 0).
	perPod := map[int]int{}
	addProc := func(d *gpu.Device, k, gi int) {
		// PIDs follow the pod number, so files written for one seed serve
		// the next.
		pid := uint32(900000 + len(d.Processes) + 100*d.Index)
		if k > 0 {
			pid = uint32(100000 + 8*k + perPod[k])
			perPod[k]++
			procs.pod(pid, k)
		} else {
			procs.write(pid, "0::/system.slice/host-daemon.service\n")
		}
		p := proc(pid, r.Float64()*10, r.Float64())
		if r.IntN(5) == 0 {
			p.SMUtilization = gpu.NA
		}
		if r.IntN(20) == 0 {
			p.MemoryUsedBytes = gpu.NA
		}
		if gi >= 0 {
			p.GPUInstanceID, p.ComputeInstanceID, p.SMUtilization = gi, 0, gpu.NA
		}
		d.Processes = append(d.Processes, p)
	}

	for i := range 1 + r.IntN(8) {
		d := wholeGPU(i, r.Float64(), r.Float64()*40)
		if r.IntN(8) == 0 {
			d.Up, d.Utilization, d.MemoryUsedBytes = false, gpu.NA, gpu.NA
		}
		if r.IntN(10) == 0 {
			d.MemoryUsedBytes = gpu.NA
		}
		switch kind := r.IntN(4); {
		case kind == 0: // whole, sometimes reported for two containers
			n.adv = append(n.adv, advertise{gpuRes, []string{d.UUID}})
			for range 1 + r.IntN(2) {
				name, k := newPod()
				n.holds = append(n.holds, hold{"ns", name, "c", gpuRes, []string{d.UUID}})
				addProc(&d, k, -1)
			}
		case kind <= 2: // replicated
			advertised := []int{2, 4, 8}[r.IntN(3)]
			if r.IntN(4) > 0 {
				n.adv = append(n.adv, advertise{gpuRes, replicas(d.UUID, advertised)})
			}
			used := r.Perm(advertised + r.IntN(3)) // may exceed what is advertised
			for len(used) > 0 {
				name, k := newPod()
				take := min(len(used), 1+r.IntN(2))
				var ids []string
				for _, u := range used[:take] {
					ids = append(ids, fmt.Sprintf("%s::%d", d.UUID, u))
				}
				used = used[take:]
				n.holds = append(n.holds, hold{"ns", name, "c", gpuRes, ids})
				for range r.IntN(3) {
					addProc(&d, k, -1)
				}
			}
			addProc(&d, 0, -1)
		default: // MIG
			d.MIGMode, d.Utilization = true, gpu.NA
			free := 7
			for gi := 1; free > 0 && gi <= 7; gi++ {
				slices := 1 + r.IntN(min(free, 3))
				free -= slices
				in := instance(gi, fmt.Sprintf("%dg.%dgb", slices, 10*slices), slices, r.Float64(), r.Float64()*10)
				in.UUID = migUUID(i, gi)
				if r.IntN(3) == 0 {
					in.SMActive = gpu.NA
				}
				d.Instances = append(d.Instances, in)
				if !d.Up {
					continue
				}
				if r.IntN(3) == 0 { // shared instance
					n.adv = append(n.adv, advertise{"nvidia.com/mig-1g.10gb.shared", replicas(in.UUID, 2)})
					for rep := range 2 {
						name, k := newPod()
						n.holds = append(n.holds, hold{"ns", name, "c", "nvidia.com/mig-1g.10gb.shared", []string{fmt.Sprintf("%s::%d", in.UUID, rep)}})
						addProc(&d, k, gi)
					}
				} else {
					name, k := newPod()
					n.holds = append(n.holds, hold{"ns", name, "c", gpuRes, []string{in.UUID}})
					addProc(&d, k, gi)
				}
			}
			if !d.Up {
				d.Instances = nil
			}
		}
		n.snap.Devices = append(n.snap.Devices, d)
	}
	return n
}

func TestAttributeInvariants(t *testing.T) {
	k := newKubelet(t)
	procs := newProcTree(t)
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		n := genNode(r, procs)
		in := Input{
			Snapshot: n.snap, Allocations: k.allocations(n.adv, n.holds...),
			Pods: podindex.Static(n.pods...), ProcRoot: procs.dir,
			SharedMode: []vocab.Sharing{"", SharingMPS}[r.IntN(2)],
		}
		if r.IntN(4) == 0 {
			in.ProcRoot = ""
		}
		got, _ := Attribute(in)
		if err := checkInvariants(n, got); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, lines(got))
		}
	}
}

func checkInvariants(n node, recs []ContainerGPU) error {
	const eps = 1e-6
	devices := map[string]*gpu.Device{}
	for i := range n.snap.Devices {
		devices[n.snap.Devices[i].UUID] = &n.snap.Devices[i]
	}
	type holdKey struct{ pod, container, uuid, mig string }
	seen := map[holdKey]bool{}
	holders := map[[2]string]int{} // (uuid, mig uuid) → records
	shares, memory := map[string]float64{}, map[string]float64{}
	for _, r := range recs {
		key := holdKey{r.Pod, r.Container, r.UUID, r.MIGUUID}
		if seen[key] {
			return fmt.Errorf("two records for %+v", key)
		}
		seen[key] = true
		holders[[2]string{r.UUID, r.MIGUUID}]++
		if n.dead[r.Pod] {
			return fmt.Errorf("series for dead pod %s", r.Pod)
		}
		if !(r.Allocation > 0 && r.Allocation <= 1+eps) {
			return fmt.Errorf("%s: allocation %v", line(r), r.Allocation)
		}
		shares[r.UUID] += r.Allocation
		if gpu.Valid(r.Utilization) != (r.UtilizationMethod != "") || gpu.Valid(r.MemoryUsedBytes) != (r.MemoryMethod != "") {
			return fmt.Errorf("%s: value and method disagree", line(r))
		}
		// Utilization is of the allocation; a shared tenant may exceed its
		// share but never the whole GPU.
		if gpu.Valid(r.Utilization) && (r.Utilization < 0 || r.Utilization*r.Allocation > 1+eps ||
			r.UtilizationMethod != MethodProcess && r.Utilization > 1) {
			return fmt.Errorf("%s: utilization out of range", line(r))
		}
		if gpu.Valid(r.MemoryUsedBytes) {
			memory[r.UUID] += r.MemoryUsedBytes
		}
	}
	for _, r := range recs {
		if holders[[2]string{r.UUID, r.MIGUUID}] > 1 && (r.UtilizationMethod == MethodDevice || r.UtilizationMethod == MethodMIGGPM || r.MemoryMethod == MethodDevice) {
			return fmt.Errorf("%s: device value copied to a shared device", line(r))
		}
	}
	for uuid, s := range shares {
		if s > 1+eps {
			return fmt.Errorf("shares on %s sum to %v", uuid, s)
		}
	}
	for uuid, m := range memory {
		if used := devices[uuid].MemoryUsedBytes; gpu.Valid(used) && m > used*(1+eps) {
			return fmt.Errorf("measured memory on %s sums to %v > used %v", uuid, m, used)
		}
	}
	if !slices.IsSortedFunc(recs, func(a, b ContainerGPU) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container),
			cmp.Compare(a.UUID, b.UUID), cmp.Compare(a.GPUInstance, b.GPUInstance))
	}) {
		return fmt.Errorf("records not sorted")
	}
	// Every live hold that names a device of the snapshot has a record.
	for _, h := range n.holds {
		if n.dead[h.pod] {
			continue
		}
		found := false
		for _, r := range recs {
			found = found || (r.Pod == h.pod && r.Container == h.container)
		}
		if !found && holdsLiveDevice(n, h) {
			return fmt.Errorf("no record for live hold %+v", h)
		}
	}
	return nil
}

// holdsLiveDevice reports whether a hold names a device the snapshot lists:
// a GPU, or a MIG instance of a GPU that is up.
func holdsLiveDevice(n node, h hold) bool {
	for _, d := range n.snap.Devices {
		for _, id := range h.ids {
			if id == d.UUID || len(id) > len(d.UUID) && id[:len(d.UUID)] == d.UUID {
				return true
			}
			for _, in := range d.Instances {
				if len(id) >= len(in.UUID) && id[:len(in.UUID)] == in.UUID {
					return true
				}
			}
		}
	}
	return false
}
