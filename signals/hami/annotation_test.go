package hami

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseDevicesAllocated: the format from HAMi's encoder and tests
// (pkg/device/devices.go:451-484, devices_test.go:258,1060-1070,1763-1764
// at 4707fb02) and values users pasted in HAMi's issues.
func TestParseDevicesAllocated(t *testing.T) {
	a := func(uuid string, mem, cores int64) Device {
		return Device{UUID: uuid, Type: "NVIDIA", MemoryMiB: mem, Cores: cores}
	}
	tests := []struct {
		name, in string
		want     [][]Device
		err      string // a substring naming the field
	}{
		{"HAMi docs/develop/protocol.md:69", "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,3000,0:;GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,5000,0:;",
			[][]Device{{a("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 3000, 0)}, {a("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 5000, 0)}}, ""},
		{"two devices in one container (devices_test.go:1070)", "GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313,NVIDIA,1000,10:GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,NVIDIA,3000,30:;",
			[][]Device{{a("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313", 1000, 10), a("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", 3000, 30)}}, ""},
		{"HAMi#1932, a whole GPU", "GPU-24aa6632-8f88-43ac-d286-0b7a65e1cee1,NVIDIA,24576,100:;",
			[][]Device{{a("GPU-24aa6632-8f88-43ac-d286-0b7a65e1cee1", 24576, 100)}}, ""},
		{"HAMi#1932, the GPU in the second container", ";GPU-9b9030a3-d81f-7d9f-5d2b-fd98cdc57b2d,NVIDIA,6144,30:;",
			[][]Device{{}, {a("GPU-9b9030a3-d81f-7d9f-5d2b-fd98cdc57b2d", 6144, 30)}}, ""},
		{"HAMi#991, CPU containers both ways", "GPU-0aa6b97c-d386-26ba-a94a-b9d27c2e3a71,NVIDIA,1000,0:;;,,0,0:;,,0,0:;,,0,0:;",
			[][]Device{{a("GPU-0aa6b97c-d386-26ba-a94a-b9d27c2e3a71", 1000, 0)}, {}, {}, {}, {}}, ""},
		{"empty", "", nil, ""},
		{"bad cores", "GPU-aaa,NVIDIA,3000,x:;", nil, "cores field"},
		{"bad memory", ";GPU-aaa,NVIDIA,3GiB,30:;", nil, "container 1, device 0: memory field"},
		{"negative memory", "GPU-aaa,NVIDIA,-1,30:;", nil, "memory field"},
		{"three fields", "GPU-aaa,NVIDIA,3000:;", nil, "3 fields"},
		{"no commas", "GPU-aaa:;", nil, "is not UUID,Type,MemoryMiB,Cores"},
		{"a device without UUID holding memory", ",,100,0:;", nil, "UUID field is empty"},
	}
	for _, tt := range tests {
		got, err := ParseDevicesAllocated(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), AnnotationDevicesAllocated) {
				t.Errorf("%s: error %v, want one naming %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

// FuzzParseDevicesAllocated: whatever the annotation holds, the parser
// returns an error or an allocation that HAMi's encoding writes back and
// reads again as the same.
func FuzzParseDevicesAllocated(f *testing.F) {
	// Seeds from HAMi's code and issues are in testdata/fuzz.
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDevicesAllocated(s)
		if err != nil {
			if !strings.Contains(err.Error(), AnnotationDevicesAllocated) {
				t.Fatalf("error %v does not name the annotation", err)
			}
			return
		}
		for _, c := range got {
			for _, d := range c {
				if d.UUID == "" || d.MemoryMiB < 0 || d.Cores < 0 {
					t.Fatalf("%q: bad device %+v", s, d)
				}
			}
		}
		{
			again, err := ParseDevicesAllocated(FormatDevicesAllocated(got))
			if err != nil {
				t.Fatalf("%q: its own encoding %q does not parse: %v", s, FormatDevicesAllocated(got), err)
			}
			// Values, not only lengths: a round trip that kept the
			// containers but lost a device's memory or cores (issue 53's
			// mutation audit) must fail. An empty container reads back
			// as empty however it was held.
			if len(again) != len(got) {
				t.Fatalf("%q: %d containers, %d after a round trip", s, len(got), len(again))
			}
			for i := range got {
				if len(got[i]) != len(again[i]) || (len(got[i]) > 0 && !reflect.DeepEqual(got[i], again[i])) {
					t.Fatalf("%q: container %d is %+v, %+v after a round trip", s, i, got[i], again[i])
				}
			}
		}
	})
}
