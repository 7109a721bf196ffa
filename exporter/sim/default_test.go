package sim

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestDefaultScenarioCoverage(t *testing.T) {
	sc := Default()
	gpus := 0
	modes, loads, systemsSeen := map[string]bool{}, map[string]bool{}, map[string]bool{}
	namespaces := map[string]bool{}
	for _, n := range sc.Nodes {
		gpus += n.GPUs
		systemsSeen[n.System] = true
		for _, sh := range n.Sharing {
			modes[string(sh.Mode)] = true
			if sh.Rename {
				modes["rename"] = true
			}
		}
		for _, p := range n.Pods {
			loads[p.Load] = true
			namespaces[p.Namespace] = true
		}
	}
	if len(sc.Nodes) != 6 || gpus != 38 {
		t.Errorf("default has %d nodes, %d GPUs; want 6 and 38", len(sc.Nodes), gpus)
	}
	dra, shared := 0, map[string]int{}
	for _, n := range sc.Nodes {
		if !n.DRA {
			continue
		}
		dra++
		for _, p := range n.Pods {
			shared[p.Namespace+"/"+ClaimName(&p)]++
		}
	}
	if dra != 1 || shared["team-recsys/embed-shared-gpu"] != 2 {
		t.Errorf("default has %d DRA nodes and claims %v; want one node, with a claim two pods share", dra, shared)
	}
	for _, m := range []string{string(ModeTimeSlicing), string(ModeMPS), string(ModeMIG), string(ModeHAMi), "rename"} {
		if !modes[m] {
			t.Errorf("default scenario lacks sharing %s", m)
		}
	}
	for _, l := range []string{LoadTraining, LoadInference, LoadNotebook, LoadBatch, LoadLeak} {
		if !loads[l] {
			t.Errorf("default scenario lacks load %s", l)
		}
	}
	for _, ns := range []string{"team-vision", "team-nlp", "team-recsys", "research-notebooks", "batch-etl"} {
		if !namespaces[ns] {
			t.Errorf("default scenario lacks namespace %s", ns)
		}
	}
	for _, s := range []string{"dgxh100", "dgxh200", "dgxa100-80gb", "l4"} {
		if !systemsSeen[s] {
			t.Errorf("default scenario lacks system %s", s)
		}
	}
	// Default returns a fresh copy each time.
	sc.Nodes[0].Name = "changed"
	if Default().Nodes[0].Name == "changed" {
		t.Error("Default shares state between calls")
	}
}

// TestDefaultScenarioInvariants runs the default fleet for a simulated
// week, hourly, and checks what NVML reports is physically consistent.
func TestDefaultScenarioInvariants(t *testing.T) {
	sc := Default()
	for _, n := range sc.Nodes {
		s := newSim(t, sc, n.Name)
		lib := s.Interface()
		count, _ := lib.DeviceGetCount()
		lastEnergy := make([]uint64, count)
		leakRestarts := 0
		for h := 0; h <= 7*24; h++ {
			s.Advance(fixedStart.Add(time.Duration(h) * time.Hour))
			tenants := map[int]int{}
			for _, p := range s.Pods() {
				if p.Sharing == ModeTimeSlicing || p.Sharing == ModeMPS {
					tenants[p.GPUIndex]++
					if tenants[p.GPUIndex] > p.Replicas || p.Replica < 0 || p.Replica >= p.Replicas {
						t.Fatalf("%s %dh: GPU %d tenant %s replica %d of %d", n.Name, h, p.GPUIndex, p.Name, p.Replica, p.Replicas)
					}
				}
				leakRestarts = max(leakRestarts, p.Restarts)
			}
			for i := range count {
				d := handle(t, lib, i)
				mem, r := d.GetMemoryInfo_v2()
				if r == nvml.ERROR_GPU_IS_LOST {
					continue // the L4 that falls off the bus on day 5
				}
				ok(t, "GetMemoryInfo_v2", r)
				procs, _ := d.GetComputeRunningProcesses()
				var sum uint64
				for _, p := range procs {
					sum += p.UsedGpuMemory
				}
				if sum > mem.Used || mem.Used+mem.Reserved > mem.Total {
					t.Fatalf("%s GPU %d at %dh: processes %d, used %d, reserved %d, total %d", n.Name, i, h, sum, mem.Used, mem.Reserved, mem.Total)
				}
				e, _ := d.GetTotalEnergyConsumption()
				if e < lastEnergy[i] {
					t.Fatalf("%s GPU %d: energy went backwards", n.Name, i)
				}
				lastEnergy[i] = e
				mode, _, _ := d.GetMigMode()
				if mode != nvml.DEVICE_MIG_ENABLE {
					continue
				}
				var slices, instUsed uint64
				for k := 0; ; k++ {
					m, r := d.GetMigDeviceHandleByIndex(k)
					if r != nvml.SUCCESS {
						break
					}
					attr, _ := m.GetAttributes()
					im, _ := m.GetMemoryInfo()
					ip, _ := m.GetComputeRunningProcesses()
					var isum uint64
					for _, p := range ip {
						isum += p.UsedGpuMemory
					}
					if isum > im.Used || im.Used > im.Total {
						t.Fatalf("%s GPU %d MIG %d: processes %d used %d total %d", n.Name, i, k, isum, im.Used, im.Total)
					}
					slices += uint64(attr.GpuInstanceSliceCount)
					instUsed += im.Used
				}
				if slices > 7 || instUsed != mem.Used {
					t.Fatalf("%s GPU %d: MIG slices %d, instances use %d, device %d", n.Name, i, slices, instUsed, mem.Used)
				}
			}
		}
		if n.Name == "gpu-a100-01" && leakRestarts == 0 {
			t.Error("the leaking worker never hit OOM in a week")
		}
	}
}

// BenchmarkDemoStep is one simulated minute of the demo: advance every
// node of the default fleet and read every GPU the way the reader does.
func BenchmarkDemoStep(b *testing.B) {
	sc := Default()
	var sims []*NodeSim
	for _, n := range sc.Nodes {
		s, err := NewNode(sc, n.Name, fixedStart)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sims = append(sims, s)
	}
	now := fixedStart
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Minute)
		for _, s := range sims {
			s.Advance(now)
			lib := s.Interface()
			count, _ := lib.DeviceGetCount()
			for i := range count {
				d, _ := lib.DeviceGetHandleByIndex(i)
				d.GetMemoryInfo_v2()
				d.GetUtilizationRates()
				d.GetPowerUsage()
				d.GetTotalEnergyConsumption()
				d.GetTemperature(nvml.TEMPERATURE_GPU)
				d.GetClockInfo(nvml.CLOCK_SM)
				d.GetCurrentClocksEventReasons()
				d.GetComputeRunningProcesses()
				d.GetProcessUtilization(0)
			}
		}
	}
}
