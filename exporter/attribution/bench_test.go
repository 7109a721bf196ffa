package attribution

import (
	"fmt"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
)

// timeSlicedNode is 8 GPUs time-sliced ×8, fully used by 64 pods with one
// process each.
func timeSlicedNode(b *testing.B) Input {
	k := newKubelet(b)
	procs := newProcTree(b)
	var adv []advertise
	var holds []hold
	var pods []podindex.Pod
	var devices []gpu.Device
	for g := range 8 {
		adv = append(adv, advertise{gpuRes, replicas(gpuUUID(g), 8)})
		d := wholeGPU(g, 0.8, 60)
		for rep := range 8 {
			n := 8*g + rep + 1
			name := fmt.Sprintf("infer-%02d", n)
			holds = append(holds, hold{"ml", name, "server", gpuRes, []string{fmt.Sprintf("%s::%d", gpuUUID(g), rep)}})
			pods = append(pods, indexed("ml", name, n, "server"))
			pid := uint32(10000 + n)
			procs.pod(pid, n)
			d.Processes = append(d.Processes, proc(pid, 6, 0.1))
		}
		devices = append(devices, d)
	}
	return Input{
		Snapshot: snapshot(devices...), Allocations: k.allocations(adv, holds...),
		Pods: podindex.Static(pods...), ProcRoot: procs.dir,
	}
}

// migNode is 8 H100s split into seven 1g.10gb instances, one pod each.
func migNode(b *testing.B) Input {
	k := newKubelet(b)
	var adv []advertise
	var holds []hold
	var pods []podindex.Pod
	var devices []gpu.Device
	for g := range 8 {
		var instances []gpu.Instance
		for gi := range 7 {
			instances = append(instances, instance(gi+7, "1g.10gb", 1, 0.5, 5))
			n := 7*g + gi + 1
			name := fmt.Sprintf("train-%02d", n)
			holds = append(holds, hold{"ml", name, "main", "nvidia.com/mig-1g.10gb", []string{migUUID(g, gi+7)}})
			adv = append(adv, advertise{"nvidia.com/mig-1g.10gb", []string{migUUID(g, gi+7)}})
			pods = append(pods, indexed("ml", name, n, "main"))
		}
		devices = append(devices, migGPU(g, "NVIDIA H100 80GB HBM3", 40, instances...))
	}
	return Input{
		Snapshot: snapshot(devices...), Allocations: k.allocations(adv, holds...),
		Pods: podindex.Static(pods...), ProcRoot: fixtureProc,
	}
}

func BenchmarkAttribute(b *testing.B) {
	for _, bc := range []struct {
		name    string
		input   func(*testing.B) Input
		records int
		warm    bool
	}{
		{"time-sliced-8x8", timeSlicedNode, 64, true},
		// Without a Resolver every pass reads every process's cgroup file.
		{"time-sliced-8x8-cold", timeSlicedNode, 64, false},
		{"mig-8x7", migNode, 56, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := bc.input(b)
			var r Resolver
			attribute := r.Attribute
			if !bc.warm {
				attribute = Attribute
			}
			if got, st := attribute(in); len(got) != bc.records || st.UnattributedProcesses+st.ProcErrors != 0 {
				b.Fatalf("%d records, %+v; want %d, all processes attributed", len(got), st, bc.records)
			}
			b.ReportAllocs()
			for b.Loop() {
				attribute(in)
			}
		})
	}
}
