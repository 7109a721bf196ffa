package dcgm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFieldMap(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantErr    string
		// sel is a field whose selection must read each of read.
		sel  string
		read []string
	}{
		{name: "1.x names", yaml: "DCGM_FI_DEV_FB_USED: dcgm_fb_used\nDCGM_FI_DEV_GPU_UTIL: dcgm_gpu_utilization\n",
			sel: FBUsed, read: []string{"dcgm_fb_used * 1048576", "DCGM_FI_DEV_FB_USED_BYTES", "DCGM_FI_DEV_FB_USED * 1048576"}},
		{name: "a byte name keeps bytes", yaml: "DCGM_FI_DEV_FB_USED_BYTES: gpu_fb_used_bytes\n",
			sel: FBUsed, read: []string{"gpu_fb_used_bytes or", "DCGM_FI_DEV_FB_USED * 1048576"}},
		{name: "percent", yaml: "DCGM_FI_DEV_GPU_UTIL: dcgm_gpu_utilization\n", sel: GPUUtil, read: []string{"dcgm_gpu_utilization / 100"}},
		{name: "unknown field", yaml: "DCGM_FI_DEV_FB_USD: dcgm_fb_used\n", wantErr: `map.yaml:1: "DCGM_FI_DEV_FB_USD" is not a dcgm-exporter field gpulens reads; the fields, in any era's name: DCGM_FI_DEV_FB_USED,`},
		{name: "bad metric name", yaml: "DCGM_FI_DEV_FB_USED: ok\nDCGM_FI_DEV_GPU_UTIL: \"gpu util\"\n", wantErr: `map.yaml:2: DCGM_FI_DEV_GPU_UTIL: "gpu util" is not a metric name`},
		{name: "twice", yaml: "DCGM_FI_DEV_FB_USED: a\nDCGM_FI_DEV_FB_USED_BYTES: b\n", wantErr: "map.yaml:2: DCGM_FI_DEV_FB_USED_BYTES: the field is mapped already, on line 1"},
		{name: "a list", yaml: "- DCGM_FI_DEV_FB_USED\n", wantErr: "map.yaml:1: a field map is a mapping"},
		{name: "empty", yaml: "", wantErr: "map.yaml: empty"},
		{name: "nested", yaml: "DCGM_FI_DEV_FB_USED: {name: x}\n", wantErr: `map.yaml:1: DCGM_FI_DEV_FB_USED: "" is not a metric name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseFieldMap("map.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if m != nil {
					t.Errorf("a map with an error was returned: %v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sel := On(tt.sel)
			sel.Fields = m
			got := sel.selector()
			for _, r := range tt.read {
				if !strings.Contains(got, r) {
					t.Errorf("selection %s does not read %q", got, r)
				}
			}
			if !strings.HasPrefix(got, "("+m.Mapped()[0]) {
				t.Errorf("selection %s does not read the mapped name first", got)
			}
		})
	}
}

func TestLoadFieldMap(t *testing.T) {
	if m, err := LoadFieldMap(""); m != nil || err != nil {
		t.Errorf("no path: %v, %v", m, err)
	}
	if _, err := LoadFieldMap(filepath.Join(t.TempDir(), "absent.yaml")); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("absent file: %v", err)
	}
	m, err := LoadFieldMap(filepath.Join("testdata", "1.x-compatibility.fields.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Mapped()); got != len(compat1x) {
		t.Errorf("the 1.x map reads %d names, want %d", got, len(compat1x))
	}
	s := Schema{Fields: m}
	if !strings.Contains(strings.Join(s.Identifying(), " "), "dcgm_fb_used") {
		t.Errorf("Identifying() = %v, without the mapped dcgm_fb_used", s.Identifying())
	}
}

func FuzzParseFieldMap(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "1.x-compatibility.fields.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("DCGM_FI_DEV_FB_USED: x\n"))
	f.Add([]byte("{a: [b, {c: d}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseFieldMap("fuzz.yaml", data)
		if err != nil {
			if m != nil || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %v with map %v", err, m)
			}
			return
		}
		for _, n := range m.Mapped() {
			if n == "" || strings.ContainsAny(n, "{}\"\n ") {
				t.Fatalf("mapped name %q", n)
			}
		}
	})
}
