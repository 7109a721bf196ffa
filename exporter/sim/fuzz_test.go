package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse proves Parse never panics and that whatever it accepts is a
// scenario the simulator can build.
func FuzzParse(f *testing.F) {
	def, err := os.ReadFile(filepath.Join("testdata", "default.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(def)
	f.Add([]byte(base))
	f.Add([]byte("nodes: [{name: a, system: l4, sharing: [{gpus: [0], mode: mps, replicas: 2}], " +
		"pods: [{namespace: n, name: p, gpu: 0, load: leak, memory: 1GiB, growth: 1GiB, end: 1d}], faults: [{gpu: 0, kind: hang}]}]"))
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("seed: 0x10\nnodes: [{name: a, system: dgxa100, sharing: [{gpus: [0], mode: mig, mig: [1g.5gb]}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if sc != nil {
				t.Fatal("Parse returned a scenario with an error")
			}
			return
		}
		if err := sc.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario Validate rejects: %v", err)
		}
		for _, n := range sc.Nodes {
			if _, err := NewNode(sc, n.Name, fixedStart); err != nil {
				t.Fatalf("NewNode(%q): %v", n.Name, err)
			}
		}
	})
}
