package sim

import "testing"

func TestPlaceMIG(t *testing.T) {
	h100 := systems["dgxh100"]
	tests := []struct {
		geometry []string
		ok       bool
	}{
		{[]string{"7g.80gb"}, true},
		{[]string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}, true},
		{[]string{"4g.40gb", "3g.40gb"}, true},
		{[]string{"3g.40gb", "2g.20gb", "2g.20gb"}, true},
		{[]string{"3g.40gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, true},
		{[]string{"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"}, true},
		{[]string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, true},
		{[]string{"4g.40gb", "4g.40gb"}, false},
		{[]string{"7g.80gb", "1g.10gb"}, false},
		{[]string{"2g.20gb", "2g.20gb", "2g.20gb", "2g.20gb"}, false},
	}
	for _, tt := range tests {
		var geometry []migProfile
		for _, name := range tt.geometry {
			p, ok := h100.profile(name)
			if !ok {
				t.Fatalf("no profile %s", name)
			}
			geometry = append(geometry, p)
		}
		placed, ok := placeMIG(geometry)
		if ok != tt.ok {
			t.Errorf("placeMIG(%v) ok = %v, want %v", tt.geometry, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		var used [8]bool
		ids := map[int]bool{}
		for i, p := range placed {
			if p.profile.name != tt.geometry[i] {
				t.Errorf("placeMIG(%v)[%d] = %s: order not kept", tt.geometry, i, p.profile.name)
			}
			for s := p.start; s < p.start+p.profile.memSlices; s++ {
				if used[s] {
					t.Errorf("placeMIG(%v): slice %d used twice", tt.geometry, s)
				}
				used[s] = true
			}
			if ids[p.giID] {
				t.Errorf("placeMIG(%v): GPU instance ID %d used twice", tt.geometry, p.giID)
			}
			ids[p.giID] = true
		}
	}
}

func TestSystemsCatalog(t *testing.T) {
	for name, s := range systems {
		if s.name != name || s.config.Name == "" || s.config.MemoryMB == 0 {
			t.Errorf("system %s incomplete: %+v", name, s.config)
		}
		if s.idleWatts <= 0 || s.tdpWatts <= s.idleWatts || s.maxSMClockMHz <= s.idleSMClockMHz {
			t.Errorf("system %s: implausible power or clocks", name)
		}
		for _, p := range s.migProfiles {
			if s.instanceBytes(p) == 0 || s.instanceBytes(p) > s.totalBytes() {
				t.Errorf("system %s profile %s: instance memory %d", name, p.name, s.instanceBytes(p))
			}
		}
	}
	if systems["dgxa100"].config.Name != "NVIDIA A100-SXM4-40GB" {
		t.Errorf("A100 name = %q, want the real product name", systems["dgxa100"].config.Name)
	}
}
