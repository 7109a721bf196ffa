package signals_test

import (
	"fmt"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"
	"os"
	"path/filepath"
	"testing"
)

// TestNativeSliceUtilizationFromDCGM: an A100 has no GPM, so gpulens
// cannot measure its MIG slices; where dcgm-exporter is scraped into the
// same store, its DCGM_FI_PROF_GR_ENGINE_ACTIVE per GPU instance is each
// slice's utilization, and the GPU's is the slices' weighted by their
// compute slices. Where gpulens measures a slice (Hopper's GPM), its own
// figure wins.
func TestNativeSliceUtilizationFromDCGM(t *testing.T) {
	const (
		a100 = `node="n",gpu="0",uuid="GPU-a",model="NVIDIA A100-SXM4-80GB"`
		h100 = `node="n",gpu="1",uuid="GPU-h",model="NVIDIA H100 80GB HBM3"`
	)
	nativeSrc := "gpulens_gpu_info{" + a100 + `,mig_mode="true"} 1
gpulens_gpu_info{` + h100 + `,mig_mode="true"} 1
gpulens_mig_compute_slices{` + a100 + `,gpu_instance="1",mig_profile="3g.40gb"} 3
gpulens_mig_compute_slices{` + a100 + `,gpu_instance="2",mig_profile="1g.10gb"} 1
gpulens_mig_compute_slices{` + h100 + `,gpu_instance="1",mig_profile="3g.40gb"} 3
gpulens_mig_sm_active_ratio{` + h100 + `,gpu_instance="1",mig_profile="3g.40gb"} 0.6
gpulens_container_gpu_allocation_ratio{` + a100 + `,namespace="team-a",pod="ocr-0",container="main",sharing="mig",gpu_instance="1",mig_profile="3g.40gb"} 0.42857142857142855
gpulens_container_gpu_allocation_ratio{` + a100 + `,namespace="team-b",pod="asr-0",container="main",sharing="mig",gpu_instance="2",mig_profile="1g.10gb"} 0.14285714285714285
gpulens_container_gpu_allocation_ratio{` + h100 + `,namespace="team-c",pod="llm-0",container="main",sharing="mig",gpu_instance="1",mig_profile="3g.40gb"} 0.42857142857142855
gpulens_container_gpu_utilization_ratio{` + h100 + `,namespace="team-c",pod="llm-0",container="main",gpu_instance="1",mig_profile="3g.40gb",method="mig-gpm"} 0.6
`
	// dcgm-exporter's labels for the same instances (its pod mapping
	// names the same tenants; the join never reads them).
	dcgmSrc := func(gpu, uuid, model, gi, profile, pod string, v float64) string {
		return fmt.Sprintf(`DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=%q,UUID=%q,pci_bus_id="00000000:07:00.0",device="nvidia%s",modelName=%q,Hostname="n",GPU_I_PROFILE=%q,GPU_I_ID=%q,DCGM_FI_DRIVER_VERSION="535.104.12",container="main",namespace="x",pod=%q} %g`+"\n",
			gpu, uuid, gpu, model, profile, gi, pod, v)
	}
	both := nativeSrc + dcgmSrc("0", "GPU-a", "NVIDIA A100-SXM4-80GB", "1", "3g.40gb", "ocr-0", 0.5) +
		dcgmSrc("0", "GPU-a", "NVIDIA A100-SXM4-80GB", "2", "1g.10gb", "asr-0", 0.9) +
		dcgmSrc("1", "GPU-h", "NVIDIA H100 80GB HBM3", "1", "3g.40gb", "llm-0", 0.2)

	slice := func(ns, pod, uuid, model, gi, profile string) string {
		return fmt.Sprintf("node=n,namespace=%s,pod=%s,container=main,uuid=%s,gpu_instance=%s,model=%s,mig_profile=%s", ns, pod, uuid, gi, model, profile)
	}
	for _, tt := range []struct {
		name      string
		prom      string
		wantSlice []row
		wantGPU   []row
	}{
		{"gpulens alone", nativeSrc,
			[]row{{slice("team-c", "llm-0", "GPU-h", "NVIDIA H100 80GB HBM3", "1", "3g.40gb"), 0.6}},
			[]row{{"node=n,uuid=GPU-h,model=NVIDIA H100 80GB HBM3", 0.6 * 3 / 7}}},
		{"with dcgm-exporter", both,
			[]row{
				{slice("team-a", "ocr-0", "GPU-a", "NVIDIA A100-SXM4-80GB", "1", "3g.40gb"), 0.5},
				{slice("team-b", "asr-0", "GPU-a", "NVIDIA A100-SXM4-80GB", "2", "1g.10gb"), 0.9},
				{slice("team-c", "llm-0", "GPU-h", "NVIDIA H100 80GB HBM3", "1", "3g.40gb"), 0.6},
			},
			[]row{
				{"node=n,uuid=GPU-a,model=NVIDIA A100-SXM4-80GB", (0.5*3 + 0.9*1) / 7},
				{"node=n,uuid=GPU-h,model=NVIDIA H100 80GB HBM3", 0.6 * 3 / 7},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "m.prom")
			if err := os.WriteFile(f, []byte(tt.prom), 0o644); err != nil {
				t.Fatal(err)
			}
			src := loadFixtures(t, f)
			if got := query(t, src, native.Schema{}.Utilization(), signals.UsageLabels); !rowsNear(got, tt.wantSlice) {
				t.Errorf("slice utilization %v, want %v", got, tt.wantSlice)
			}
			if got := query(t, src, native.Schema{}.GPUUtilization(), signals.GPULabels); !rowsNear(got, tt.wantGPU) {
				t.Errorf("GPU utilization %v, want %v", got, tt.wantGPU)
			}
		})
	}
}

func rowsNear(got, want []row) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].labels != want[i].labels || got[i].value-want[i].value > 1e-9 || want[i].value-got[i].value > 1e-9 {
			return false
		}
	}
	return true
}
