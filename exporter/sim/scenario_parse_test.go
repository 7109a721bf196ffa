package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in      string
		want    ByteSize
		wantErr bool
	}{
		{in: "512MiB", want: 512 << 20},
		{in: "20GiB", want: 20 << 30},
		{in: "1.5GiB", want: 3 << 29},
		{in: "20GB", want: 20e9},
		{in: "20Gi", want: 20 << 30},
		{in: "20 GiB", want: 20 << 30},
		{in: "1000000", want: 1000000},
		{in: "18446744073709551615", want: 18446744073709551615},
		{in: "0", want: 0},
		{in: "1KiB", want: 1024},
		{in: "2TB", want: 2e12},
		{in: "20XB", wantErr: true},
		{in: "GiB", wantErr: true},
		{in: "", wantErr: true},
		{in: "-1GiB", wantErr: true},
		{in: "1.2.3GiB", wantErr: true},
		{in: "99999999999TiB", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseByteSize(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "90s", want: 90 * time.Second},
		{in: "30m", want: 30 * time.Minute},
		{in: "6h", want: 6 * time.Hour},
		{in: "2d", want: 48 * time.Hour},
		{in: "1.5d", want: 36 * time.Hour},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "0", want: 0},
		{in: "90", wantErr: true},
		{in: "-1h", wantErr: true},
		{in: "-2d", wantErr: true},
		{in: "xd", wantErr: true},
		{in: "1d-1h", wantErr: true},
		{in: "100000d", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDuration(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && time.Duration(got) != tt.want {
			t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, time.Duration(got), tt.want)
		}
	}
}

func TestByteSizeAndDurationString(t *testing.T) {
	if got := ByteSize(20 << 30).String(); got != "20GiB" {
		t.Errorf("ByteSize.String = %q, want 20GiB", got)
	}
	if got := ByteSize(100).String(); got != "100B" {
		t.Errorf("ByteSize.String = %q, want 100B", got)
	}
	if got := Duration(36 * time.Hour).String(); got != "1d12h0m0s" {
		t.Errorf("Duration.String = %q, want 1d12h0m0s", got)
	}
	if got := Duration(48 * time.Hour).String(); got != "2d" {
		t.Errorf("Duration.String = %q, want 2d", got)
	}
}

func TestParseDefaultsAndFields(t *testing.T) {
	src := `seed: 7
nodes:
  - name: n1
    system: dgxh100
    gpus: 2
    sharing:
      - {gpus: [1], mode: time-slicing, replicas: 4, rename: true}
    pods:
      - {namespace: a, name: p, gpu: 0, load: leak, utilization: 0.5, memory: 1.5GiB, growth: 512MiB, start: 1d, end: 2d12h}
      - {namespace: a, name: q, gpu: 1, load: inference, memory: 1GiB, processes: 3, container: server}
    faults:
      - {gpu: 1, kind: xid, xid: 79, at: 3h}
`
	sc, err := Parse([]byte(src), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := sc.Nodes[0]
	if sc.Seed != 7 || n.GPUs != 2 || n.System != "dgxh100" {
		t.Errorf("scenario header = seed %d gpus %d system %q", sc.Seed, n.GPUs, n.System)
	}
	if sh := n.Sharing[0]; sh.Mode != ModeTimeSlicing || sh.Replicas != 4 || !sh.Rename || len(sh.GPUs) != 1 || sh.GPUs[0] != 1 {
		t.Errorf("sharing = %+v", sh)
	}
	p := n.Pods[0]
	if p.Container != "main" || p.Processes != 1 {
		t.Errorf("defaults: container %q processes %d, want main 1", p.Container, p.Processes)
	}
	if p.Memory != 3<<29 || p.Growth != 512<<20 || time.Duration(p.Start) != 24*time.Hour || time.Duration(p.End) != 60*time.Hour {
		t.Errorf("pod = %+v", p)
	}
	if q := n.Pods[1]; q.Container != "server" || q.Processes != 3 {
		t.Errorf("pod q = %+v", q)
	}
	if f := n.Faults[0]; f.Kind != FaultXID || f.XID != 79 || time.Duration(f.At) != 3*time.Hour {
		t.Errorf("fault = %+v", f)
	}
	defaultGPUs, err := Parse([]byte("nodes: [{name: a, system: l4}]"), "y.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if defaultGPUs.Nodes[0].GPUs != 8 {
		t.Errorf("default GPU count = %d, want 8", defaultGPUs.Nodes[0].GPUs)
	}
}

// base is a valid node the error cases below extend; its lines are:
//
//	1 nodes:
//	2   - name: n1
//	3     system: dgxh100
//	4     sharing:
//	5       - {gpus: [4, 5], mode: mig, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}
//	6       - {gpus: [6], mode: time-slicing, replicas: 2}
//	7     pods:
//	8       - {namespace: ns, name: p0, gpu: 0, load: training, memory: 10GiB}
//	9       <case lines from here>
const base = `nodes:
  - name: n1
    system: dgxh100
    sharing:
      - {gpus: [4, 5], mode: mig, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}
      - {gpus: [6], mode: time-slicing, replicas: 2}
    pods:
      - {namespace: ns, name: p0, gpu: 0, load: training, memory: 10GiB}
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// want are substrings that must all appear in the error.
		want []string
	}{
		{"syntax", "nodes: [", []string{"s.yaml: yaml: line"}},
		{"empty", "", []string{"s.yaml: empty scenario"}},
		{"no nodes", "seed: 1\n", []string{"s.yaml:1: nodes: no nodes"}},
		{"unknown top key", "sed: 1\nnodes: []\n", []string{"s.yaml:1: sed: unknown field (want one of seed, nodes, hami)"}},
		{"unknown pod key", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, lod: x}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].lod: unknown field"}},
		{"duplicate key", "seed: 1\nseed: 2\nnodes: []\n", []string{"s.yaml:2: seed: duplicate field"}},
		{"bad seed", "seed: -1\nnodes: []\n", []string{"s.yaml:1: seed: want a non-negative integer, got \"-1\""}},
		{"nodes not list", "nodes: {a: 1}\n", []string{"s.yaml:1: nodes: want a list, got a mapping"}},
		{"node not mapping", "nodes: [3]\n", []string{"s.yaml:1: nodes[0]: want a mapping"}},
		{"bad int", base + "      - {namespace: ns, name: p1, gpu: one, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].gpu: want an integer, got \"one\""}},
		{"bad float", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, utilization: high}\n",
			[]string{"nodes[0].pods[1].utilization: want a number"}},
		{"bad bool", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [0], mode: time-slicing, replicas: 2, rename: yes}]}\n",
			[]string{"s.yaml:2: nodes[0].sharing[0].rename: want true or false, got \"yes\""}},
		{"string is list", "nodes:\n  - {name: [a], system: l4}\n", []string{"nodes[0].name: want a string, got a list"}},
		{"bad byte size", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 20XB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].memory: invalid byte size \"20XB\""}},
		{"bad duration", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, start: soon}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].start: invalid duration \"soon\""}},
		{"unknown load", base + "      - {namespace: ns, name: p1, gpu: 1, load: trainig, memory: 1GiB}\n",
			[]string{`s.yaml:9: nodes[0].pods[1].load: unknown load "trainig" (want training, inference, notebook, batch, leak)`}},
		{"node name required", "nodes:\n  - {system: l4}\n", []string{"s.yaml:2: nodes[0].name: required"}},
		{"node name invalid", "nodes:\n  - {name: Node_1, system: l4}\n", []string{"nodes[0].name: \"Node_1\" is not a valid node name"}},
		{"duplicate node", "nodes:\n  - {name: a, system: l4}\n  - {name: a, system: l4}\n",
			[]string{"s.yaml:3: nodes[1].name: duplicate node name \"a\" (also nodes[0])"}},
		{"unknown system", "nodes:\n  - {name: a, system: dgx-1}\n",
			[]string{`s.yaml:2: nodes[0].system: unknown system "dgx-1" (want dgxa100, dgxa100-80gb, dgxb200, dgxh100, dgxh200, l4)`}},
		{"gpus out of range", "nodes:\n  - {name: a, system: l4, gpus: 17}\n", []string{"nodes[0].gpus: 17 GPUs out of range"}},
		{"sharing gpu out of range", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [8], mode: time-slicing, replicas: 2}]}\n",
			[]string{"nodes[0].sharing[0].gpus[0]: GPU index 8 out of range (node has 8 GPUs: 0..7)"}},
		{"unknown mode", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [0], mode: vgpu}]}\n",
			[]string{`nodes[0].sharing[0].mode: unknown sharing mode "vgpu" (want none, time-slicing, mps, mig, hami)`}},
		{"replicas too low", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [0], mode: time-slicing, replicas: 1}]}\n",
			[]string{"nodes[0].sharing[0].replicas: replicas 1 out of range (want 2..48 for time-slicing)"}},
		{"replicas too high", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [0], mode: mps, replicas: 49}]}\n",
			[]string{"nodes[0].sharing[0].replicas: replicas 49 out of range (want 2..48 for mps)"}},
		{"replicas on mig", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, replicas: 2, mig: [7g.80gb]}]}\n",
			[]string{"nodes[0].sharing[0].replicas: replicas only apply to time-slicing and mps"}},
		{"mig on l4", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [0], mode: mig, mig: [1g.5gb]}]}\n",
			[]string{"nodes[0].sharing[0].mode: l4 GPUs (NVIDIA L4) do not support MIG"}},
		{"mig without geometry", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig}]}\n",
			[]string{"nodes[0].sharing[0].mig: mode mig needs a geometry"}},
		{"mig profile of other model", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, mig: [1g.5gb]}]}\n",
			[]string{`nodes[0].sharing[0].mig[0]: unknown MIG profile "1g.5gb" (want one of 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb on NVIDIA H100 80GB HBM3)`}},
		{"mig too many of a profile", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, mig: [3g.40gb, 3g.40gb, 3g.40gb]}]}\n",
			[]string{"nodes[0].sharing[0].mig[2]: at most 2 × 3g.40gb fit on a GPU"}},
		{"mig compute slices", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, mig: [4g.40gb, 2g.20gb, 2g.20gb]}]}\n",
			[]string{"nodes[0].sharing[0].mig: geometry uses 8 compute slices (at most 7)"}},
		{"mig memory slices", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, mig: [3g.40gb, 3g.40gb, 1g.10gb]}]}\n",
			[]string{"nodes[0].sharing[0].mig: geometry uses 9 memory slices (at most 8)"}},
		{"mig list without mode mig", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: time-slicing, replicas: 2, mig: [7g.80gb]}]}\n",
			[]string{"nodes[0].sharing[0].mig: a MIG geometry needs mode mig"}},
		{"rename on mig", "nodes:\n  - {name: a, system: dgxh100, sharing: [{gpus: [0], mode: mig, rename: true, mig: [7g.80gb]}]}\n",
			[]string{"nodes[0].sharing[0].rename: rename only applies to time-slicing and mps"}},
		{"gpu in two sharing entries", base[:len(base)-len("    pods:\n      - {namespace: ns, name: p0, gpu: 0, load: training, memory: 10GiB}\n")] +
			"      - {gpus: [5], mode: mps, replicas: 2}\n",
			[]string{"s.yaml:7: nodes[0].sharing[2].gpus[0]: GPU 5 is already shared by nodes[0].sharing[0]"}},
		{"empty sharing gpus", "nodes:\n  - {name: a, system: l4, sharing: [{gpus: [], mode: mps, replicas: 2}]}\n",
			[]string{"nodes[0].sharing[0].gpus: no GPUs listed"}},
		{"namespace required", base + "      - {name: p1, gpu: 1, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].namespace: required"}},
		{"pod name invalid", base + "      - {namespace: ns, name: P_1, gpu: 1, load: training, memory: 1GiB}\n",
			[]string{"nodes[0].pods[1].name: \"P_1\" is not a valid pod name"}},
		{"container invalid", base + "      - {namespace: ns, name: p1, container: a.b, gpu: 1, load: training, memory: 1GiB}\n",
			[]string{"nodes[0].pods[1].container: \"a.b\" is not a valid container name"}},
		{"duplicate pod", base + "      - {namespace: ns, name: p0, gpu: 1, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].name: duplicate pod ns/p0 (also nodes[0].pods[0])"}},
		{"duplicate pod across nodes", base + "  - name: n2\n    system: l4\n    pods:\n      - {namespace: ns, name: p0, gpu: 1, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:12: nodes[1].pods[0].name: duplicate pod ns/p0 (also nodes[0].pods[0])"}},
		{"pod gpu out of range", base + "      - {namespace: ns, name: p1, gpu: 8, load: training, memory: 1GiB}\n",
			[]string{"nodes[0].pods[1].gpu: GPU index 8 out of range (node has 8 GPUs: 0..7)"}},
		{"mig instance out of range", base + "      - {namespace: ns, name: p1, gpu: 4, instance: 4, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].instance: MIG instance 4 out of range (GPU 4 has 4: 0..3)"}},
		{"instance on whole gpu", base + "      - {namespace: ns, name: p1, gpu: 1, instance: 2, load: training, memory: 1GiB}\n",
			[]string{"nodes[0].pods[1].instance: GPU 1 is not MIG-partitioned (sharing none)"}},
		{"utilization above 1", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, utilization: 1.5}\n",
			[]string{"nodes[0].pods[1].utilization: 1.5 out of range (want 0..1)"}},
		{"utilization negative", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, utilization: -0.1}\n",
			[]string{"nodes[0].pods[1].utilization: -0.1 out of range"}},
		{"utilization nan", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, utilization: .nan}\n",
			[]string{"nodes[0].pods[1].utilization: want a number"}},
		{"memory required", base + "      - {namespace: ns, name: p1, gpu: 1, load: training}\n",
			[]string{"nodes[0].pods[1].memory: required"}},
		{"growth required for leak", base + "      - {namespace: ns, name: p1, gpu: 1, load: leak, memory: 1GiB}\n",
			[]string{"nodes[0].pods[1].growth: required for load leak"}},
		{"growth without leak", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, growth: 1GiB}\n",
			[]string{"nodes[0].pods[1].growth: only applies to load leak, not \"training\""}},
		{"end before start", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, start: 2h, end: 1h}\n",
			[]string{"nodes[0].pods[1].end: end 1h0m0s is not after start 2h0m0s"}},
		{"processes out of range", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 1GiB, processes: 17}\n",
			[]string{"nodes[0].pods[1].processes: 17 out of range (want 1..16)"}},
		{"memory exceeds gpu", base + "      - {namespace: ns, name: p1, gpu: 1, load: training, memory: 80GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].memory: 80GiB does not fit GPU 1 (79.37GiB usable)"}},
		{"memory exceeds instance", base + "      - {namespace: ns, name: p1, gpu: 4, instance: 2, load: training, memory: 11GiB}\n",
			[]string{"nodes[0].pods[1].memory: 11GiB does not fit MIG instance 2 of GPU 4"}},
		{"second pod on whole gpu", base + "      - {namespace: ns, name: p1, gpu: 0, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:9: nodes[0].pods[1].gpu: GPU 0 is already held by ns/p0 while this pod runs (sharing none allows one pod)"}},
		{"second pod on mig instance", base + "      - {namespace: ns, name: p1, gpu: 4, instance: 1, load: training, memory: 1GiB}\n" +
			"      - {namespace: ns, name: p2, gpu: 4, instance: 1, load: training, memory: 1GiB}\n",
			[]string{"s.yaml:10: nodes[0].pods[2].gpu: MIG instance 1 of GPU 4 is already held by ns/p1"}},
		{"too many tenants", base + "      - {namespace: ns, name: p1, gpu: 6, load: inference, memory: 1GiB}\n" +
			"      - {namespace: ns, name: p2, gpu: 6, load: inference, memory: 1GiB}\n" +
			"      - {namespace: ns, name: p3, gpu: 6, load: inference, memory: 1GiB}\n",
			[]string{"s.yaml:11: nodes[0].pods[3].gpu: GPU 6 would run 3 pods at once, more than its 2 time-slicing replicas"}},
		{"tenants memory", base + "      - {namespace: ns, name: p1, gpu: 6, load: inference, memory: 40GiB}\n" +
			"      - {namespace: ns, name: p2, gpu: 6, load: inference, memory: 40GiB}\n",
			[]string{"s.yaml:10: nodes[0].pods[2].memory: 40GiB with co-tenants' 40GiB does not fit GPU 6"}},
		{"fault gpu out of range", "nodes:\n  - name: a\n    system: l4\n    faults:\n      - {gpu: 9, kind: lost}\n",
			[]string{"s.yaml:5: nodes[0].faults[0].gpu: GPU index 9 out of range"}},
		{"fault unknown kind", "nodes:\n  - name: a\n    system: l4\n    faults:\n      - {gpu: 0, kind: melt}\n",
			[]string{`s.yaml:5: nodes[0].faults[0].kind: unknown fault kind "melt" (want lost, hang, xid)`}},
		{"xid without code", "nodes:\n  - name: a\n    system: l4\n    faults:\n      - {gpu: 0, kind: xid}\n",
			[]string{"nodes[0].faults[0].xid: required for kind xid"}},
		{"code without xid", "nodes:\n  - name: a\n    system: l4\n    faults:\n      - {gpu: 0, kind: lost, xid: 79}\n",
			[]string{"nodes[0].faults[0].xid: only applies to kind xid, not \"lost\""}},
		{"alias bomb", "seed: 1\na: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n", []string{"a: unknown field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse([]byte(tt.src), "s.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tt.want)
			}
			if sc != nil {
				t.Errorf("Parse returned a scenario with its error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func TestParseCollectsAllErrors(t *testing.T) {
	src := base +
		"      - {namespace: ns, name: p1, gpu: 1, load: trainig, memory: 1GiB}\n" +
		"      - {namespace: ns, name: p2, gpu: 2, load: training, memory: 1GiB, utilization: 2}\n"
	_, err := Parse([]byte(src), "s.yaml")
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	for _, w := range []string{"s.yaml:9: nodes[0].pods[1].load", "s.yaml:10: nodes[0].pods[2].utilization"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func TestSequentialPodsMayReuseAGPU(t *testing.T) {
	src := base +
		"      - {namespace: ns, name: a, gpu: 1, load: batch, memory: 70GiB, end: 1h}\n" +
		"      - {namespace: ns, name: b, gpu: 1, load: batch, memory: 70GiB, start: 1h, end: 2h}\n" +
		"      - {namespace: ns, name: c, gpu: 6, load: batch, memory: 70GiB, end: 1h}\n" +
		"      - {namespace: ns, name: d, gpu: 6, load: batch, memory: 70GiB, start: 1h}\n"
	if _, err := Parse([]byte(src), "s.yaml"); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(path, []byte("nodes:\n  - {name: a, system: l4x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path+":2: nodes[0].system") {
		t.Errorf("Load error = %v, want it to name %s:2", err, path)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	if _, err := Load(filepath.Join("testdata", "default.yaml")); err != nil {
		t.Errorf("Load(testdata/default.yaml): %v", err)
	}
}

func TestValidateGoBuiltScenario(t *testing.T) {
	sc := &Scenario{Nodes: []Node{{Name: "a", System: "l4", Pods: []Pod{{Namespace: "ns", Name: "p", GPU: 9, Load: LoadTraining, Memory: 1 << 30}}}}}
	err := sc.Validate()
	if err == nil || !strings.Contains(err.Error(), "scenario: nodes[0].pods[0].gpu: GPU index 9 out of range") {
		t.Errorf("Validate = %v", err)
	}
	if _, err := NewNode(sc, "a", time.Unix(0, 0)); err == nil {
		t.Error("NewNode accepted an invalid scenario")
	}
}
