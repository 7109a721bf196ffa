package nvml

import (
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// migRig puts GPU 0 of a DGX H100 in MIG mode with two instances at MIG
// device indexes 0 and 3; 1 and 2 are holes, answered the two ways NVML does.
func migRig(t *testing.T) (*rig, map[int]gonvml.Device) {
	r := newRig(t, dgxh100.New())
	d := r.devs[0]
	d.MigMode = gonvml.DEVICE_MIG_ENABLE
	handles := map[int]gonvml.Device{
		0: newMIGDevice(migSpec{uuid: "MIG-a", name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", gi: 9, ci: 0,
			slices: 1, memMiB: 10240, usedMiB: 2048, procPIDs: []uint32{2001}}),
		3: newMIGDevice(migSpec{uuid: "MIG-b", name: "", gi: 2, ci: 0, // name unsupported: profile from attributes
			slices: 3, memMiB: 40960, usedMiB: 4096, procPIDs: []uint32{2002, 2003}}),
	}
	d.GetMaxMigDeviceCountFunc = func() (int, gonvml.Return) { return 7, gonvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if h, ok := handles[i]; ok {
			return h, gonvml.SUCCESS
		}
		if i == 2 {
			return nil, gonvml.ERROR_INVALID_ARGUMENT
		}
		return nil, gonvml.ERROR_NOT_FOUND
	}
	// NVML does not sample processes in MIG mode.
	d.GetProcessUtilizationFunc = func(uint64) ([]gonvml.ProcessUtilizationSample, gonvml.Return) {
		return nil, gonvml.ERROR_NOT_SUPPORTED
	}
	d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		t.Error("parent GPU asked for processes in MIG mode: they would be counted twice")
		return nil, gonvml.SUCCESS
	}
	return r, handles
}

func TestMIGInstances(t *testing.T) {
	r, _ := migRig(t)
	s := sample(t, r.open(t, time.Second))
	if len(s.Errors) != 0 {
		t.Errorf("Errors = %v: holes are not errors", s.Errors)
	}
	d := s.Devices[0]
	if !d.Up || !d.MIGMode {
		t.Fatalf("Up=%v MIGMode=%v", d.Up, d.MIGMode)
	}
	na := gpu.NA
	want := []gpu.Instance{
		{Index: 0, UUID: "MIG-a", GPUInstanceID: 9, ComputeInstanceID: 0, Profile: "1g.10gb", Slices: 1, MemorySlices: 1,
			MemoryUsedBytes: 2048 << 20, MemoryTotalBytes: 10240 << 20},
		{Index: 3, UUID: "MIG-b", GPUInstanceID: 2, ComputeInstanceID: 0, Profile: "3g.40gb", Slices: 3, MemorySlices: 4,
			MemoryUsedBytes: 4096 << 20, MemoryTotalBytes: 40960 << 20},
	}
	if len(d.Instances) != len(want) {
		t.Fatalf("instances = %+v", d.Instances)
	}
	for i, w := range want {
		got := d.Instances[i]
		if !isNA(got.SMActive) {
			t.Errorf("instance %d has GPM values without GPM", i)
		}
		// NA never equals NA: compare the rest.
		got.SMActive, got.SMOccupancy, got.TensorActive, got.DRAMActive = 0, 0, 0, 0
		if got != w {
			t.Errorf("instance %d = %+v\nwant %+v", i, got, w)
		}
	}
	wantProcs := []gpu.Process{
		{PID: 2001, GPUInstanceID: 9, ComputeInstanceID: 0, MemoryUsedBytes: 256 << 20, SMUtilization: na},
		{PID: 2002, GPUInstanceID: 2, ComputeInstanceID: 0, MemoryUsedBytes: 256 << 20, SMUtilization: na},
		{PID: 2003, GPUInstanceID: 2, ComputeInstanceID: 0, MemoryUsedBytes: 256 << 20, SMUtilization: na},
	}
	if len(d.Processes) != len(wantProcs) {
		t.Fatalf("processes = %+v", d.Processes)
	}
	for i, w := range wantProcs {
		got := d.Processes[i]
		if got.PID != w.PID || got.GPUInstanceID != w.GPUInstanceID || got.ComputeInstanceID != w.ComputeInstanceID ||
			got.MemoryUsedBytes != w.MemoryUsedBytes || !isNA(got.SMUtilization) {
			t.Errorf("process %d = %+v, want %+v", i, got, w)
		}
	}
	if other := s.Devices[1]; other.MIGMode || len(other.Instances) != 0 {
		t.Errorf("gpu 1 MIG=%v instances=%d", other.MIGMode, len(other.Instances))
	}
}

func TestMIGReconfiguration(t *testing.T) {
	r, handles := migRig(t)
	b := r.open(t, time.Second)
	if n := len(sample(t, b).Devices[0].Instances); n != 2 {
		t.Fatalf("%d instances, want 2", n)
	}
	delete(handles, 3)
	handles[5] = newMIGDevice(migSpec{uuid: "MIG-c", name: "NVIDIA H100 80GB HBM3 MIG 2g.20gb", gi: 3,
		slices: 2, memMiB: 20480})
	d := sample(t, b).Devices[0]
	if len(d.Instances) != 2 || d.Instances[0].UUID != "MIG-a" || d.Instances[1].UUID != "MIG-c" ||
		d.Instances[1].Profile != "2g.20gb" || d.Instances[1].MemorySlices != 2 {
		t.Errorf("after reconfiguration: %+v", d.Instances)
	}
	if len(b.devs[0].mig) != 2 {
		t.Errorf("%d instances cached, want 2: the destroyed one must be forgotten", len(b.devs[0].mig))
	}
}

func TestMIGProfileFromNameWithoutAttributes(t *testing.T) {
	r, handles := migRig(t)
	m := newMIGDevice(migSpec{uuid: "MIG-d", name: "NVIDIA H100 80GB HBM3 MIG 1c.2g.20gb", gi: 4, ci: 1})
	m.GetAttributesFunc = func() (gonvml.DeviceAttributes, gonvml.Return) {
		return gonvml.DeviceAttributes{}, gonvml.ERROR_NOT_SUPPORTED
	}
	handles[0] = m
	delete(handles, 3)
	d := sample(t, r.open(t, time.Second)).Devices[0]
	if len(d.Instances) != 1 {
		t.Fatalf("instances = %+v", d.Instances)
	}
	if in := d.Instances[0]; in.Profile != "1c.2g.20gb" || in.Slices != 1 || in.MemorySlices != 2 {
		t.Errorf("instance = %+v, want 1c.2g.20gb with 1 compute slice and 2 memory slices", in)
	}
}

func TestMIGDisabledFreesInstances(t *testing.T) {
	r, _ := migRig(t)
	f := enableGPM(t, r, 10)
	b := r.open(t, time.Second)
	sample(t, b)
	before := f.liveSamples()
	r.devs[0].MigMode = gonvml.DEVICE_MIG_DISABLE
	r.devs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS }
	d := sample(t, b).Devices[0]
	if d.MIGMode || len(d.Instances) != 0 {
		t.Errorf("MIG off: MIGMode=%v with %d instances", d.MIGMode, len(d.Instances))
	}
	// The instances' 2×2 samples go; the whole GPU's pair comes.
	if got, want := f.liveSamples(), before-4+2; got != want {
		t.Errorf("%d live GPM samples, want %d: the two instances' samples must be freed", got, want)
	}
}

// TestMIGComputeSlices reads the GPU's total of compute slices from the
// largest GPU instance profile NVML offers: 7 on an H100, and 4 where the
// largest profile is 4 slices (A30's geometry); unknown (0) when NVML
// offers none.
func TestMIGComputeSlices(t *testing.T) {
	for _, tt := range []struct {
		name     string
		profiles map[int]uint32 // profile ID to slice count; nil keeps the mock's
		want     int
	}{
		{"H100", nil, 7},
		{"A30-like", map[int]uint32{gonvml.GPU_INSTANCE_PROFILE_1_SLICE: 1, gonvml.GPU_INSTANCE_PROFILE_2_SLICE: 2, gonvml.GPU_INSTANCE_PROFILE_4_SLICE: 4}, 4},
		{"none offered", map[int]uint32{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := migRig(t)
			if tt.profiles != nil {
				r.devs[0].GetGpuInstanceProfileInfoFunc = func(p int) (gonvml.GpuInstanceProfileInfo, gonvml.Return) {
					if n, ok := tt.profiles[p]; ok {
						return gonvml.GpuInstanceProfileInfo{Id: uint32(p), SliceCount: n}, gonvml.SUCCESS
					}
					return gonvml.GpuInstanceProfileInfo{}, gonvml.ERROR_NOT_SUPPORTED
				}
			}
			s := sample(t, r.open(t, time.Second))
			if got := s.Devices[0].MIGComputeSlices; got != tt.want {
				t.Errorf("MIGComputeSlices = %d, want %d", got, tt.want)
			}
			if len(s.Errors) != 0 {
				t.Errorf("Errors = %v: profiles a GPU lacks are not errors", s.Errors)
			}
			if other := s.Devices[1]; other.MIGComputeSlices != 0 {
				t.Errorf("GPU not in MIG mode: MIGComputeSlices = %d", other.MIGComputeSlices)
			}
		})
	}
}
