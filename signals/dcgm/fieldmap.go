package dcgm

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/internal/yamlfile"
)

// A FieldMap names the series of a store that hold dcgm-exporter's fields
// under names of their own: a pipeline that renames or lower-cases them,
// or dcgm-exporter's 1.x-compatible names (--use-old-namespace,
// etc/1.x-compatibility-metrics.csv: dcgm_gpu_utilization, dcgm_fb_used,
// ...). It is the YAML file of --dcgm-fields, one line a field:
//
//	DCGM_FI_DEV_GPU_UTIL: dcgm_gpu_utilization
//	DCGM_FI_DEV_FB_USED: dcgm_fb_used
//
// The key is the field's name in any era (eras.go), and its spelling says
// the unit the store's series is in: DCGM_FI_DEV_FB_USED is MiB,
// DCGM_FI_DEV_FB_USED_BYTES bytes. A mapped name is read before the
// field's own names. Only names are mapped: the series must carry
// dcgm-exporter's labels (UUID, modelName, the host label, pod).
type FieldMap struct {
	file string
	// extra is each field Key's mapped spellings.
	extra map[string][]Spelling
}

// LoadFieldMap reads the field map at path; an empty path is no map.
func LoadFieldMap(path string) (*FieldMap, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the dcgm-exporter field map: %w", err)
	}
	return ParseFieldMap(path, data)
}

// ParseFieldMap parses a field map; file names it in errors, which give
// its line and key. Nothing of a file with an error is used.
func ParseFieldMap(file string, data []byte) (*FieldMap, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return nil, fmt.Errorf("%s: empty: a field map maps at least one dcgm-exporter field, e.g. \"DCGM_FI_DEV_FB_USED: dcgm_fb_used\"", file)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: a field map is a mapping of dcgm-exporter field names to metric names, e.g. \"DCGM_FI_DEV_FB_USED: dcgm_fb_used\"", file, doc.Line)
	}
	if err := yamlfile.Recognize(file, "dcgm-exporter field map", &doc, func(k string) bool {
		// A misspelt field is still the map's own key, to be named.
		_, ok := FieldOf(k)
		return ok || strings.HasPrefix(k, "DCGM_")
	}, "dcgm-exporter field names such as DCGM_FI_DEV_FB_USED"); err != nil {
		return nil, err
	}
	m := &FieldMap{file: file, extra: map[string][]Spelling{}}
	seen := map[string]int{}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		f, ok := FieldOf(k.Value)
		if !ok || k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d: %q is not a dcgm-exporter field gpulens reads; the fields, in any era's name: %s", file, k.Line, k.Value, strings.Join(keys(), ", "))
		}
		if v.Kind != yaml.ScalarNode || !model.IsValidLegacyMetricName(v.Value) {
			return nil, fmt.Errorf("%s:%d: %s: %q is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", file, v.Line, k.Value, v.Value)
		}
		if line, dup := seen[f.Key]; dup {
			return nil, fmt.Errorf("%s:%d: %s: the field is mapped already, on line %d", file, k.Line, k.Value, line)
		}
		seen[f.Key] = k.Line
		scale := 1.0
		for _, sp := range f.Spellings {
			if sp.Name == k.Value {
				scale = sp.Scale
			}
		}
		m.extra[f.Key] = append(m.extra[f.Key], Spelling{Name: v.Value, Since: Era410 + 1, Scale: scale})
	}
	if len(m.extra) == 0 {
		return nil, fmt.Errorf("%s: empty: a field map maps at least one dcgm-exporter field", file)
	}
	return m, nil
}

// keys is every field's name before DCGM 4.7, for error messages.
func keys() []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Key)
	}
	return out
}

// File is the file the map was read from.
func (m *FieldMap) File() string {
	if m == nil {
		return ""
	}
	return m.file
}

// Mapped lists the store's names the map reads, sorted.
func (m *FieldMap) Mapped() []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, sp := range m.extra {
		for _, s := range sp {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// spellingsOf is field's spellings with the map's first.
func (m *FieldMap) spellingsOf(field string) []Spelling {
	own := spellings(field)
	if m == nil || len(m.extra[field]) == 0 {
		return own
	}
	return append(slices.Clone(m.extra[field]), own...)
}

// namesOf is every name of field, the map's first.
func (m *FieldMap) namesOf(field string) []string {
	var out []string
	for _, sp := range m.spellingsOf(field) {
		out = append(out, sp.Name)
	}
	return out
}
