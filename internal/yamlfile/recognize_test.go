package yamlfile

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestRecognize(t *testing.T) {
	known := func(k string) bool { return k == "seed" || k == "nodes" }
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"a scenario", "seed: 1\nnodes: []\n", true},
		{"a scenario with a typo besides", "seed: 1\nnodez: []\n", true},
		{"empty", "", true},
		{"empty mapping", "{}", true},
		{"shadow", "root:$6$abcdefgh$SECRETHASH1234567890:19000:0:99999:7:::\n", false},
		{"other YAML", "password: hunter2hunter2\n", false},
		{"a list", "- hunter2hunter2\n", false},
		{"a scalar", "hunter2hunter2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.data), &doc); err != nil {
				t.Fatal(err)
			}
			err := Recognize("f.yaml", "scenario", &doc, known, "seed, nodes")
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "SECRETHASH")) {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
}
