package fleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/sim"
	dcgmfields "github.com/gpulens/gpulens/signals/dcgm"
)

// draScenario is a DRA node: a GPU through its pod's own claim, one claim
// two pods share, and a MIG device through a claim.
const draScenario = `
seed: 7
nodes:
  - name: n1
    system: dgxh100
    gpus: 3
    dra: true
    sharing:
      - {gpus: [2], mode: mig, mig: [3g.40gb, 1g.10gb]}
    pods:
      - {namespace: a, name: whole, gpu: 0, load: training, memory: 20GiB}
      - {namespace: b, name: embed-a, gpu: 1, load: inference, memory: 8GiB, claim: shared}
      - {namespace: b, name: embed-b, gpu: 1, load: inference, memory: 8GiB, claim: shared}
      - {namespace: c, name: nb, gpu: 2, instance: 1, load: notebook, memory: 4GiB}
`

func runDRA(t *testing.T, install DCGMInstall) (native, dcgm []sample) {
	t.Helper()
	sc, err := sim.Parse([]byte(draScenario), "dra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	err = Run(context.Background(), Options{Scenario: sc, Start: dcgmStart, End: dcgmStart.Add(2 * time.Minute), Step: time.Minute},
		func(string) Sink {
			d := NewDCGMSink(capture{&mu, &dcgm, dcgmStart, time.Minute})
			d.Install = install
			return tee{capture{&mu, &native, dcgmStart, time.Minute}, d}
		})
	if err != nil {
		t.Fatal(err)
	}
	return native, dcgm
}

// TestDCGMSinkDRA: with its DRA mapping on, dcgm-exporter writes a copy of
// a claimed device's series per container, labelled with the claim and
// device (a MIG device's on its GPU instance, with profile and MIG UUID),
// and no row of the device alone; with it off, claimed GPUs have no pod.
func TestDCGMSinkDRA(t *testing.T) {
	native, on := runDRA(t, StockInstall())
	uuid := func(gpu string) string {
		return one(t, native, "gpulens_gpu_info", 0, map[string]string{"gpu": gpu}).labels["uuid"]
	}
	migUUID := one(t, native, "gpulens_mig_info", 0, map[string]string{"gpu": "2", "mig_profile": "1g.10gb"}).labels["mig_uuid"]

	rows := pick(on, dcgmfields.FBUsed, 1, map[string]string{dcgmfields.LabelUUID: uuid("1")})
	if len(rows) != 2 {
		t.Fatalf("shared claim: FB_USED rows %v, want a copy per pod", rows)
	}
	for i, pod := range []string{"embed-a", "embed-b"} {
		l := rows[i].labels
		if l["pod"] != pod || l["namespace"] != "b" || l[dcgmfields.LabelDRAClaimName] != "shared" ||
			l[dcgmfields.LabelDRAClaimNamespace] != "b" || l[dcgmfields.LabelDRADriverName] != sim.DRADriver ||
			l[dcgmfields.LabelDRAPoolName] != "n1" || l[dcgmfields.LabelDRADeviceName] != "gpu-1" {
			t.Errorf("copy %d: %v, want pod %s of claim b/shared on n1/gpu-1", i, l, pod)
		}
		if rows[i].value != rows[0].value {
			t.Errorf("copies differ: %v", rows)
		}
	}
	whole := one(t, on, dcgmfields.FBUsed, 1, map[string]string{dcgmfields.LabelUUID: uuid("0")})
	if whole.labels["pod"] != "whole" || whole.labels[dcgmfields.LabelDRAClaimName] != "whole-gpu" || whole.labels[dcgmfields.LabelDRAMIGProfile] != "" {
		t.Errorf("whole GPU: %v, want pod whole of claim whole-gpu", whole.labels)
	}
	mig := one(t, on, dcgmfields.FBUsed, 1, map[string]string{dcgmfields.LabelUUID: uuid("2"), "pod": "nb"})
	if mig.labels[dcgmfields.LabelDRAMIGProfile] != "1g.10gb" || mig.labels[dcgmfields.LabelDRAMIGDeviceUUID] != migUUID ||
		mig.labels[dcgmfields.LabelDRAClaimName] != "nb-gpu" || mig.labels[dcgmfields.LabelMIGProfile] != "1g.10gb" {
		t.Errorf("MIG claim: %v, want the 1g.10gb instance %s of claim nb-gpu", mig.labels, migUUID)
	}

	_, off := runDRA(t, LegacyInstall())
	for _, s := range pick(off, dcgmfields.FBUsed, 1, nil) {
		if s.labels["pod"] != "" || s.labels[dcgmfields.LabelDRAClaimName] != "" {
			t.Errorf("without the DRA mapping: %v has a pod or claim", s.labels)
		}
	}
	if n := len(pick(off, dcgmfields.FBUsed, 1, map[string]string{dcgmfields.LabelUUID: uuid("1")})); n != 1 {
		t.Errorf("without the DRA mapping the shared GPU has %d FB_USED rows, want its own one", n)
	}
}
