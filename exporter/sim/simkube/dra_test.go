package simkube

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

const draScenario = `seed: 7
nodes:
  - name: gpu-dra-1
    system: dgxh100
    gpus: 4
    dra: true
    sharing:
      - {gpus: [3], mode: mig, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}
    pods:
      - {namespace: ml, name: train-0, gpu: 0, load: training, memory: 40GiB}
      - {namespace: ml, name: embed-a, gpu: 1, load: inference, memory: 8GiB, claim: shared-gpu}
      - {namespace: ml, name: embed-b, gpu: 1, load: inference, memory: 8GiB, claim: shared-gpu}
      - {namespace: ml, name: nb, gpu: 3, instance: 2, load: notebook, memory: 4GiB}
`

// draNode simulates the scenario's node through the sim backend (the real
// NVML reader over go-nvml mocks), an hour after the pods started.
func draNode(t *testing.T) *sim.Backend {
	t.Helper()
	sc, err := sim.Parse([]byte(draScenario), "dra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.NewBackend(sc, sim.BackendOptions{Start: start, Clock: func() time.Time { return start.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestDRANodeSlice: the API server serves the node's ResourceSlice under
// its field selectors, with a device per GPU and per MIG device, and none
// for a node whose GPUs the device plugin hands out.
func TestDRANodeSlice(t *testing.T) {
	n := draNode(t).Node()
	c, err := NewCluster(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		selector string
		want     int
	}{
		{fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", "gpu-dra-1"), fields.OneTermEqualSelector("spec.driver", sim.DRADriver)).String(), 1},
		{"spec.nodeName=another-node,spec.driver=" + sim.DRADriver, 0},
		{"spec.nodeName=gpu-dra-1,spec.driver=rdma.example.com", 0},
	} {
		obj, err := c.ResourceSlices(sim.DRADriver).List(metav1.ListOptions{FieldSelector: tt.selector})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(obj.(*sliceindex.APIResourceSliceList).Items); got != tt.want {
			t.Errorf("%s: %d slices, want %d", tt.selector, got, tt.want)
		}
	}
	s := ResourceSlice(n)
	// Three whole GPUs and GPU 3's four MIG devices.
	if len(s.Spec.Devices) != 3+4 {
		t.Errorf("%d devices, want 7: %+v", len(s.Spec.Devices), s.Spec.Devices)
	}
	idx := sliceindex.Static(s)
	for _, d := range n.Devices() {
		if d.Index == 3 {
			for _, in := range d.Instances {
				got, ok := idx.Lookup(podresources.DRADevice{Driver: sim.DRADriver, Pool: "gpu-dra-1", Device: in.DRADevice})
				if !ok || got.UUID != in.UUID || got.ParentUUID != d.UUID || got.Profile != in.Profile || got.Type != sliceindex.TypeMIG {
					t.Errorf("MIG %s: %+v, %v", in.DRADevice, got, ok)
				}
			}
			continue
		}
		got, ok := idx.Lookup(podresources.DRADevice{Driver: sim.DRADriver, Pool: "gpu-dra-1", Device: d.DRADevice})
		if !ok || got.UUID != d.UUID || got.Type != sliceindex.TypeGPU || got.ProductName != d.Model {
			t.Errorf("GPU %s: %+v, %v", d.DRADevice, got, ok)
		}
	}
	if s := ResourceSlice(defaultNodes(t)[0]); s != nil {
		t.Errorf("a device-plugin node has a ResourceSlice: %+v", s)
	}
}

// TestDRANodeAttribution runs the simulated node through the real
// pod-resources parsing and attribution: the claimed GPU is whole, the
// claim two pods share is half each, the MIG device is its slices' share.
func TestDRANodeAttribution(t *testing.T) {
	b := draNode(t)
	snap, err := b.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewNode(b.Node(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := k.Allocations()
	if a == nil || a.ClaimDevices != 4 {
		t.Fatalf("allocations %+v, want 4 claim devices", a)
	}
	recs, st := attribution.Attribute(attribution.Input{Snapshot: snap, Allocations: a,
		Pods: k.Pods(), Slices: k.Slices(), SharedMode: k.SharedMode()})
	if st.UnmatchedDevices != 0 {
		t.Errorf("%d unmatched devices", st.UnmatchedDevices)
	}
	type share struct {
		sharing vocab.Sharing
		alloc   float64
		claim   string
	}
	got := map[string]share{}
	for _, r := range recs {
		if len(r.Claims) != 1 {
			t.Fatalf("%s: claims %+v", r.Pod, r.Claims)
		}
		got[r.Pod] = share{r.Sharing, r.Allocation, r.Claims[0].Name}
	}
	want := map[string]share{
		"train-0": {attribution.SharingNone, 1, "train-0-gpu"},
		"embed-a": {attribution.SharingTimeSlicing, 0.5, "shared-gpu"},
		"embed-b": {attribution.SharingTimeSlicing, 0.5, "shared-gpu"},
		"nb":      {attribution.SharingMIG, 1.0 / 7, "nb-gpu"}, // a 1g.10gb of the H100's 7 slices
	}
	for pod, w := range want {
		if got[pod] != w {
			t.Errorf("%s: %+v, want %+v", pod, got[pod], w)
		}
	}
}
