package podresources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

func TestGPUClaims(t *testing.T) {
	share := "4f1c"
	gpuClaim := &v1.DynamicResource{ClaimNamespace: "ns", ClaimName: "gpu", ClaimResources: []*v1.ClaimResource{
		{DriverName: DefaultDRADriver, PoolName: "node-a", DeviceName: "gpu-1"},
		{DriverName: DefaultDRADriver, PoolName: "node-a", DeviceName: "gpu-0", ShareId: &share},
		{DriverName: "rdma.example.com", PoolName: "node-a", DeviceName: "mlx5-0"},
	}}
	otherClaim := &v1.DynamicResource{ClaimNamespace: "ns", ClaimName: "another", ClaimResources: []*v1.ClaimResource{
		{DriverName: "dra.example.com", PoolName: "p", DeviceName: "accel-0"},
	}}
	tests := []struct {
		name    string
		in      []*v1.DynamicResource
		drivers []string
		want    []ClaimDevice
	}{
		{name: "no DRA drivers configured", in: []*v1.DynamicResource{gpuClaim}},
		{name: "no dynamic resources", drivers: []string{DefaultDRADriver}},
		{
			name: "GPU driver only, sorted by device", in: []*v1.DynamicResource{gpuClaim}, drivers: []string{DefaultDRADriver},
			want: []ClaimDevice{
				{ClaimNamespace: "ns", ClaimName: "gpu", Driver: DefaultDRADriver, Pool: "node-a", Device: "gpu-0", ShareID: share},
				{ClaimNamespace: "ns", ClaimName: "gpu", Driver: DefaultDRADriver, Pool: "node-a", Device: "gpu-1"},
			},
		},
		{
			name: "two drivers, sorted by claim", in: []*v1.DynamicResource{gpuClaim, otherClaim}, drivers: []string{"dra.example.com", DefaultDRADriver},
			want: []ClaimDevice{
				{ClaimNamespace: "ns", ClaimName: "another", Driver: "dra.example.com", Pool: "p", Device: "accel-0"},
				{ClaimNamespace: "ns", ClaimName: "gpu", Driver: DefaultDRADriver, Pool: "node-a", Device: "gpu-0", ShareID: share},
				{ClaimNamespace: "ns", ClaimName: "gpu", Driver: DefaultDRADriver, Pool: "node-a", Device: "gpu-1"},
			},
		},
		{
			// A kubelet that reports a claim twice for one container (it
			// lists each claim a container references) counts its device once.
			name: "repeated claim", in: []*v1.DynamicResource{otherClaim, otherClaim}, drivers: []string{"dra.example.com"},
			want: []ClaimDevice{{ClaimNamespace: "ns", ClaimName: "another", Driver: "dra.example.com", Pool: "p", Device: "accel-0"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gpuClaims(tt.in, tt.drivers)); diff != "" {
				t.Errorf("gpuClaims (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimDeviceKey(t *testing.T) {
	a := ClaimDevice{ClaimNamespace: "x", ClaimName: "a", Driver: DefaultDRADriver, Pool: "p", Device: "gpu-0"}
	b := ClaimDevice{ClaimNamespace: "y", ClaimName: "b", Driver: DefaultDRADriver, Pool: "p", Device: "gpu-0", ShareID: "s"}
	if a.Key() != b.Key() {
		t.Errorf("two claims on one device have different keys: %v, %v", a.Key(), b.Key())
	}
	if want := (DRADevice{DefaultDRADriver, "p", "gpu-0"}); a.Key() != want {
		t.Errorf("Key() = %v, want %v", a.Key(), want)
	}
}
