package recommend

import (
	"bufio"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogMatchesDesign checks the catalog against the table
// transcribed from DESIGN.md in testdata/mig-profiles.txt. Eighths and
// sevenths are derived here from the profile names, independently of the
// catalog's layout function.
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
			// The table predates the +me profiles, which right-sizing never
			// recommends; internal/mig's own test covers them.
			migs := slices.DeleteFunc(slices.Clone(m.MIG), MIGProfile.MediaExtension)
			if len(migs) != len(profiles) {
				t.Errorf("%s: %d MIG profiles, want %d", key, len(migs), len(profiles))
				continue
			}
			full := m.MemoryBytes
			for i, want := range profiles {
				pname, count, _ := strings.Cut(want, ":")
				instances, _ := strconv.Atoi(count)
				sevenths, _ := strconv.Atoi(pname[:strings.Index(pname, "g")])
				gbs, _ := strconv.ParseFloat(strings.TrimSuffix(pname[strings.Index(pname, ".")+1:], "gb"), 64)
				eighths := int(math.Round(gbs * gb / full * 8))
				got := migs[i]
				if got.Name != pname || got.Instances != instances || got.ComputeSlices != sevenths || got.GPUComputeSlices != 7 ||
					got.MemorySlices != eighths || got.GPUMemorySlices != 8 || got.MemoryBytes != gbs*gb {
					t.Errorf("%s profile %d = %+v, want %s ×%d, %d/8 memory, %d/7 compute, %g GB",
						key, i, got, pname, instances, eighths, sevenths, gbs)
				}
				if instances*sevenths > 7 || instances*eighths > 8 {
					t.Errorf("%s: %d × %s does not fit one GPU", key, instances, pname)
				}
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
