package attribution

import (
	"fmt"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
)

// TestChurn lets 1,000 pods come and go on 8 GPUs time-sliced ×8, with
// PIDs reused by later pods, and checks every pass against the pods that
// are live at that moment.
func TestChurn(t *testing.T) {
	const (
		totalPods = 1000
		window    = 48 // live pods at a time; fewer than the 64 replicas
		step      = 7  // pods replaced per pass
		pidPool   = 100
		gpus      = 8
	)
	k := newKubelet(t)
	procs := newProcTree(t)
	var r Resolver
	advertised := make([]advertise, gpus)
	for g := range gpus {
		advertised[g] = advertise{gpuRes, replicas(gpuUUID(g), 8)}
	}
	pidOf := func(pod int) uint32 { return uint32(50000 + pod%pidPool) }
	// Pod n holds replica n%64: live pods are consecutive, so replicas
	// never collide.
	replicaOf := func(pod int) (gpuIdx, replica int) { return (pod % 64) / 8, pod % 8 }

	passes := 0
	for first := 0; first < totalPods; first += step {
		last := min(first+window, totalPods)
		var holds []hold
		var pods []podindex.Pod
		devices := make([]gpu.Device, gpus)
		for g := range gpus {
			devices[g] = wholeGPU(g, 0.5, 80)
		}
		for n := first; n < last; n++ {
			name := fmt.Sprintf("pod-%04d", n)
			g, rep := replicaOf(n)
			holds = append(holds, hold{"churn", name, "c", gpuRes, []string{fmt.Sprintf("%s::%d", gpuUUID(g), rep)}})
			pods = append(pods, indexed("churn", name, n+1, "c"))
			procs.pod(pidOf(n), n+1)
			// Memory identifies the pod, to catch a stale PID → pod answer.
			devices[g].Processes = append(devices[g].Processes, proc(pidOf(n), float64(n+1)/1024, 0.01))
		}
		// A process of a pod that just left lingers for one more sample on
		// a GPU that live pods share.
		if first > 0 {
			g, _ := replicaOf(first)
			devices[g].Processes = append(devices[g].Processes, proc(pidOf(first-1), 1, 0.01))
		}

		got, st := r.Attribute(Input{
			Snapshot: snapshot(devices...), Allocations: k.allocations(advertised, holds...),
			Pods: podindex.Static(pods...), ProcRoot: procs.dir,
		})
		passes++
		if len(got) != last-first {
			t.Fatalf("pass %d: %d records for %d live pods", passes, len(got), last-first)
		}
		for i, rec := range got {
			n := first + i
			if want := fmt.Sprintf("pod-%04d", n); rec.Pod != want {
				t.Fatalf("pass %d: record %d is %s, want %s", passes, i, rec.Pod, want)
			}
			if want := float64(n+1) / 1024 * gib; rec.MemoryUsedBytes != want || rec.Allocation != 0.125 {
				t.Fatalf("pass %d: %s", passes, line(rec))
			}
		}
		if wantLingering := min(first, 1); st.UnattributedProcesses != wantLingering {
			t.Fatalf("pass %d: %d unattributed, want %d", passes, st.UnattributedProcesses, wantLingering)
		}
		if n := len(r.pids.entries); n > window+1 {
			t.Fatalf("pass %d: PID cache holds %d entries for %d processes", passes, n, window+1)
		}
	}
	if passes < 100 {
		t.Fatalf("only %d passes", passes)
	}

	// An empty node empties the cache, and so does a kubelet outage.
	r.Attribute(Input{Snapshot: snapshot(wholeGPU(0, 0, 0)), Allocations: k.allocations(nil), Pods: podindex.Static(), ProcRoot: procs.dir})
	if n := len(r.pids.entries); n != 0 {
		t.Errorf("PID cache holds %d entries on an empty node", n)
	}
}
