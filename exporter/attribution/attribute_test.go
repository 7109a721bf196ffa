package attribution

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/vocab"
)

// PIDs of the fixture tree under testdata/proc:
//
//	1001, 1002  pods 1 and 2 (containers 1 and 2)
//	1003        a host process (sshd.service)
//	1004        pod 99, which no index knows
//	1005        static pod with config hash staticHash (container 5)
//	1006        an unparseable cgroup file
//	1007        pod 1, container 7 that the pod status does not show yet
//	2011–2018   pods 11–18; 3001, 3002 pods 21, 22; 4001, 4002 pods 31, 32
//	1008        absent: a process that exited after NVML listed it
const staticHash = "0123456789abcdef0123456789abcdef"

// The names as the kubelet sends them.
const (
	gpuRes    = string(vocab.ResourceGPU)
	sharedRes = string(vocab.ResourceGPUShared)
)

func TestAttribute(t *testing.T) {
	k := newKubelet(t)
	timeSliced4 := []advertise{{gpuRes, replicas(gpuUUID(0), 4)}}
	infer := podindex.Static(indexed("ml", "infer-0", 1, "server"), indexed("ml", "infer-1", 2, "server"), indexed("ml", "infer-2", 3, "server"), indexed("train", "a", 4, "main"))
	inferHolds := []hold{
		{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
		{"ml", "infer-1", "server", gpuRes, []string{gpuUUID(0) + "::1"}},
		{"ml", "infer-2", "server", gpuRes, []string{gpuUUID(0) + "::2"}},
	}
	busyShared := wholeGPU(0, 0.9, 8,
		proc(1001, 2, 0.2), proc(1002, 1, 0.5), proc(1003, 0.5, 0.1), proc(1004, 1, gpu.NA),
		proc(1006, 1, 0.1), proc(1007, 1, 0.1), proc(1008, 1, 0.1))

	for _, tc := range []struct {
		name       string
		snap       *gpu.Snapshot
		adv        []advertise
		holds      []hold
		pods       podindex.Index
		procRoot   string
		sharedMode vocab.Sharing
		want       []string
		wantStats  Stats
	}{
		{
			name: "whole GPUs measured by the device",
			snap: snapshot(wholeGPU(0, 0.5, 10, proc(1003, 1, 0.4)), wholeGPU(1, 0.25, 20), wholeGPU(2, 0.99, 70)),
			adv:  []advertise{{gpuRes, []string{gpuUUID(0), gpuUUID(1), gpuUUID(2)}}},
			holds: []hold{
				{"train", "b", "main", gpuRes, []string{gpuUUID(1)}},
				{"train", "a", "main", gpuRes, []string{gpuUUID(0)}},
			},
			pods:     podindex.Static(indexed("train", "a", 4, "main"), indexed("train", "b", 5, "main")),
			procRoot: fixtureProc,
			want: []string{
				"train/a/main gpu=0 gi=-1 none alloc=1 util=0.5(device) mem=1.024e+04MiB(device)",
				"train/b/main gpu=1 gi=-1 none alloc=1 util=0.25(device) mem=2.048e+04MiB(device)",
			},
			// Processes on GPUs held alone are not looked up.
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name:     "time-sliced x4 attributed by process",
			snap:     snapshot(busyShared),
			adv:      timeSliced4,
			holds:    inferHolds,
			pods:     infer,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=0.8(process) mem=2048MiB(process)",
				"ml/infer-1/server gpu=0 gi=-1 time-slicing alloc=0.25 util=2(process) mem=1024MiB(process)", // half the GPU: twice its share
				// Holds a replica but runs nothing: measured idle, not unknown.
				"ml/infer-2/server gpu=0 gi=-1 time-slicing alloc=0.25 util=0(process) mem=0MiB(process)",
			},
			// host process, unknown pod, unlisted container, exited process;
			// and the unparseable cgroup file.
			wantStats: Stats{Mode: ModeProcess, UnattributedProcesses: 4, ProcErrors: 1},
		},
		{
			name:     "time-sliced x4 without host /proc is allocation-only",
			snap:     snapshot(busyShared, wholeGPU(1, 0.5, 10)),
			adv:      append(slices.Clip(timeSliced4), advertise{gpuRes, []string{gpuUUID(1)}}),
			holds:    append(slices.Clip(inferHolds), hold{"train", "a", "main", gpuRes, []string{gpuUUID(1)}}),
			pods:     infer,
			procRoot: "",
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
				"ml/infer-1/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
				"ml/infer-2/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
				// A GPU held alone needs no process data.
				"train/a/main gpu=1 gi=-1 none alloc=1 util=0.5(device) mem=1.024e+04MiB(device)",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name:      "unreadable host /proc is allocation-only",
			snap:      snapshot(busyShared),
			adv:       timeSliced4,
			holds:     inferHolds[:1],
			pods:      infer,
			procRoot:  "testdata/no-such-proc",
			want:      []string{"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA"},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name:     "without a pod index everything the kubelet lists is attributed, allocation-only",
			snap:     snapshot(busyShared),
			adv:      timeSliced4,
			holds:    append(slices.Clip(inferHolds[:1]), hold{"ml", "not-indexed", "server", gpuRes, []string{gpuUUID(0) + "::3"}}),
			pods:     nil,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
				"ml/not-indexed/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name:     "an index that has not synced hides nothing and attributes no process",
			snap:     snapshot(busyShared),
			adv:      timeSliced4,
			holds:    append(slices.Clip(inferHolds[:1]), hold{"ml", "not-indexed", "server", gpuRes, []string{gpuUUID(0) + "::3"}}),
			pods:     unsynced{infer},
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
				"ml/not-indexed/server gpu=0 gi=-1 time-slicing alloc=0.25 util=NA mem=NA",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name:      "time-sliced x8 under the renamed shared resource",
			snap:      snapshot(timeSliced8GPU()),
			adv:       []advertise{{sharedRes, replicas(gpuUUID(1), 8)}},
			holds:     timeSliced8Holds(),
			pods:      timeSliced8Pods(),
			procRoot:  fixtureProc,
			want:      timeSliced8Want(),
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name:       "MPS",
			snap:       snapshot(wholeGPU(0, 0.7, 8, proc(3001, 4, 0.3), proc(3002, 2, 0.1), proc(1003, 0.1, gpu.NA))),
			adv:        []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds:      []hold{{"llm", "a", "server", gpuRes, []string{gpuUUID(0) + "::0"}}, {"llm", "b", "server", gpuRes, []string{gpuUUID(0) + "::1"}}},
			pods:       podindex.Static(indexed("llm", "a", 21, "server"), indexed("llm", "b", 22, "server")),
			procRoot:   fixtureProc,
			sharedMode: SharingMPS,
			want: []string{
				"llm/a/server gpu=0 gi=-1 mps alloc=0.5 util=0.6(process) mem=4096MiB(process)",
				"llm/b/server gpu=0 gi=-1 mps alloc=0.5 util=0.2(process) mem=2048MiB(process)",
			},
			// The MPS control daemon's server runs outside any GPU pod.
			wantStats: Stats{Mode: ModeProcess, UnattributedProcesses: 1},
		},
		{
			name: "MIG mixed strategy on H100 measured by GPM",
			snap: snapshot(migGPU(0, "NVIDIA H100 80GB HBM3", 30,
				instance(1, "1g.10gb", 1, 0.4, 3), instance(2, "1g.10gb", 1, 0.1, 1), instance(3, "3g.40gb", 3, 0.9, 20))),
			adv: []advertise{
				{"nvidia.com/mig-1g.10gb", []string{migUUID(0, 1), migUUID(0, 2)}},
				{"nvidia.com/mig-3g.40gb", []string{migUUID(0, 3)}},
			},
			holds: []hold{
				{"ml", "small-1", "main", "nvidia.com/mig-1g.10gb", []string{migUUID(0, 1)}},
				{"ml", "small-2", "main", "nvidia.com/mig-1g.10gb", []string{migUUID(0, 2)}},
				{"ml", "big", "main", "nvidia.com/mig-3g.40gb", []string{migUUID(0, 3)}},
			},
			pods:     podindex.Static(indexed("ml", "small-1", 41, "main"), indexed("ml", "small-2", 42, "main"), indexed("ml", "big", 43, "main")),
			procRoot: fixtureProc,
			want: []string{
				"ml/big/main gpu=0 gi=3 mig alloc=0.4286 util=0.9(mig-gpm) mem=2.048e+04MiB(device) profile=3g.40gb",
				"ml/small-1/main gpu=0 gi=1 mig alloc=0.1429 util=0.4(mig-gpm) mem=3072MiB(device) profile=1g.10gb",
				"ml/small-2/main gpu=0 gi=2 mig alloc=0.1429 util=0.1(mig-gpm) mem=1024MiB(device) profile=1g.10gb",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "MIG single strategy on A100: no GPM, memory only",
			snap: snapshot(migGPU(0, "NVIDIA A100-SXM4-40GB", 10,
				instance(1, "1g.5gb", 1, gpu.NA, 2), instance(2, "2g.10gb", 2, gpu.NA, 4))),
			adv:   []advertise{{gpuRes, []string{migUUID(0, 1), migUUID(0, 2)}}},
			holds: []hold{{"ml", "a", "main", gpuRes, []string{migUUID(0, 2)}}},
			pods:  podindex.Static(indexed("ml", "a", 41, "main")),
			want: []string{
				"ml/a/main gpu=0 gi=2 mig alloc=0.2857 util=NA mem=4096MiB(device) profile=2g.10gb",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name: "MIG on A30 splits four ways",
			snap: snapshot(migGPU(0, "NVIDIA A30", 10, instance(1, "1g.6gb", 1, gpu.NA, 2))),
			adv:  []advertise{{"nvidia.com/mig-1g.6gb", []string{migUUID(0, 1)}}},
			holds: []hold{
				{"ml", "a", "main", "nvidia.com/mig-1g.6gb", []string{migUUID(0, 1)}},
			},
			want:      []string{"ml/a/main gpu=0 gi=1 mig alloc=0.25 util=NA mem=2048MiB(device) profile=1g.6gb"},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			// NVML's total wins over the catalog: a model the catalog
			// lacks, whose largest profile has 8 slices.
			name: "MIG total from NVML for a model outside the catalog",
			snap: snapshot(func() gpu.Device {
				d := migGPU(0, "NVIDIA Future GPU", 10, instance(1, "2g.20gb", 2, gpu.NA, 2))
				d.MIGComputeSlices = 8
				return d
			}()),
			adv:       []advertise{{"nvidia.com/mig-2g.20gb", []string{migUUID(0, 1)}}},
			holds:     []hold{{"ml", "a", "main", "nvidia.com/mig-2g.20gb", []string{migUUID(0, 1)}}},
			want:      []string{"ml/a/main gpu=0 gi=1 mig alloc=0.25 util=NA mem=2048MiB(device) profile=2g.20gb"},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name: "time-sliced MIG instance: process memory, no per-process utilization",
			snap: snapshot(func() gpu.Device {
				d := migGPU(0, "NVIDIA H100 80GB HBM3", 20, instance(1, "1g.10gb", 1, 0.8, 6), instance(2, "1g.10gb", 1, 0.2, 9))
				d.Processes = []gpu.Process{migProc(4001, 1, 4), migProc(4002, 1, 1), migProc(1001, 2, 9)}
				return d
			}()),
			adv: []advertise{{"nvidia.com/mig-1g.10gb.shared", replicas(migUUID(0, 1), 2)}},
			holds: []hold{
				{"ml", "a", "main", "nvidia.com/mig-1g.10gb.shared", []string{migUUID(0, 1) + "::0"}},
				{"ml", "b", "main", "nvidia.com/mig-1g.10gb.shared", []string{migUUID(0, 1) + "::1"}},
			},
			pods:     podindex.Static(indexed("ml", "a", 31, "main"), indexed("ml", "b", 32, "main")),
			procRoot: fixtureProc,
			want: []string{
				"ml/a/main gpu=0 gi=1 mig alloc=0.07143 util=NA mem=4096MiB(process) profile=1g.10gb",
				"ml/b/main gpu=0 gi=1 mig alloc=0.07143 util=NA mem=1024MiB(process) profile=1g.10gb",
			},
			// PID 1001 runs on instance 2, which nobody holds shared.
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "legacy MIG-GPU UUIDs and the index strategy",
			snap: snapshot(
				migGPU(0, "NVIDIA A100-SXM4-80GB", 10, instance(1, "1g.10gb", 1, gpu.NA, 1), instance(5, "3g.40gb", 3, gpu.NA, 2)),
				wholeGPU(1, 0.3, 5),
				func() gpu.Device {
					d := migGPU(2, "NVIDIA A100-SXM4-80GB", 10, instance(3, "1g.10gb", 1, gpu.NA, 3), instance(4, "1g.10gb", 1, gpu.NA, 4))
					// MIG device 1 was destroyed: indices need not follow positions.
					d.Instances[1].Index = 2
					return d
				}(),
			),
			holds: []hold{
				{"ml", "legacy", "main", "nvidia.com/mig-3g.40gb", []string{"MIG-" + gpuUUID(0) + "/5/0"}},
				{"ml", "by-index", "main", gpuRes, []string{"1"}},
				{"ml", "by-mig-index", "main", "nvidia.com/mig-1g.10gb", []string{"2:2"}},
				{"ml", "gone-mig-index", "main", "nvidia.com/mig-1g.10gb", []string{"2:1"}},
			},
			want: []string{
				"ml/by-index/main gpu=1 gi=-1 none alloc=1 util=0.3(device) mem=5120MiB(device)",
				"ml/by-mig-index/main gpu=2 gi=4 mig alloc=0.1429 util=NA mem=4096MiB(device) profile=1g.10gb",
				"ml/legacy/main gpu=0 gi=5 mig alloc=0.4286 util=NA mem=2048MiB(device) profile=3g.40gb",
			},
			wantStats: Stats{Mode: ModeAllocationOnly, UnmatchedDevices: 1},
		},
		{
			name: "GKE device IDs",
			snap: snapshot(
				wholeGPU(0, 0.6, 10),
				migGPU(1, "NVIDIA A100-SXM4-40GB", 10, instance(1, "1g.5gb", 1, gpu.NA, 1), instance(2, "3g.20gb", 3, gpu.NA, 3)),
				wholeGPU(2, 0.8, 8, proc(1001, 2, 0.1), proc(1002, 3, 0.05)),
			),
			adv: []advertise{
				{gpuRes, []string{"nvidia0"}},
				{"nvidia.com/mig-3g.20gb", []string{"nvidia1/gi2"}},
				{gpuRes, []string{"nvidia2/vgpu0", "nvidia2/vgpu1", "nvidia2/vgpu2", "nvidia2/vgpu3"}},
			},
			holds: []hold{
				{"gke", "whole", "main", gpuRes, []string{"nvidia0"}},
				{"gke", "mig", "main", "nvidia.com/mig-3g.20gb", []string{"nvidia1/gi2"}},
				{"gke", "shared-1", "main", gpuRes, []string{"nvidia2/vgpu0"}},
				{"gke", "shared-2", "main", gpuRes, []string{"nvidia2/vgpu3"}},
			},
			pods: podindex.Static(indexed("gke", "whole", 40, "main"), indexed("gke", "mig", 41, "main"),
				indexed("gke", "shared-1", 1, "main"), indexed("gke", "shared-2", 2, "main")),
			procRoot:   fixtureProc,
			sharedMode: "none", // an unknown mode is time-slicing
			want: []string{
				"gke/mig/main gpu=1 gi=2 mig alloc=0.4286 util=NA mem=3072MiB(device) profile=3g.20gb",
				"gke/shared-1/main gpu=2 gi=-1 time-slicing alloc=0.25 util=0.4(process) mem=2048MiB(process)",
				"gke/shared-2/main gpu=2 gi=-1 time-slicing alloc=0.25 util=0.2(process) mem=3072MiB(process)",
				"gke/whole/main gpu=0 gi=-1 none alloc=1 util=0.6(device) mem=1.024e+04MiB(device)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "finished and deleted pods have no series and take no share",
			snap: snapshot(busyShared, wholeGPU(1, 0.5, 1), wholeGPU(2, 0.5, 1)),
			adv:  []advertise{{gpuRes, append(replicas(gpuUUID(0), 4), gpuUUID(1), gpuUUID(2))}},
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "deleted", "server", gpuRes, []string{gpuUUID(0) + "::1", "no-such-device"}},
				{"batch", "done", "main", gpuRes, []string{gpuUUID(1)}},
				{"batch", "failed", "main", gpuRes, []string{gpuUUID(2)}},
			},
			pods: podindex.Static(indexed("ml", "infer-0", 1, "server"),
				podindex.Pod{Namespace: "batch", Name: "done", UID: podUID(50), Phase: podindex.PodSucceeded},
				podindex.Pod{Namespace: "batch", Name: "failed", UID: podUID(51), Phase: podindex.PodFailed}),
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.25 util=0.8(process) mem=2048MiB(process)",
			},
			// 1002 belongs to a pod holding nothing that is still live.
			wantStats: Stats{Mode: ModeProcess, UnattributedProcesses: 5, ProcErrors: 1},
		},
		{
			name: "a down GPU keeps its allocation, a MIG instance it no longer lists is unmatched",
			snap: snapshot(
				gpu.Device{Index: 0, UUID: gpuUUID(0), Model: "NVIDIA H100 80GB HBM3", Err: "GPU is lost",
					Utilization: gpu.NA, MemoryUsedBytes: gpu.NA},
				gpu.Device{Index: 1, UUID: gpuUUID(1), Model: "NVIDIA H100 80GB HBM3", MIGMode: true, Err: "GPU is lost",
					Utilization: gpu.NA, MemoryUsedBytes: gpu.NA},
			),
			holds: []hold{
				{"ml", "a", "main", gpuRes, []string{gpuUUID(0)}},
				{"ml", "b", "main", "nvidia.com/mig-1g.10gb", []string{migUUID(1, 1)}},
			},
			pods:      podindex.Static(indexed("ml", "a", 1, "main"), indexed("ml", "b", 2, "main")),
			procRoot:  fixtureProc,
			want:      []string{"ml/a/main gpu=0 gi=-1 none alloc=1 util=NA mem=NA"},
			wantStats: Stats{Mode: ModeProcess, UnmatchedDevices: 1},
		},
		{
			name: "device IDs that name nothing on the node",
			snap: snapshot(wholeGPU(0, 0.5, 1)),
			holds: []hold{
				{"ml", "a", "main", gpuRes, []string{gpuUUID(7), "3", "3:1"}},
				{"ml", "a", "side", "nvidia.com/mig-1g.10gb", []string{migUUID(0, 1), "MIG-" + gpuUUID(0) + "/1/0", "nvidia0/gi1", "nvidia9"}},
			},
			pods:      podindex.Static(indexed("ml", "a", 1, "main")),
			want:      nil,
			wantStats: Stats{Mode: ModeAllocationOnly, UnmatchedDevices: 7},
		},
		{
			name: "replicas unknown to the kubelet: split among those in use",
			snap: snapshot(wholeGPU(0, 0.5, 4)),
			adv:  nil,
			holds: []hold{
				{"ml", "a", "main", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "b", "main", gpuRes, []string{gpuUUID(0) + "::5"}},
				{"ml", "c", "main", gpuRes, []string{gpuUUID(0) + "::9"}},
			},
			want: []string{
				"ml/a/main gpu=0 gi=-1 time-slicing alloc=0.3333 util=NA mem=NA",
				"ml/b/main gpu=0 gi=-1 time-slicing alloc=0.3333 util=NA mem=NA",
				"ml/c/main gpu=0 gi=-1 time-slicing alloc=0.3333 util=NA mem=NA",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name: "more replicas in use than advertised",
			snap: snapshot(wholeGPU(0, 0.5, 4)),
			adv:  []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds: []hold{
				{"ml", "a", "main", gpuRes, []string{gpuUUID(0) + "::0", gpuUUID(0) + "::1"}},
				{"ml", "b", "main", gpuRes, []string{gpuUUID(0) + "::2", gpuUUID(0) + "::3"}},
			},
			want: []string{
				"ml/a/main gpu=0 gi=-1 time-slicing alloc=0.5 util=NA mem=NA",
				"ml/b/main gpu=0 gi=-1 time-slicing alloc=0.5 util=NA mem=NA",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			name: "two replicas in one container make one record",
			snap: snapshot(wholeGPU(0, 0.5, 8, proc(1001, 2, 0.3))),
			adv:  timeSliced4,
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0", gpuUUID(0) + "::2"}},
			},
			pods:     infer,
			procRoot: fixtureProc,
			// Shared: the GPU's own utilization may include other tenants
			// that start later, so it is never copied.
			want:      []string{"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0.6(process) mem=2048MiB(process)"},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "one exclusive device reported for two containers is not copied to both",
			snap: snapshot(wholeGPU(0, 0.5, 8, proc(1001, 2, 0.3))),
			adv:  []advertise{{gpuRes, []string{gpuUUID(0)}}},
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0)}},
				{"ml", "infer-0", "sidecar", gpuRes, []string{gpuUUID(0)}},
			},
			pods:     infer,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0.6(process) mem=2048MiB(process)",
				"ml/infer-0/sidecar gpu=0 gi=-1 time-slicing alloc=0.5 util=0(process) mem=0MiB(process)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "static pod found through its mirror pod's config hash",
			snap: snapshot(wholeGPU(0, 0.5, 8, proc(1005, 3, 0.1), proc(1001, 1, 0.1))),
			adv:  []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds: []hold{
				{"kube-system", "infer-node-1", "main", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::1"}},
			},
			pods: podindex.Static(indexed("ml", "infer-0", 1, "server"), podindex.Pod{
				UID: podUID(60), ConfigHash: staticHash, Namespace: "kube-system", Name: "infer-node-1",
				Phase: podindex.PodRunning, Containers: map[string]string{containerID(5): "main"},
			}),
			procRoot: fixtureProc,
			want: []string{
				"kube-system/infer-node-1/main gpu=0 gi=-1 time-slicing alloc=0.5 util=0.2(process) mem=3072MiB(process)",
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0.2(process) mem=1024MiB(process)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "process memory above the device's is scaled down to it",
			snap: snapshot(wholeGPU(0, 0.5, 1.5, proc(1001, 2, 0.1), proc(1002, 1, 0.1))),
			adv:  []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "infer-1", "server", gpuRes, []string{gpuUUID(0) + "::1"}},
			},
			pods:     infer,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0.2(process) mem=1024MiB(process)",
				"ml/infer-1/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0.2(process) mem=512MiB(process)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "busy shared GPU without process samples: utilization unknown, not zero",
			snap: snapshot(wholeGPU(0, 0.7, 8, proc(1001, 2, gpu.NA), proc(1002, 1, gpu.NA))),
			adv:  []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "infer-1", "server", gpuRes, []string{gpuUUID(0) + "::1"}},
			},
			pods:     infer,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=NA mem=2048MiB(process)",
				"ml/infer-1/server gpu=0 gi=-1 time-slicing alloc=0.5 util=NA mem=1024MiB(process)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "idle shared GPU without process samples: utilization zero",
			snap: snapshot(wholeGPU(0, 0, 8, proc(1001, 2, gpu.NA), proc(1002, 1, gpu.NA))),
			adv:  []advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			holds: []hold{
				{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
				{"ml", "infer-1", "server", gpuRes, []string{gpuUUID(0) + "::1"}},
			},
			pods:     infer,
			procRoot: fixtureProc,
			want: []string{
				"ml/infer-0/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0(process) mem=2048MiB(process)",
				"ml/infer-1/server gpu=0 gi=-1 time-slicing alloc=0.5 util=0(process) mem=1024MiB(process)",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{
				Node: "n1", Snapshot: tc.snap, Allocations: k.allocations(tc.adv, tc.holds...),
				Pods: tc.pods, ProcRoot: tc.procRoot, SharedMode: tc.sharedMode,
			}
			got, st := Attribute(in)
			if d := diffLines(lines(got), tc.want); d != "" {
				t.Error(d)
			}
			if st != tc.wantStats {
				t.Errorf("stats = %+v, want %+v", st, tc.wantStats)
			}
		})
	}
}

func timeSliced8GPU() gpu.Device {
	d := wholeGPU(1, 0.6, 16)
	for n := 11; n <= 18; n++ {
		d.Processes = append(d.Processes, proc(uint32(2000+n), 1, 0.01*float64(n-10)))
	}
	return d
}

func timeSliced8Holds() []hold {
	var hs []hold
	for n := 11; n <= 18; n++ {
		hs = append(hs, hold{"serve", fmt.Sprintf("replica-%d", n), "server", sharedRes, []string{fmt.Sprintf("%s::%d", gpuUUID(1), n-11)}})
	}
	return hs
}

func timeSliced8Pods() podindex.Index {
	var ps []podindex.Pod
	for n := 11; n <= 18; n++ {
		ps = append(ps, indexed("serve", fmt.Sprintf("replica-%d", n), n, "server"))
	}
	return podindex.Static(ps...)
}

func timeSliced8Want() []string {
	var want []string
	for n := 11; n <= 18; n++ {
		want = append(want, fmt.Sprintf("serve/replica-%d/server gpu=1 gi=-1 time-slicing alloc=0.125 util=%s(process) mem=1024MiB(process)",
			n, num(0.01*float64(n-10)/0.125)))
	}
	return want
}

func TestAttributeRecordIdentity(t *testing.T) {
	k := newKubelet(t)
	snap := snapshot(migGPU(3, "NVIDIA H100 80GB HBM3", 10, instance(2, "", 2, 0.5, 1)))
	got, _ := Attribute(Input{
		Snapshot: snap,
		Allocations: k.allocations(nil,
			hold{"ml", "a", "main", "nvidia.com/mig-2g.20gb", []string{migUUID(3, 2)}}),
	})
	want := ContainerGPU{
		Namespace: "ml", Pod: "a", Container: "main",
		GPU: 3, UUID: gpuUUID(3), Model: "NVIDIA H100 80GB HBM3",
		Sharing: SharingMIG, GPUInstance: 2,
		MIGProfile: "2g.20gb", // NVML gave none; the resource name tells
		MIGUUID:    migUUID(3, 2), Resource: "nvidia.com/mig-2g.20gb",
		Allocation: 2.0 / 7, Utilization: 0.5, UtilizationMethod: MethodMIGGPM,
		MemoryUsedBytes: gib, MemoryMethod: MethodDevice,
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestAttributeWithoutKubelet(t *testing.T) {
	got, st := Attribute(Input{Snapshot: snapshot(wholeGPU(0, 0.5, 1)), ProcRoot: fixtureProc, Pods: podindex.Static()})
	if got != nil || st != (Stats{Mode: ModeProcess}) {
		t.Errorf("Attribute without allocations = %v, %+v", got, st)
	}
}

func TestAttributeWithoutSnapshot(t *testing.T) {
	k := newKubelet(t)
	got, st := Attribute(Input{Allocations: k.allocations(nil, hold{"ml", "a", "main", gpuRes, []string{gpuUUID(0)}})})
	if len(got) != 0 || st.UnmatchedDevices != 1 {
		t.Errorf("Attribute without snapshot = %v, %+v; want nothing, 1 unmatched", got, st)
	}
}
