package sim

import (
	"strings"
	"testing"
	"time"
)

// draBase is a DRA node with a MIG-partitioned GPU 4 (instance 0 is a
// 3g.40gb) and a pod holding GPU 0 through its own claim.
const draBase = `nodes:
  - name: n1
    system: dgxh100
    dra: true
    sharing:
      - {gpus: [4], mode: mig, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}
    pods:
      - {namespace: ns, name: p0, gpu: 0, load: training, memory: 10GiB}
`

func TestDRAScenarioErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      string
	}{
		{"claim on a device-plugin node", base + "      - {namespace: ns, name: p1, gpu: 1, load: batch, memory: 1GiB, claim: c}\n",
			"nodes[0].pods[1].claim: claims need a DRA node (dra: true)"},
		{"invalid claim name", draBase + "      - {namespace: ns, name: p1, gpu: 1, load: batch, memory: 1GiB, claim: Big_Claim}\n",
			`nodes[0].pods[1].claim: "Big_Claim" is not a valid claim name`},
		{"time-slicing on a DRA node", strings.Replace(draBase, "mode: mig, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]", "mode: time-slicing, replicas: 2", 1),
			"nodes[0].sharing[0].mode: time-slicing is the device plugin's"},
		{"one claim on two GPUs", draBase +
			"      - {namespace: ns, name: p1, gpu: 1, load: batch, memory: 1GiB, claim: shared}\n" +
			"      - {namespace: ns, name: p2, gpu: 2, load: batch, memory: 1GiB, claim: shared}\n",
			"nodes[0].pods[2].claim: claim ns/shared holds GPU 1 (pod p1), not GPU 2"},
		{"two claims on one GPU at once", draBase + "      - {namespace: ns, name: p1, gpu: 0, load: batch, memory: 1GiB}\n",
			"nodes[0].pods[1].gpu: GPU 0 is already held by ns/p0"},
		{"a claim of another namespace is another claim", draBase +
			"      - {namespace: a, name: p1, gpu: 1, load: batch, memory: 1GiB, claim: shared}\n" +
			"      - {namespace: b, name: p2, gpu: 1, load: batch, memory: 1GiB, claim: shared}\n",
			"nodes[0].pods[2].gpu: GPU 1 is already held by a/p1"},
		{"pods sharing a claim still share its memory", draBase +
			"      - {namespace: ns, name: p1, gpu: 1, load: batch, memory: 50GiB, claim: shared}\n" +
			"      - {namespace: ns, name: p2, gpu: 1, load: batch, memory: 50GiB, claim: shared}\n",
			"nodes[0].pods[2].memory: 50GiB with co-tenants' 50GiB does not fit GPU 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestDRAPods: on a DRA node, pods hold their GPU or MIG instance through
// claims, named as NVIDIA's driver names its devices, and pods naming one
// claim run on its GPU together; no device-plugin resource is involved.
func TestDRAPods(t *testing.T) {
	src := draBase +
		"      - {namespace: ns, name: embed-a, gpu: 1, load: inference, memory: 8GiB, claim: shared-gpu}\n" +
		"      - {namespace: ns, name: embed-b, gpu: 1, load: inference, memory: 8GiB, claim: shared-gpu}\n" +
		"      - {namespace: ns, name: nb, gpu: 4, instance: 0, load: notebook, memory: 4GiB}\n"
	sc, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNode(sc, "n1", time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	type hold struct{ claim, device, resource, id string }
	got := map[string]hold{}
	for _, p := range n.Pods() {
		got[p.Name] = hold{p.Claim, p.DRADevice, string(p.ResourceName), p.DeviceID}
	}
	// 3g.40gb: GPU instance profile 2 in go-nvml's mock tables, placed at
	// memory slice 4 (the simulator places the largest first, from the top).
	want := map[string]hold{
		"p0":      {"p0-gpu", "gpu-0", "", ""},
		"embed-a": {"shared-gpu", "gpu-1", "", ""},
		"embed-b": {"shared-gpu", "gpu-1", "", ""},
		"nb":      {"nb-gpu", "gpu-4-mig-3g40gb-2-4", "", ""},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
	for _, d := range n.Devices() {
		if d.ResourceName != "" || len(d.DeviceIDs) != 0 {
			t.Errorf("GPU %d advertised as a device-plugin resource %s %v on a DRA node", d.Index, d.ResourceName, d.DeviceIDs)
		}
		if d.Index == 4 {
			if len(d.Instances) != 4 || d.Instances[0].DRADevice != "gpu-4-mig-3g40gb-2-4" || d.Instances[0].ResourceName != "" {
				t.Errorf("MIG GPU 4: %+v", d.Instances)
			}
		} else if d.DRADevice != draGPUName(d.Index) {
			t.Errorf("GPU %d: DRA device %q", d.Index, d.DRADevice)
		}
	}
}
