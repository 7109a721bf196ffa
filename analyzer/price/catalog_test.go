package price

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCatalogMatchesDesign checks that every product name of the table
// transcribed from DESIGN.md (testdata/mig-profiles.txt) resolves to its
// model, with MIG exactly where the table has profiles. The geometry
// itself belongs to internal/mig, whose test checks it against its own
// transcription.
func TestCatalogMatchesDesign(t *testing.T) {
	f, err := os.Open("testdata/mig-profiles.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		rows++
		cols := strings.Split(line, "|")
		key, profiles := strings.TrimSpace(cols[0]), strings.Fields(cols[2])
		for _, name := range strings.Split(cols[1], ",") {
			name = strings.TrimSpace(name)
			m, ok := LookupModel(name)
			if !ok || m.Key != key {
				t.Errorf("LookupModel(%q) = %q, %v; want %q", name, m.Key, ok, key)
				continue
			}
			var names []string
			for _, p := range m.MIG {
				if !p.MediaExtension() {
					names = append(names, fmt.Sprintf("%s:%d", p.Name, p.Instances))
				}
			}
			if !slices.Equal(names, profiles) {
				t.Errorf("%s: MIG profiles %q, want %q", key, names, profiles)
			}
		}
	}
	if rows != 10 {
		t.Errorf("read %d models from the table, want 10", rows)
	}
}

func TestLookupModel(t *testing.T) {
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"NVIDIA A100-SXM4-80GB", "A100-80GB", true},
		{"nvidia a100-sxm4-40gb", "A100-40GB", true},
		{"H100-80GB", "H100-80GB", true},
		{"NVIDIA A10G", "A10G", true},
		{"NVIDIA L40S", "L40S", true},
		{"NVIDIA L40", "", false},
		{"NVIDIA GH200 480GB", "GH200-96GB", true},
		{"NVIDIA GH200 144G HBM3e", "", false},
		{"NVIDIA A30", "A30", true},
		{"NVIDIA GB200", "", false},
		{"NVIDIA RTX A6000", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		m, ok := LookupModel(tt.name)
		if ok != tt.ok || m.Key != tt.want {
			t.Errorf("LookupModel(%q) = %q, %v; want %q, %v", tt.name, m.Key, ok, tt.want, tt.ok)
		}
	}
}
