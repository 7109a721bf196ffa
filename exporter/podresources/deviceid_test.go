package podresources

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

const (
	gpuUUID = "GPU-5b4a8d3c-1f2e-4a6b-9c0d-7e8f9a0b1c2d"
	migUUID = "MIG-0c1d2e3f-4a5b-5c6d-8e7f-9a0b1c2d3e4f"
)

// ref builds the expected DeviceRef with every unset number at -1.
func ref(mod func(*DeviceRef)) DeviceRef {
	r := DeviceRef{Index: -1, MIGIndex: -1, GPUInstance: -1, ComputeInstance: -1, Replica: -1}
	mod(&r)
	return r
}

func TestParseDeviceID(t *testing.T) {
	tests := []struct {
		name     string
		resource vocab.Resource
		id       string
		want     DeviceRef
		wantMIG  bool
		wantBase string
	}{
		{
			name: "whole GPU by UUID", resource: vocab.ResourceGPU, id: gpuUUID,
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = gpuUUID }),
			wantBase: gpuUUID,
		},
		{
			name: "upper-case UUID is kept verbatim", resource: vocab.ResourceGPU, id: "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D",
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D" }),
			wantBase: "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D",
		},
		{
			name: "time-sliced replica", resource: vocab.ResourceGPU, id: gpuUUID + "::7",
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = gpuUUID; r.Replica = 7; r.Shared = true }),
			wantBase: gpuUUID,
		},
		// HAMi's device plugin splits each GPU into DeviceSplitCount
		// devices "%v-%v" of its UUID and i from 0
		// (Project-HAMi/HAMi 4707fb02
		// pkg/device-plugin/nvidiadevice/nvinternal/rm/devices.go:209;
		// rm/devices_test.go:60 expects "GPU-uuid-1-0", "GPU-uuid-1-1").
		{
			name: "HAMi split device, the first", resource: vocab.ResourceGPU, id: gpuUUID + "-0",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = gpuUUID
				r.Replica = 0
				r.HAMiSplit = true
				r.Shared = true
			}),
			wantBase: gpuUUID,
		},
		{
			name: "HAMi split device at the default split count", resource: vocab.ResourceGPU, id: gpuUUID + "-9",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = gpuUUID
				r.Replica = 9
				r.HAMiSplit = true
				r.Shared = true
			}),
			wantBase: gpuUUID,
		},
		{
			name: "HAMi split device of an upper-case UUID", resource: vocab.ResourceGPU, id: "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D-12",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D"
				r.Replica = 12
				r.HAMiSplit = true
				r.Shared = true
			}),
			wantBase: "GPU-5B4A8D3C-1F2E-4A6B-9C0D-7E8F9A0B1C2D",
		},
		{
			name: "renamed gpu.shared replica", resource: vocab.ResourceGPUShared, id: gpuUUID + "::0",
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = gpuUUID; r.Replica = 0; r.Shared = true }),
			wantBase: gpuUUID,
		},
		{
			name: "MIG mixed strategy", resource: "nvidia.com/mig-1g.10gb", id: migUUID,
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = migUUID; r.MIGProfile = "1g.10gb" }),
			wantMIG:  true,
			wantBase: migUUID,
		},
		{
			name: "MIG single strategy", resource: vocab.ResourceGPU, id: migUUID,
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = migUUID }),
			wantMIG:  true,
			wantBase: migUUID,
		},
		{
			name: "MIG shared and renamed", resource: "nvidia.com/mig-3g.40gb.shared", id: migUUID + "::2",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = migUUID
				r.MIGProfile = "3g.40gb"
				r.Replica = 2
				r.Shared = true
			}),
			wantMIG:  true,
			wantBase: migUUID,
		},
		{
			name: "MIG profile with media extensions", resource: "nvidia.com/mig-1g.10gb+me", id: migUUID,
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = migUUID; r.MIGProfile = "1g.10gb+me" }),
			wantMIG:  true,
			wantBase: migUUID,
		},
		{
			name: "legacy MIG UUID", resource: "nvidia.com/mig-2g.10gb", id: "MIG-" + gpuUUID + "/3/0",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = "MIG-" + gpuUUID + "/3/0"
				r.ParentUUID = gpuUUID
				r.GPUInstance = 3
				r.ComputeInstance = 0
				r.MIGProfile = "2g.10gb"
			}),
			wantMIG:  true,
			wantBase: "MIG-" + gpuUUID + "/3/0",
		},
		{
			name: "legacy MIG UUID replica (MPS)", resource: vocab.ResourceGPU, id: "MIG-" + gpuUUID + "/13/1::4",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindUUID
				r.UUID = "MIG-" + gpuUUID + "/13/1"
				r.ParentUUID = gpuUUID
				r.GPUInstance = 13
				r.ComputeInstance = 1
				r.Replica = 4
				r.Shared = true
			}),
			wantMIG:  true,
			wantBase: "MIG-" + gpuUUID + "/13/1",
		},
		{
			name: "index strategy", resource: vocab.ResourceGPU, id: "3",
			want:     ref(func(r *DeviceRef) { r.Kind = KindIndex; r.Index = 3 }),
			wantBase: "3",
		},
		{
			name: "index strategy MIG", resource: "nvidia.com/mig-1g.10gb", id: "0:1",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindIndex
				r.Index = 0
				r.MIGIndex = 1
				r.MIGProfile = "1g.10gb"
			}),
			wantMIG:  true,
			wantBase: "0:1",
		},
		{
			name: "index strategy MIG replica", resource: vocab.ResourceGPU, id: "7:6::12",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindIndex
				r.Index = 7
				r.MIGIndex = 6
				r.Replica = 12
				r.Shared = true
			}),
			wantMIG:  true,
			wantBase: "7:6",
		},
		{
			name: "GKE whole GPU", resource: vocab.ResourceGPU, id: "nvidia0",
			want:     ref(func(r *DeviceRef) { r.Kind = KindGKE; r.Index = 0 }),
			wantBase: "nvidia0",
		},
		{
			name: "GKE MIG partition", resource: vocab.ResourceGPU, id: "nvidia1/gi2",
			want:     ref(func(r *DeviceRef) { r.Kind = KindGKE; r.Index = 1; r.GPUInstance = 2 }),
			wantMIG:  true,
			wantBase: "nvidia1/gi2",
		},
		{
			name: "GKE time-sharing", resource: vocab.ResourceGPU, id: "nvidia0/vgpu3",
			want:     ref(func(r *DeviceRef) { r.Kind = KindGKE; r.Index = 0; r.Replica = 3; r.Shared = true }),
			wantBase: "nvidia0",
		},
		{
			name: "GKE time-shared MIG partition", resource: vocab.ResourceGPU, id: "nvidia10/gi0/vgpu1",
			want: ref(func(r *DeviceRef) {
				r.Kind = KindGKE
				r.Index = 10
				r.GPUInstance = 0
				r.Replica = 1
				r.Shared = true
			}),
			wantMIG:  true,
			wantBase: "nvidia10/gi0",
		},
		{
			name: "custom renamed resource", resource: "example.com/gpu-ts", id: gpuUUID + "::3",
			want:     ref(func(r *DeviceRef) { r.Kind = KindUUID; r.UUID = gpuUUID; r.Replica = 3; r.Shared = true }),
			wantBase: gpuUUID,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDeviceID(tt.resource, tt.id)
			if err != nil {
				t.Fatalf("ParseDeviceID(%q, %q): %v", tt.resource, tt.id, err)
			}
			if got != tt.want {
				t.Errorf("ParseDeviceID(%q, %q)\n got  %+v\n want %+v", tt.resource, tt.id, got, tt.want)
			}
			if s := got.String(); s != tt.id {
				t.Errorf("String() = %q, want %q", s, tt.id)
			}
			if b := got.BaseID(); b != tt.wantBase {
				t.Errorf("BaseID() = %q, want %q", b, tt.wantBase)
			}
			if m := got.IsMIG(); m != tt.wantMIG {
				t.Errorf("IsMIG() = %v, want %v", m, tt.wantMIG)
			}
		})
	}
}

func TestParseDeviceIDRejects(t *testing.T) {
	ids := []string{
		"",
		"GPU-",
		"GPU-1234",
		"GPU-5b4a8d3c-1f2e-4a6b-9c0d-7e8f9a0b1c2g", // g is not hex
		"GPU-5b4a8d3c_1f2e_4a6b_9c0d_7e8f9a0b1c2d", // underscores
		gpuUUID + "::",
		gpuUUID + "::-1",
		gpuUUID + "::01",
		gpuUUID + "::1::2",
		gpuUUID + "::1234567890", // too many digits to be a replica
		gpuUUID + "-",            // HAMi's split without its number
		gpuUUID + "-01",
		gpuUUID + "--1",
		gpuUUID + "-x",
		gpuUUID + "-1234567890",
		gpuUUID + "-1::2",       // HAMi's split and NVIDIA's replica at once
		gpuUUID + "::2-1",       // nor the other way round
		migUUID + "-0",          // HAMi advertises MIG devices unsplit
		gpuUUID[:39] + "-0",     // a UUID one digit short
		gpuUUID + "0-0",         // one digit long
		"GPU-" + gpuUUID + "-0", // a doubled prefix
		"MIG-GPU-" + gpuUUID[4:] + "/1",
		"MIG-GPU-" + gpuUUID[4:] + "/1/x",
		"MIG-GPU-" + gpuUUID[4:] + "/1/0/2",
		"MIG-GPU-1234/1/0",
		"01",
		"-1",
		"+1",
		"0:",
		":1",
		"0:1:2",
		"0x1",
		"nvidia",
		"nvidia/gi1",
		"nvidia0/",
		"nvidia0/gi",
		"nvidia0/gi2/",
		"nvidia0/vgpu",
		"nvidia0/vgpu1/gi2",
		"nvidia0/mig1",
		"nvidia0::1",
		"nvidia-0",
		"nvidia00",
		"AMD-GPU-0",
		"gpu0",
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			const resource = "nvidia.com/gpu"
			got, err := ParseDeviceID(resource, id)
			if err == nil {
				t.Fatalf("ParseDeviceID(%q) = %+v, want error", id, got)
			}
			if !errors.Is(err, ErrDeviceID) {
				t.Errorf("error %v does not wrap ErrDeviceID", err)
			}
			for _, name := range []string{strconv.Quote(id), strconv.Quote(resource)} {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name %s", err, name)
				}
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindUUID: "uuid", KindIndex: "index", KindGKE: "gke", 0: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestZeroDeviceRefString(t *testing.T) {
	if s := (DeviceRef{Replica: 2}).String(); s != "" {
		t.Errorf("zero-kind DeviceRef.String() = %q, want empty", s)
	}
}

func FuzzParseDeviceID(f *testing.F) {
	for _, seed := range [][2]string{
		{string(vocab.ResourceGPU), gpuUUID},
		{string(vocab.ResourceGPU), gpuUUID + "::3"},
		{string(vocab.ResourceGPUShared), gpuUUID + "::0"},
		{"nvidia.com/mig-1g.10gb", migUUID},
		{"nvidia.com/mig-1g.10gb.shared", migUUID + "::1"},
		{string(vocab.ResourceGPU), "MIG-" + gpuUUID + "/1/0"},
		{string(vocab.ResourceGPU), "0"},
		{string(vocab.ResourceGPU), "0:1::2"},
		{string(vocab.ResourceGPU), "nvidia0/gi2/vgpu3"},
		{string(vocab.ResourceGPU), "nvidia0/vgpu3"},
		{"example.com/x", "::"},
		// HAMi's split devices (rm/devices.go:209 at Project-HAMi/HAMi
		// 4707fb02), and near misses.
		{string(vocab.ResourceGPU), gpuUUID + "-0"},
		{string(vocab.ResourceGPU), gpuUUID + "-9"},
		{string(vocab.ResourceGPU), gpuUUID + "-10::1"},
		{string(vocab.ResourceGPU), migUUID + "-3"},
		{string(vocab.ResourceGPU), gpuUUID + "-"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, resource, id string) {
		ref, err := ParseDeviceID(vocab.Resource(resource), id)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(id)) {
				t.Fatalf("error %q does not name the id %q", err, id)
			}
			return
		}
		if s := ref.String(); s != id {
			t.Fatalf("ParseDeviceID(%q).String() = %q", id, s)
		}
		again, err := ParseDeviceID(vocab.Resource(resource), ref.String())
		if err != nil || again != ref {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", id, again, err, ref)
		}
		if ref.Replica >= 0 && !ref.Shared {
			t.Fatalf("%q has replica %d but is not shared", id, ref.Replica)
		}
		if ref.Kind == KindUUID && ref.Index != -1 {
			t.Fatalf("%q is a UUID but has index %d", id, ref.Index)
		}
		// A HAMi split device names its physical GPU: the UUID is a whole
		// GPU's, and the ID is it with "-<replica>".
		if ref.HAMiSplit && (ref.Kind != KindUUID || !strings.HasPrefix(ref.UUID, "GPU-") || !isUUID(ref.UUID[4:]) ||
			id != ref.UUID+"-"+strconv.Itoa(ref.Replica)) {
			t.Fatalf("%q: HAMi split device %+v does not name a GPU", id, ref)
		}
	})
}
