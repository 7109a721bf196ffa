package attribution

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/vocab"
)

// pool is the node's pool of the GPU driver; the NVIDIA driver names it
// after the node.
const pool = "gpu-node-7"

// published is the GPU driver's ResourceSlices of the node, by device name.
type published map[string]sliceindex.Device

func (p published) Lookup(k podresources.DRADevice) (sliceindex.Device, bool) {
	if k.Driver != podresources.DefaultDRADriver || k.Pool != pool {
		return sliceindex.Device{}, false
	}
	d, ok := p[k.Device]
	return d, ok
}

func sliceGPU(uuid string) sliceindex.Device {
	return sliceindex.Device{Type: sliceindex.TypeGPU, UUID: uuid}
}

func sliceMIG(uuid, parent, profile string) sliceindex.Device {
	return sliceindex.Device{Type: sliceindex.TypeMIG, UUID: uuid, ParentUUID: parent, Profile: profile}
}

// claimLine is line with the claims a record names.
func claimLine(r ContainerGPU) string {
	var cs []string
	for _, c := range r.Claims {
		cs = append(cs, c.Namespace+"/"+c.Name+":"+c.Device)
	}
	return line(r) + " claims=" + strings.Join(cs, ",")
}

func TestAttributeClaims(t *testing.T) {
	k := newKubelet(t)
	slices := published{
		"gpu-1": sliceGPU(gpuUUID(1)),
		"gpu-2": sliceGPU(gpuUUID(2)),
		// Exists: NVML lists its instance under this UUID.
		"gpu-3-mig-1g10gb-19-0": sliceMIG(migUUID(3, 1), gpuUUID(3), "1g.10gb"),
		// DynamicMIG: announced without a UUID; gpu 3 has one 3g.40gb.
		"gpu-3-mig-3g40gb-9-4": sliceMIG("", gpuUUID(3), "3g.40gb"),
		// gpu 4 has two 1g.10gb instances: which one is not knowable.
		"gpu-4-mig-1g10gb-19-1": sliceMIG("", gpuUUID(4), "1g.10gb"),
		// A GPU passed through to a VM: NVML does not see it.
		"gpu-vfio-0": {Type: "vfio", UUID: "GPU-99999999-0000-4000-8000-000000000000"},
	}
	h100 := "NVIDIA H100 80GB HBM3"
	sharedGPU := wholeGPU(2, 0.9, 8, proc(1001, 2, 0.2), proc(1002, 1, 0.5), proc(1003, 0.5, 0.1))
	migs := migGPU(3, h100, 10, instance(1, "1g.10gb", 1, 0.3, 4), instance(2, "3g.40gb", 3, 0.6, 5))
	migPair := migGPU(3, h100, 10, instance(1, "1g.10gb", 1, 0.3, 4))
	migPair.Processes = []gpu.Process{migProc(1001, 1, 1), migProc(1002, 1, 2)}
	embeds := podindex.Static(indexed("ml", "embed-a", 1, "server"), indexed("ml", "embed-b", 2, "server"))

	for _, tc := range []struct {
		name       string
		snap       *gpu.Snapshot
		holds      []hold
		claims     []claimHold
		slices     sliceindex.Index
		pods       podindex.Index
		sharedMode vocab.Sharing
		want       []string
		wantStats  Stats
	}{
		{
			name: "mixed node: a device-plugin GPU and a whole GPU through a claim, each measured by the device",
			snap: snapshot(wholeGPU(0, 0.5, 10), wholeGPU(1, 0.25, 20)),
			holds: []hold{
				{"train", "a", "main", gpuRes, []string{gpuUUID(0)}},
			},
			claims: []claimHold{{"serve", "chat", "server", "chat-gpu-x2kq9", []string{pool + "/gpu-1"}}},
			slices: slices,
			want: []string{
				"serve/chat/server gpu=1 gi=-1 none alloc=1 util=0.25(device) mem=2.048e+04MiB(device) claims=serve/chat-gpu-x2kq9:gpu-1",
				"train/a/main gpu=0 gi=-1 none alloc=1 util=0.5(device) mem=1.024e+04MiB(device) claims=",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			// Half the GPU each; utilization is of that half: 0.2/0.5 and
			// 0.5/0.5. The host process 1003 belongs to neither.
			name: "one claim shared by two pods: time-slicing, measured per process",
			snap: snapshot(sharedGPU),
			claims: []claimHold{
				{"ml", "embed-a", "server", "shared-gpu", []string{pool + "/gpu-2"}},
				{"ml", "embed-b", "server", "shared-gpu", []string{pool + "/gpu-2"}},
			},
			slices: slices, pods: embeds,
			want: []string{
				"ml/embed-a/server gpu=2 gi=-1 time-slicing alloc=0.5 util=0.4(process) mem=2048MiB(process) claims=ml/shared-gpu:gpu-2",
				"ml/embed-b/server gpu=2 gi=-1 time-slicing alloc=0.5 util=1(process) mem=1024MiB(process) claims=ml/shared-gpu:gpu-2",
			},
			wantStats: Stats{Mode: ModeProcess, UnattributedProcesses: 1},
		},
		{
			name: "one claim shared by two pods under MPS",
			snap: snapshot(sharedGPU),
			claims: []claimHold{
				{"ml", "embed-a", "server", "shared-gpu", []string{pool + "/gpu-2"}},
				{"ml", "embed-b", "server", "shared-gpu", []string{pool + "/gpu-2"}},
			},
			slices: slices, pods: embeds, sharedMode: SharingMPS,
			want: []string{
				"ml/embed-a/server gpu=2 gi=-1 mps alloc=0.5 util=0.4(process) mem=2048MiB(process) claims=ml/shared-gpu:gpu-2",
				"ml/embed-b/server gpu=2 gi=-1 mps alloc=0.5 util=1(process) mem=1024MiB(process) claims=ml/shared-gpu:gpu-2",
			},
			wantStats: Stats{Mode: ModeProcess, UnattributedProcesses: 1},
		},
		{
			// 1 and 3 compute slices of the H100's 7.
			name: "MIG devices through claims: by UUID, and a DynamicMIG device by its parent's only instance of the profile",
			snap: snapshot(migs),
			claims: []claimHold{
				{"research", "nb", "jupyter", "nb-mig", []string{pool + "/gpu-3-mig-1g10gb-19-0"}},
				{"research", "big", "main", "big-mig", []string{pool + "/gpu-3-mig-3g40gb-9-4"}},
			},
			slices: slices,
			want: []string{
				"research/big/main gpu=3 gi=2 mig alloc=0.4286 util=0.6(mig-gpm) mem=5120MiB(device) profile=3g.40gb claims=research/big-mig:gpu-3-mig-3g40gb-9-4",
				"research/nb/jupyter gpu=3 gi=1 mig alloc=0.1429 util=0.3(mig-gpm) mem=4096MiB(device) profile=1g.10gb claims=research/nb-mig:gpu-3-mig-1g10gb-19-0",
			},
			wantStats: Stats{Mode: ModeAllocationOnly},
		},
		{
			// Half of 1 slice of 7 each; NVML has no per-process
			// utilization inside MIG, memory comes from the processes.
			name: "a MIG claim shared by two pods",
			snap: snapshot(migPair),
			claims: []claimHold{
				{"ml", "embed-a", "server", "mig-pair", []string{pool + "/gpu-3-mig-1g10gb-19-0"}},
				{"ml", "embed-b", "server", "mig-pair", []string{pool + "/gpu-3-mig-1g10gb-19-0"}},
			},
			slices: slices, pods: embeds,
			want: []string{
				"ml/embed-a/server gpu=3 gi=1 mig alloc=0.07143 util=NA mem=1024MiB(process) profile=1g.10gb claims=ml/mig-pair:gpu-3-mig-1g10gb-19-0",
				"ml/embed-b/server gpu=3 gi=1 mig alloc=0.07143 util=NA mem=2048MiB(process) profile=1g.10gb claims=ml/mig-pair:gpu-3-mig-1g10gb-19-0",
			},
			wantStats: Stats{Mode: ModeProcess},
		},
		{
			name: "unresolvable claim devices are unmatched",
			snap: snapshot(wholeGPU(1, 0.25, 20), migGPU(4, h100, 2, instance(1, "1g.10gb", 1, 0.1, 1), instance(2, "1g.10gb", 1, 0.2, 1))),
			claims: []claimHold{
				{"x", "a", "main", "c1", []string{pool + "/gpu-9"}},                 // in no slice
				{"x", "b", "main", "c2", []string{pool + "/gpu-vfio-0"}},            // not in NVML
				{"x", "c", "main", "c3", []string{pool + "/gpu-4-mig-1g10gb-19-1"}}, // ambiguous
				{"x", "d", "main", "c4", []string{"gpu-node-8/gpu-1"}},              // another pool
			},
			slices:    slices,
			wantStats: Stats{Mode: ModeAllocationOnly, UnmatchedDevices: 4},
		},
		{
			name:      "without the slices no claim device resolves",
			snap:      snapshot(wholeGPU(1, 0.25, 20)),
			claims:    []claimHold{{"serve", "chat", "server", "chat-gpu", []string{pool + "/gpu-1"}}},
			wantStats: Stats{Mode: ModeAllocationOnly, UnmatchedDevices: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{
				Snapshot:    tc.snap,
				Allocations: k.allocationsWithClaims(nil, tc.claims, tc.holds...),
				Slices:      tc.slices,
				Pods:        tc.pods,
				SharedMode:  tc.sharedMode,
			}
			if tc.pods != nil {
				in.ProcRoot = fixtureProc
			}
			got, st := Attribute(in)
			var gotLines []string
			for _, r := range got {
				gotLines = append(gotLines, claimLine(r))
			}
			if d := diffLines(gotLines, tc.want); d != "" {
				t.Error(d)
			}
			if st != tc.wantStats {
				t.Errorf("stats = %+v, want %+v", st, tc.wantStats)
			}
		})
	}
}
