package mig

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogMatchesTable checks the catalog against the geometry
// transcribed in testdata/profiles.txt. Compute slices come from the
// profile names ("2g." holds 2) and memory slices from the sizes, both
// derived here rather than taken from the catalog's builders.
func TestCatalogMatchesTable(t *testing.T) {
	f, err := os.Open("testdata/profiles.txt")
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
		key := strings.TrimSpace(cols[0])
		compute, _ := strconv.Atoi(strings.TrimSpace(cols[2]))
		memory, _ := strconv.Atoi(strings.TrimSpace(cols[3]))
		profiles := strings.Fields(cols[4])
		for _, name := range strings.Split(cols[1], ",") {
			name = strings.TrimSpace(name)
			m, ok := Lookup(name)
			if !ok || m.Key != key {
				t.Errorf("Lookup(%q) = %q, %v; want %q", name, m.Key, ok, key)
				continue
			}
			if m.ComputeSlices != compute || m.MemorySlices != memory {
				t.Errorf("%s: %d compute and %d memory slices, want %d and %d", key, m.ComputeSlices, m.MemorySlices, compute, memory)
			}
			if len(m.Profiles) != len(profiles) {
				t.Errorf("%s: %d profiles, want %d", key, len(m.Profiles), len(profiles))
				continue
			}
			for i, want := range profiles {
				pname, count, _ := strings.Cut(want, ":")
				instances, _ := strconv.Atoi(count)
				slices, _ := strconv.Atoi(pname[:strings.Index(pname, "g")])
				size, _, _ := strings.Cut(pname[strings.Index(pname, ".")+1:], "+")
				gbs, _ := strconv.ParseFloat(strings.TrimSuffix(size, "gb"), 64)
				memSlices := int(math.Round(gbs * 1e9 / m.MemoryBytes * float64(memory)))
				got := m.Profiles[i]
				if got.Name != pname || got.Instances != instances || got.ComputeSlices != slices ||
					got.MemorySlices != memSlices || got.MemoryBytes != gbs*1e9 ||
					got.GPUComputeSlices != compute || got.GPUMemorySlices != memory {
					t.Errorf("%s profile %d = %+v, want %s ×%d, %d/%d compute, %d/%d memory, %g GB",
						key, i, got, pname, instances, slices, compute, memSlices, memory, gbs)
				}
				if instances*slices > compute || instances*memSlices > memory {
					t.Errorf("%s: %d × %s does not fit one GPU", key, instances, pname)
				}
				if got.MediaExtension() != strings.HasSuffix(pname, "+me") || got.Whole() != (slices == compute) {
					t.Errorf("%s: %s media extension %v, whole %v", key, pname, got.MediaExtension(), got.Whole())
				}
			}
		}
	}
	if rows != len(catalog) {
		t.Errorf("read %d models from the table, the catalog has %d", rows, len(catalog))
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, name := range []string{"", "NVIDIA L4", "NVIDIA L40S", "Tesla T4", "NVIDIA A10", "NVIDIA GH200 144G HBM3e", "NVIDIA GB200", "NVIDIA RTX 6000 Ada Generation"} {
		if m, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) = %s, want no MIG geometry", name, m.Key)
		}
	}
}

func TestAmpere(t *testing.T) {
	for name, want := range map[string]bool{"NVIDIA A30": true, "NVIDIA A100-SXM4-80GB": true, "NVIDIA H100 80GB HBM3": false, "NVIDIA B200": false} {
		if m, _ := Lookup(name); m.Ampere != want {
			t.Errorf("%s: Ampere %v, want %v", name, m.Ampere, want)
		}
	}
}

func TestShares(t *testing.T) {
	a30, _ := Lookup("NVIDIA A30")
	p, _ := a30.Profile("2g.12gb")
	if p.ComputeShare() != 0.5 || p.MemoryShare() != 0.5 {
		t.Errorf("A30 2g.12gb: compute %v, memory %v; want half of each", p.ComputeShare(), p.MemoryShare())
	}
	h100, _ := Lookup("NVIDIA H100 80GB HBM3")
	p, _ = h100.Profile("3g.40gb")
	if p.ComputeShare() != 3.0/7 || p.MemoryShare() != 0.5 {
		t.Errorf("H100 3g.40gb: compute %v, memory %v; want 3/7 and 1/2", p.ComputeShare(), p.MemoryShare())
	}
}
