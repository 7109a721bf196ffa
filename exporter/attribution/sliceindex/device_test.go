package sliceindex

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulens/gpulens/exporter/podresources"
)

const (
	driver    = podresources.DefaultDRADriver
	node      = "gpu-node-7"
	gpu0UUID  = "GPU-4d8c1e2a-3b5f-4a6c-8d7e-9f0a1b2c3d4e"
	gpu1UUID  = "GPU-7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	mig1UUID  = "MIG-1f2e3d4c-5b6a-5978-8a9b-0c1d2e3f4a5b"
	h100Model = "NVIDIA H100 80GB HBM3"
)

// loadSlice reads a ResourceSlice as the API server sends it.
func loadSlice(t testing.TB, path string) *APIResourceSlice {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s APIResourceSlice
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return &s
}

func str(s string) APIDeviceAttribute { return APIDeviceAttribute{String: &s} }

func TestFromAPI(t *testing.T) {
	slice := loadSlice(t, "testdata/gpu-node-7.json")
	minor := int64(3)
	tests := []struct {
		name string
		dev  APIDevice
		want Device
	}{
		{
			name: "whole GPU as the NVIDIA driver publishes it",
			dev:  slice.Spec.Devices[0],
			want: Device{DRADevice: podresources.DRADevice{Driver: driver, Pool: node, Device: "gpu-0"},
				Type: TypeGPU, UUID: gpu0UUID, ProductName: h100Model},
		},
		{
			name: "MIG device that exists",
			dev:  slice.Spec.Devices[1],
			want: Device{DRADevice: podresources.DRADevice{Driver: driver, Pool: node, Device: "gpu-1-mig-1g10gb-19-6"},
				Type: TypeMIG, UUID: mig1UUID, ParentUUID: gpu1UUID, Profile: "1g.10gb", ProductName: h100Model},
		},
		{
			name: "dynamic MIG device not created yet: no uuid",
			dev: APIDevice{Name: "gpu-1-mig-3g40gb-9-4", Attributes: map[string]APIDeviceAttribute{
				"type": str("mig"), "parentUUID": str(gpu1UUID), "profile": str("3g.40gb")}},
			want: Device{DRADevice: podresources.DRADevice{Driver: driver, Pool: node, Device: "gpu-1-mig-3g40gb-9-4"},
				Type: TypeMIG, ParentUUID: gpu1UUID, Profile: "3g.40gb"},
		},
		{
			name: "names qualified with the driver's domain; other domains and non-strings ignored",
			dev: APIDevice{Name: "gpu-2", Attributes: map[string]APIDeviceAttribute{
				driver + "/type": str("gpu"), driver + "/uuid": str(gpu0UUID),
				"example.com/uuid": str("GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"),
				"productName":      {Int: &minor}}},
			want: Device{DRADevice: podresources.DRADevice{Driver: driver, Pool: node, Device: "gpu-2"},
				Type: TypeGPU, UUID: gpu0UUID},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fromAPI(driver, node, &tt.dev)); diff != "" {
				t.Errorf("fromAPI (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTableKeepsNewestGeneration(t *testing.T) {
	slice := func(name string, gen int64, devices ...string) *APIResourceSlice {
		s := &APIResourceSlice{Spec: APIResourceSliceSpec{Driver: driver, Pool: APIPool{Name: node, Generation: gen}}}
		s.Name = name
		for _, d := range devices {
			s.Spec.Devices = append(s.Spec.Devices, APIDevice{Name: d})
		}
		return s
	}
	key := func(d string) podresources.DRADevice {
		return podresources.DRADevice{Driver: driver, Pool: node, Device: d}
	}
	tab := newTable()
	tab.put(slice("old", 1, "gpu-0", "gpu-0-mig-1g10gb-19-0"))
	// The driver republishes the pool without the MIG device: until the
	// old slice is deleted, its device must not resolve.
	tab.put(slice("new", 2, "gpu-0"))
	if _, ok := tab.lookup(key("gpu-0-mig-1g10gb-19-0")); ok {
		t.Error("device of an outdated generation resolves")
	}
	if _, ok := tab.lookup(key("gpu-0")); !ok {
		t.Error("device of the newest generation does not resolve")
	}
	tab.remove("new")
	if _, ok := tab.lookup(key("gpu-0-mig-1g10gb-19-0")); !ok {
		t.Error("with the newer slice gone, the remaining slice's devices do not resolve")
	}
	tab.remove("old")
	if n := tab.len(); n != 0 {
		t.Errorf("%d devices left after every slice was removed", n)
	}
}
