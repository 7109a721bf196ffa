package signals_test

import (
	"fmt"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"strings"
	"testing"
)

// draClaims are the claims of the fleet of testdata/*.dra.prom: one claim shared by two
// pods (the Kubernetes documentation's GH200), a MIG device through a
// claim (dcgm-exporter PR #664's A30) and a mixed node whose GPU 0 the
// device plugin gave trainer-0 and GPU 1 a claim gave a Deployment's pod.
var draClaims = []string{
	"node=mixed-1,namespace=ml,pod=infer-7d9f8c6b5-x2k9q,container=server,uuid=GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e71," +
		"claim_namespace=ml,claim=infer-7d9f8c6b5-x2k9q-gpu-m4t7w,driver=gpu.nvidia.com,pool=mixed-1,device=gpu-1",
	"node=nim-operator-72q5r53,namespace=gpu-test4,pod=pod-c98945f5d-dnjs6,container=ctr0,uuid=GPU-e04ce2a0-21a4-b68c-854a-f5c0d26bfc0b,gpu_instance=3," +
		"claim_namespace=gpu-test4,claim=pod-c98945f5d-dnjs6-mig-devices-thfdj,driver=gpu.nvidia.com,pool=nim-operator-72q5r53,device=gpu-1-mig-1g6gb-14-0",
	"node=sc-starwars-xxxx,namespace=gpu-test3,pod=pod1,container=ctr,uuid=GPU-a4f34abc-7715-3560-dcea-7238b9611a45," +
		"claim_namespace=gpu-test3,claim=single-gpu,driver=gpu.nvidia.com,pool=sc-starwars-xxxx,device=gpu-0",
	"node=sc-starwars-xxxx,namespace=gpu-test3,pod=pod2,container=ctr,uuid=GPU-a4f34abc-7715-3560-dcea-7238b9611a45," +
		"claim_namespace=gpu-test3,claim=single-gpu,driver=gpu.nvidia.com,pool=sc-starwars-xxxx,device=gpu-0",
}

// TestClaims reads the claims of each exporter's series, as scraped and
// as a ServiceMonitor stores them: every allocation
// a claim made, value 1, and none for the device plugin's (trainer-0), nor
// on a store without DRA series.
func TestClaims(t *testing.T) {
	for _, tt := range []struct {
		schema signals.Schema
		files  []string
		want   []string
	}{
		{native.Schema{}, []string{"testdata/native.dra.prom"}, draClaims},
		{dcgm.Schema{}, []string{"testdata/dcgm-exporter.dra.prom"}, draClaims},
		// Scraped through a ServiceMonitor with honorLabels: false
		// (relabel.py): the tenant in exported_*, the dra_* labels as
		// they were.
		{native.Schema{}, []string{"testdata/native.dra.servicemonitor.prom"}, draClaims},
		{dcgm.Schema{}, []string{"testdata/dcgm-exporter.dra.servicemonitor.prom"}, draClaims},
		{native.Schema{}, []string{"testdata/native.prom"}, nil},
		{dcgm.Schema{}, []string{"testdata/dcgm-exporter.prom"}, nil},
		{dcgm.Schema{}, []string{"testdata/dcgm-exporter.virtual-gpus-2025.prom"}, nil},
	} {
		t.Run(tt.schema.Name()+" "+strings.Join(tt.files, ","), func(t *testing.T) {
			rows := query(t, loadFixtures(t, tt.files...), tt.schema.Claims(), signals.ClaimLabels)
			var got []string
			for _, r := range rows {
				if r.value != 1 {
					t.Errorf("%s = %v, want 1", r.labels, r.value)
				}
				got = append(got, r.labels)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("claims\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDRASchemasAgree: a claim's GPU is read like any other by both
// schemas: dcgm-exporter's per-pod copies of the shared claim's GH200 as
// two tenants of half a GPU each, the A30's 1g.6gb instance as a quarter
// (4 compute slices), the mixed node's GPUs as whole.
func TestDRASchemasAgree(t *testing.T) {
	nativeSrc := loadFixtures(t, "testdata/native.dra.prom")
	dcgmSrc := loadFixtures(t, "testdata/dcgm-exporter.dra.prom")
	for _, sig := range []struct {
		name string
		expr func(signals.Schema) string
		keep []string
	}{
		{"allocation", signals.Schema.Allocation, signals.AllocationLabels},
		{"utilization", signals.Schema.Utilization, signals.UsageLabels},
		{"memory used", signals.Schema.MemoryUsed, signals.UsageLabels},
	} {
		t.Run(sig.name, func(t *testing.T) {
			n := query(t, nativeSrc, sig.expr(native.Schema{}), sig.keep)
			d := query(t, dcgmSrc, sig.expr(dcgm.Schema{}), sig.keep)
			if len(n) != 5 || fmt.Sprint(n) != fmt.Sprint(d) {
				t.Errorf("native %v\ndcgm   %v", n, d)
			}
		})
	}
	want := map[string]float64{"pod1": 0.5, "pod2": 0.5, "pod-c98945f5d-dnjs6": 0.25, "trainer-0": 1, "infer-7d9f8c6b5-x2k9q": 1}
	for _, r := range query(t, dcgmSrc, dcgm.Schema{}.Allocation(), signals.AllocationLabels) {
		for pod, share := range want {
			if strings.Contains(r.labels, "pod="+pod+",") && r.value != share {
				t.Errorf("%s: share %v, want %v", r.labels, r.value, share)
			}
		}
	}
}
